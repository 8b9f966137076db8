#include "bench/nccl_job.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/cuda_raw.h"
#include "bench/runner.h"
#include "core/deadline.h"
#include "core/run_command.h"
#include "core/write_fd.h"

#define REC_MAGIC 0x4e43434cu /* "NCCL" */
#define LOG_TAIL 8192
#define GRACE_MS 2000

/* REC_ID: the child is ready to join the job (rank 0's carries the id it made). */
enum rec_kind { REC_INFO = 1, REC_ID, REC_BEGIN, REC_ROW, REC_ERROR };

/* The child's messages: the parent is the same binary, so a plain struct is the format. */
struct rec {
        uint32_t magic;
        uint32_t kind;
        union {
                struct nccl_job_info info;
                struct {
                        enum nccl_coll coll;
                        bool in_place;
                        size_t bytes;
                } begin;
                struct nccl_row row;
                unsigned char id[COLL_ID_BYTES];
                char error[1024];
        } u;
};

static void send_rec(int fd, struct rec *r) {
        r->magic = REC_MAGIC;
        if (write_fd_all(fd, r, sizeof(*r)) < 0)
                _exit(3); /* the parent is gone */
}

static void send_error(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void send_error(int fd, const char *fmt, ...) {
        struct rec r = {.kind = REC_ERROR};
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r.u.error, sizeof(r.u.error), fmt, ap);
        va_end(ap);
        send_rec(fd, &r);
}

static void sink_begin(void *ctx, enum nccl_coll coll, bool in_place, size_t bytes) {
        struct rec r = {.kind = REC_BEGIN};
        r.u.begin.coll = coll;
        r.u.begin.in_place = in_place;
        r.u.begin.bytes = bytes;
        send_rec(*(int *)ctx, &r);
}

static void sink_row(void *ctx, const struct nccl_row *row) {
        struct rec r = {.kind = REC_ROW};
        r.u.row = *row;
        send_rec(*(int *)ctx, &r);
}

/* The child: everything that touches CUDA and NCCL. Exits 0 after the sweep, 1 after an
 * error it reported. */
/* Rank 0: the id made here goes to the parent, which hands it to the other ranks; every rank
 * then reads the job's id back from the parent (EOF: the rendezvous failed, and the parent
 * says why). */
static int exchange_id(struct coll_lib *lib, int rank, int fd, int id_fd, unsigned char id[COLL_ID_BYTES], char *err,
                       size_t errsize) {
        static struct rec r;
        r = (struct rec){.kind = REC_ID};
        if (rank == 0) {
                int rc = coll_unique_id(lib, r.u.id);
                if (rc < 0) {
                        snprintf(err, errsize, "%s", coll_lib_error(lib));
                        return rc;
                }
        }
        send_rec(fd, &r);
        size_t have = 0;
        while (have < COLL_ID_BYTES) {
                ssize_t got = read(id_fd, id + have, COLL_ID_BYTES - have);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0) {
                        snprintf(err, errsize, "the rendezvous failed");
                        return -EPROTO;
                }
                have += (size_t)got;
        }
        return 0;
}

