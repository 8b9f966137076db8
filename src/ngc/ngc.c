/* gpuvet ngc's logic apart from its commands: the catalogue and the compatibility table it
 * stands on, the node's GPUs and driver as the judging wants them, and an IMAGE[:TAG]
 * operand resolved against the catalogue (ngc/ngc.h). */
#include "ngc/ngc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/exit.h"
#include "core/strbuf.h"
#include "data/gpudb.h"
#include "report/detect_report.h"
#include "sys/facts.h"

int ngc_data_load(const char *cmd, const char *data_dir, struct ngc_data *d) {
        memset(d, 0, sizeof(*d));
        char err[512];
        int r = compat_load(data_dir, &d->compat, err, sizeof(err));
        if (r == 0 && (r = ngcdb_load(data_dir, d->compat, &d->db, err, sizeof(err))) < 0)
                d->compat = compat_free(d->compat);
        if (r < 0) {
                fprintf(stderr, "gpuvet %s: %s\n", cmd, r == -ENOMEM ? "out of memory loading the data files" : err);
                return r == -ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        return 0;
}

void ngc_data_done(struct ngc_data *d) {
        d->db = ngcdb_free(d->db);
        d->compat = compat_free(d->compat);
}

int ngc_node_read(const char *cmd, const struct facts *f, const struct ngc_data *d, const char *for_driver,
                  char *driver_buf, size_t driver_size, struct ngc_node *node) {
        memset(node, 0, sizeof(*node));
        if (for_driver) {
                struct detect_for_driver planned;
                char err[256];
                if (detect_resolve_driver(d->compat, for_driver, &planned, err, sizeof(err)) < 0) {
                        fprintf(stderr, "gpuvet %s: --for-driver: %s\n", cmd, err);
                        return EXIT_USAGE;
                }
                snprintf(driver_buf, driver_size, "%s", planned.version);
                snprintf(node->driver_from, sizeof(node->driver_from), "--for-driver %s", for_driver);
        } else if (f->nvidia.have_version) {
                snprintf(driver_buf, driver_size, "%s", f->nvidia.driver_version);
                snprintf(node->driver_from, sizeof(node->driver_from), "loaded");
        } else {
                fprintf(stderr, "gpuvet %s: no NVIDIA driver is loaded (/proc/driver/nvidia/version): name the driver "
                                "to judge for with --for-driver VERSION or BRANCH\n",
                        cmd);
                return EXIT_USAGE;
        }
        node->driver = driver_buf;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct gpu_model *m = f->gpus.gpus[i].model;
                const struct gpu_arch *arch = m ? gpudb_arch(f->db, m->arch) : NULL;
                if (!m || !arch) {
                        node->n_unknown++;
                        continue;
                }
                size_t k = 0;
                while (k < node->n && strcmp(node->names[k], m->name))
                        k++;
                if (k == node->n) {
                        if (node->n == NGC_MAX_MODELS)
                                continue;
                        node->gpus[k] = (struct compat_gpu){.cc_major = m->cc_major, .cc_minor = m->cc_minor,
                                                            .datacenter = m->datacenter, .arch = arch,
                                                            .min_driver = m->min_driver};
                        node->names[k] = m->name;
                        node->n++;
                }
                node->counts[k]++;
        }
        if (node->n == 0) {
                fprintf(stderr, "gpuvet %s: %s: the releases are judged for the node's GPUs\n", cmd,
                        node->n_unknown ? "no GPU of this node is in gpuvet's GPU table (gpus.json)"
                                        : "no NVIDIA GPU on the PCI bus");
                return EXIT_USAGE;
        }
        return 0;
}

static void known_images(const struct ngcdb *db, char *buf, size_t size) {
        buf[0] = '\0';
        for (size_t i = 0; i < db->n_images; i++)
                strbuf_appendf(buf, size, "%s%s", i ? ", " : "", db->images[i].name);
}

static void known_releases(const struct ngc_image *img, char *buf, size_t size) {
        buf[0] = '\0';
        for (size_t i = 0; i < img->n_releases; i++)
                strbuf_appendf(buf, size, "%s%s", i ? ", " : "", img->releases[i].tag);
}

int ngc_resolve(const char *cmd, const struct ngcdb *db, const char *arg, const struct ngc_image **ret_img,
                const struct ngc_release **ret_rel) {
        *ret_img = NULL;
        *ret_rel = NULL;
        char name[256];
        snprintf(name, sizeof(name), "%s", arg);
        char *colon = strrchr(name, ':');
        const char *tag = NULL;
        if (colon && !strchr(colon, '/')) {
                *colon = '\0';
                tag = colon + 1;
        }
        const struct ngc_image *img = NULL;
        for (size_t i = 0; i < db->n_images && !img; i++)
                if (strcmp(db->images[i].name, name) == 0 || strcmp(db->images[i].repository, name) == 0)
                        img = &db->images[i];
        char list[2048];
        if (!img) {
                known_images(db, list, sizeof(list));
                fprintf(stderr, "gpuvet %s: unknown image \"%s\" (known: %s)\n", cmd, name, list);
                return EXIT_USAGE;
        }
        if (tag) {
                const struct ngc_release *r = ngc_image_release(img, tag);
                if (!r) {
                        known_releases(img, list, sizeof(list));
                        fprintf(stderr, "gpuvet %s: %s has no release \"%s\" in the catalogue (known: %s)\n", cmd,
                                img->name, tag, list);
                        return EXIT_USAGE;
                }
                *ret_rel = r;
        }
        *ret_img = img;
        return 0;
}

void ngc_ref(const struct ngc_image *img, const struct ngc_release *r, char *buf, size_t size) {
        snprintf(buf, size, "%s:%s", img->repository, r->tag);
}