static void child_main(const struct nccl_job_spec *spec, int fd, int id_fd) {
        static struct rec info_rec; /* large: not on the stack */
        char err[1024];
        const struct dev_ops *ops;
        struct dev_backend *dev;
        if (bench_open_backend("cuda", &ops, &dev, err, sizeof(err)) < 0) {
                send_error(fd, "NCCL runs on CUDA devices: %s", err);
                _exit(1);
        }
        int count = ops->count(dev);
        struct nccl_ranks ranks = {.ops = ops, .dev = dev};
        int devices[NCCL_RUN_MAX_LOCAL];
        int n = spec->gpus ? (int)spec->n_gpus : count;
        if (n > NCCL_RUN_MAX_LOCAL)
                n = NCCL_RUN_MAX_LOCAL;
        for (int i = 0; i < n; i++) {
                devices[i] = spec->gpus ? spec->gpus[i] : i;
                if (devices[i] >= count) {
                        send_error(fd, "no CUDA device %d: this process sees %d", devices[i], count);
                        _exit(1);
                }
        }
        if (n < 1) {
                send_error(fd, "no CUDA device to run on");
                _exit(1);
        }
        if (spec->multi_process) {
                /* one device per rank: the only one visible (srun --gpus-per-task=1,
                 * CUDA_VISIBLE_DEVICES per rank), else the local rank's */
                if (n > 1 && spec->local_rank >= n) {
                        send_error(fd,
                                   "rank %d is local rank %d on its node but sees %d CUDA devices: give each rank one "
                                   "(srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES) or list them with --gpus",
                                   spec->rank, spec->local_rank, n);
                        _exit(1);
                }
                devices[0] = devices[n > 1 ? spec->local_rank : 0];
                n = 1;
        }
        struct nccl_job_info *info = &info_rec.u.info;
        for (int i = 0; i < n; i++) {
                struct dev_info di;
                if (ops->info(dev, devices[i], &di) < 0 || ops->ctx_open(dev, devices[i], &ranks.ctx[i]) < 0) {
                        send_error(fd, "CUDA device %d: %s", devices[i], ops->last_error(dev));
                        _exit(1);
                }
                snprintf(info->bus_ids[i], sizeof(info->bus_ids[i]), "%s", di.pci_bus_id);
                snprintf(info->device_name, sizeof(info->device_name), "%s", di.name);
                info->cuda_index[i] = devices[i];
        }
        if (coll_lib_open(&ranks.lib, err, sizeof(err)) < 0) {
                send_error(fd, "%s", err);
                _exit(1);
        }
        ranks.n_local = n;
        int rc;
        if (spec->multi_process) {
                unsigned char id[COLL_ID_BYTES];
                void *stream;
                ranks.nranks = spec->nranks;
                ranks.nprocs = spec->nranks;
                if ((rc = exchange_id(ranks.lib, spec->rank, fd, id_fd, id, err, sizeof(err))) < 0) {
                        send_error(fd, "%s", err);
                        _exit(1);
                }
                /* the CUDA runtime inside NCCL takes the current context's device */
                if (cuda_ctx_stream(ranks.ctx[0], &stream) < 0) {
                        send_error(fd, "CUDA device %d: %s", devices[0], ops->last_error(dev));
                        _exit(1);
                }
                rc = coll_init_rank(ranks.lib, id, spec->nranks, spec->rank, devices[0], &ranks.comm[0]);
        } else {
                ranks.nranks = n;
                ranks.nprocs = 1;
                rc = coll_init_all(ranks.lib, devices, n, ranks.comm);
        }
        if (rc < 0) {
                send_error(fd, "%s", coll_lib_error(ranks.lib));
                _exit(1);
        }
        coll_lib_describe(ranks.lib, info->library, sizeof(info->library));
        info->nranks = ranks.nranks;
        info->nprocs = ranks.nprocs;
        info->n_local = n;
        info_rec.kind = REC_INFO;
        send_rec(fd, &info_rec);

        struct nccl_run_sink sink = {.begin = sink_begin, .row = sink_row, .ctx = &fd};
        rc = nccl_run(spec->run, &ranks, &sink, err, sizeof(err));
        if (rc < 0) {
                send_error(fd, "%s", err);
                for (int i = 0; i < n; i++)
                        coll_comm_abort(ranks.comm[i]);
                _exit(1);
        }
        for (int i = 0; i < n; i++)
                if (coll_comm_destroy(ranks.comm[i]) < 0) {
                        send_error(fd, "%s", coll_lib_error(ranks.lib));
                        _exit(1);
                }
        for (int i = 0; i < n; i++)
                ops->ctx_close(ranks.ctx[i]);
        _exit(0);
}

struct child_arg {
        const struct nccl_job_spec *spec;
        int logfd;
        int id_fd; /* the read end of the parent's pipe for the job's id; -1 alone */
};

/* In the child: its output to the capture file, then the work. */
static void child_body(const void *varg, int fd) {
        const struct child_arg *arg = varg;
        if (dup2(arg->logfd, STDOUT_FILENO) < 0 || dup2(arg->logfd, STDERR_FILENO) < 0)
                _exit(3);
        /* NCCL's warnings are what explains a failure; INFO would drown them */
        setenv("NCCL_DEBUG", "WARN", 0);
        child_main(arg->spec, fd, arg->id_fd);
}

static int add_row(struct nccl_job_result *res, const struct nccl_row *row) {
        struct nccl_row *grown = realloc(res->rows, (res->n_rows + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        res->rows = grown;
        res->rows[res->n_rows++] = *row;
        return 0;
}

static void take_rec(struct nccl_job_result *res, const struct rec *r) {
        switch (r->kind) {
        case REC_INFO:
                res->info = r->u.info;
                res->have_info = true;
                break;
        case REC_BEGIN:
                res->have_step = true;
                res->step_coll = r->u.begin.coll;
                res->step_in_place = r->u.begin.in_place;
                res->step_bytes = r->u.begin.bytes;
                break;
        case REC_ROW:
                if (add_row(res, &r->u.row) < 0 && !res->failed) {
                        res->failed = true;
                        snprintf(res->error, sizeof(res->error), "out of memory");
                }
                res->have_step = false;
                break;
        case REC_ERROR:
                res->failed = true;
                snprintf(res->error, sizeof(res->error), "%s", r->u.error);
                break;
        default:
                break;
        }
}

/* The capture file's last LOG_TAIL bytes, from the start of a line. */
static char *read_log(int fd) {
        off_t end = lseek(fd, 0, SEEK_END);
        if (end <= 0)
                return NULL;
        off_t from = end > LOG_TAIL ? end - LOG_TAIL : 0;
        size_t len = (size_t)(end - from);
        char *buf = malloc(len + 1);
        if (!buf)
                return NULL;
        ssize_t got = pread(fd, buf, len, from);
        if (got <= 0) {
                free(buf);
                return NULL;
        }
        buf[got] = '\0';
        char *start = buf;
        if (from > 0 && (start = strchr(buf, '\n')) != NULL)
                start++;
        else
                start = buf;
        memmove(buf, start, strlen(start) + 1);
        return buf;
}

static void stop_child(pid_t pid, int *wstatus) {
        kill(-pid, SIGTERM);
        kill(pid, SIGTERM);
        if (child_reap(pid, GRACE_MS, wstatus))
                return;
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        (void)child_reap(pid, 5000, wstatus);
}

int nccl_job_run(const struct nccl_job_spec *spec, struct nccl_job_result *res) {
        *res = (struct nccl_job_result){0};
        double start = monotonic_ms();
        const char *tmp = getenv("TMPDIR");
        char path[512];
        snprintf(path, sizeof(path), "%s/gpuvet-nccl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int logfd = mkostemp(path, O_CLOEXEC);
        if (logfd < 0) {
                int e = errno;
                snprintf(res->error, sizeof(res->error), "cannot create a file for NCCL's output in %s: %s",
                         tmp && *tmp ? tmp : "/tmp", strerror(e));
                res->failed = true;
                return -e;
        }
        unlink(path);
        int idpipe[2] = {-1, -1};
        if (spec->multi_process && pipe2(idpipe, O_CLOEXEC) < 0) {
                int e = errno;
                close(logfd);
                snprintf(res->error, sizeof(res->error), "cannot create a pipe: %s", strerror(e));
                res->failed = true;
                return -e;
        }
        struct child_arg arg = {.spec = spec, .logfd = logfd, .id_fd = idpipe[0]};
        int readfd;
        pid_t pid = spawn_watched(child_body, &arg, &readfd);
        if (idpipe[0] >= 0)
                close(idpipe[0]);
        if (pid < 0) {
                if (idpipe[1] >= 0)
                        close(idpipe[1]);
                close(logfd);
                snprintf(res->error, sizeof(res->error), "cannot start the benchmark process: %s", strerror((int)-pid));
                res->failed = true;
                return (int)pid;
        }

        static struct rec rec; /* one record in the making: large, so not on the stack */
        size_t have = 0;
        double last_progress = start;
        double end = spec->timeout_s ? start + spec->timeout_s * 1e3 : 0;
        bool eof = false;
        while (!eof) {
                double now = monotonic_ms();
                double hang_at = last_progress + (spec->hang_s ? spec->hang_s : 60) * 1e3;
                if (now >= hang_at) {
                        res->hung = true;
                        break;
                }
                if (end && now >= end) {
                        res->timed_out = true;
                        break;
                }
                double wait = hang_at - now;
                if (end && end - now < wait)
                        wait = end - now;
                struct pollfd p = {.fd = readfd, .events = POLLIN};
                int pr = poll(&p, 1, wait > 1000 ? 1000 : (int)wait + 1);
                if (pr < 0 && errno != EINTR)
                        break;
                if (pr <= 0)
                        continue;
                ssize_t got = read(readfd, (char *)&rec + have, sizeof(rec) - have);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0) {
                        eof = true;
                        break;
                }
                have += (size_t)got;
                if (have < sizeof(rec))
                        continue;
                have = 0;
                last_progress = monotonic_ms();
                if (rec.magic != REC_MAGIC) {
                        res->failed = true;
                        snprintf(res->error, sizeof(res->error), "untrustworthy report from the benchmark process");
                        break;
                }
                if (rec.kind == REC_ID) {
                        /* the rendezvous: rank 0 publishes the child's id, the others get it */
                        char err[512];
                        int rc = spec->share_id(spec->share_ctx, rec.u.id, err, sizeof(err));
                        if (rc < 0) {
                                res->failed = true;
                                snprintf(res->error, sizeof(res->error), "%s", err);
                                break;
                        }
                        res->joined = true;
                        if (write(idpipe[1], rec.u.id, COLL_ID_BYTES) != COLL_ID_BYTES) {
                                res->failed = true;
                                snprintf(res->error, sizeof(res->error), "the benchmark process is gone");
                                break;
                        }
                        last_progress = monotonic_ms();
                        continue;
                }
                take_rec(res, &rec);
        }
        if (idpipe[1] >= 0)
                close(idpipe[1]);
        close(readfd);
        int wstatus = 0;
        if (eof) {
                double left = end ? end - monotonic_ms() : 5000;
                if (!child_reap(pid, left > 0 ? (unsigned)left : 0, &wstatus))
                        stop_child(pid, &wstatus);
        } else {
                stop_child(pid, &wstatus);
        }
        res->duration_ms = monotonic_ms() - start;
        if (res->hung || res->timed_out) {
                res->failed = true;
                char step[96] = "";
                if (res->have_step)
                        snprintf(step, sizeof(step), "%s %zu bytes %s: ", nccl_coll_name(res->step_coll), res->step_bytes,
                                 res->step_in_place ? "in place" : "out of place");
                if (res->hung)
                        snprintf(res->error, sizeof(res->error),
                                 "%sno progress for %u s: a collective that never completes (a peer that never "
                                 "came, a misconfigured fabric, a wedged GPU); the benchmark process was killed",
                                 step, spec->hang_s ? spec->hang_s : 60);
                else
                        snprintf(res->error, sizeof(res->error), "%stimed out after %u s; the benchmark process was killed",
                                 step, spec->timeout_s);
        } else if (!res->failed && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)) {
                res->failed = true;
                if (WIFSIGNALED(wstatus))
                        snprintf(res->error, sizeof(res->error), "the benchmark process died of signal %d (%s)",
                                 WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
                else
                        snprintf(res->error, sizeof(res->error), "the benchmark process exited with status %d",
                                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
        }
        res->log = read_log(logfd);
        close(logfd);
        return 0;
}

void nccl_job_result_done(struct nccl_job_result *r) {
        free(r->rows);
        free(r->log);
        *r = (struct nccl_job_result){0};
}
