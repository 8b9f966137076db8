/* sys/nvml_events: the event path through a hand-made struct nvml_lib of stub functions.
 *
 * The stubs model up to 4 GPUs. Each GPU has its supported event types (or an error from
 * nvmlDeviceGetSupportedEventTypes) and a registration answer; nvmlEventSetWait_v2 hands
 * out a queue of events the test fills, else sleeps its timeout and answers TIMEOUT, or
 * answers a given error, or blocks at a gate until the test opens it (a wedged GPU).
 * Hung stubs are released at the end of the test so that their late return also runs
 * under ASan: an abandoned worker must touch only its own memory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timescale.h"
#include "core/deadline.h"
#include "sys/nvml_events.h"
#include "bindings/nvml.h"
#include "sys/xid.h"

#define MAX_GPUS 4
#define MAX_QUEUE 256

static struct {
        unsigned long long supported[MAX_GPUS];
        nvmlReturn_t supported_rc[MAX_GPUS];
        nvmlReturn_t register_rc[MAX_GPUS];  /* answered to any registration ... */
        bool refuse_ecc[MAX_GPUS];           /* ... or NOT_SUPPORTED while ECC types are asked */
        nvmlReturn_t wait_rc;                /* non-zero: every wait answers it at once */
        int wait_rc_gpu;                     /* data.device of that answer (-1: none) */
        bool wait_hang;                      /* waits block at the gate */
        bool register_hang_gpu1;
        bool create_fails;
} cfg;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static nvmlEventData_t queue[MAX_QUEUE];
static unsigned int q_head, q_tail;
static unsigned long long registered[MAX_GPUS];
static atomic_uint inits, shutdowns, creates, frees, waits;

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static void gate_wait(void) {
        pthread_mutex_lock(&gate_mu);
        while (!gate_open)
                pthread_cond_wait(&gate_cv, &gate_mu);
        pthread_mutex_unlock(&gate_mu);
}

static void gate_set(bool open) {
        pthread_mutex_lock(&gate_mu);
        gate_open = open;
        pthread_cond_broadcast(&gate_cv);
        pthread_mutex_unlock(&gate_mu);
}

/* Open the gate, wait until every worker thread is gone, close the gate. */
static void drain(void) {
        gate_set(true);
        for (int i = 0; i < 5000 && deadline_threads_alive() > 0; i++) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
        }
        assert_int_equal(deadline_threads_alive(), 0);
        gate_set(false);
}

#define DEV_BASE 0x1000u
#define SET_VALUE ((nvmlEventSet_t)(uintptr_t)0x5e7)
static nvmlDevice_t dev_of(unsigned int i) {
        return (nvmlDevice_t)(uintptr_t)(DEV_BASE + i);
}
static int gpu_of(nvmlDevice_t d) {
        uintptr_t v = (uintptr_t)d;
        return v >= DEV_BASE && v < DEV_BASE + MAX_GPUS ? (int)(v - DEV_BASE) : -1;
}

static unsigned long long now_ms(void) {
        return deadline_now_ms();
}

static void sleep_ms(unsigned int ms) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
                ;
}

static void push(unsigned int gpu, unsigned long long type, unsigned long long data, unsigned int gi) {
        pthread_mutex_lock(&mu);
        assert_true(q_tail < MAX_QUEUE);
        queue[q_tail++] = (nvmlEventData_t){
                .device = dev_of(gpu), .eventType = type, .eventData = data, .gpuInstanceId = gi, .computeInstanceId = gi};
        pthread_mutex_unlock(&mu);
}

/* --- the stubs, named as NVML's functions ---------------------------------------------- */

static nvmlReturn_t nvmlInit_v2(void) {
        atomic_fetch_add(&inits, 1);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlShutdown(void) {
        atomic_fetch_add(&shutdowns, 1);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types) {
        int g = gpu_of(d);
        if (g < 0 || !types)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (cfg.supported_rc[g] != NVML_SUCCESS)
                return cfg.supported_rc[g];
        *types = cfg.supported[g];
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
        atomic_fetch_add(&creates, 1);
        if (cfg.create_fails)
                return NVML_ERROR_MEMORY;
        *set = SET_VALUE;
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set) {
        int g = gpu_of(d);
        if (g < 0 || set != SET_VALUE)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (g == 1 && cfg.register_hang_gpu1)
                gate_wait();
        if (cfg.register_rc[g] != NVML_SUCCESS)
                return cfg.register_rc[g];
        if (cfg.refuse_ecc[g] && (types & (nvmlEventTypeDoubleBitEccError | nvmlEventTypeSingleBitEccError)))
                return NVML_ERROR_NOT_SUPPORTED;
        pthread_mutex_lock(&mu);
        registered[g] |= types;
        pthread_mutex_unlock(&mu);
        return NVML_SUCCESS;
}
static nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
        atomic_fetch_add(&waits, 1);
        if (set != SET_VALUE || !data)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (cfg.wait_hang) {
                gate_wait();
                /* The late answer writes its output, as NVML would: into the worker's locals. */
                memset(data, 0xab, sizeof(*data));
                return NVML_SUCCESS;
        }
        if (cfg.wait_rc != NVML_SUCCESS) {
                data->device = cfg.wait_rc_gpu >= 0 ? dev_of((unsigned int)cfg.wait_rc_gpu) : NULL;
                return cfg.wait_rc;
        }
        pthread_mutex_lock(&mu);
        if (q_head < q_tail) {
                *data = queue[q_head++];
                pthread_mutex_unlock(&mu);
                return NVML_SUCCESS;
        }
        pthread_mutex_unlock(&mu);
        sleep_ms(timeoutms);
        return NVML_ERROR_TIMEOUT;
}
static nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
        atomic_fetch_add(&frees, 1);
        return set == SET_VALUE ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

static struct nvml_lib stub_lib(void) {
        struct nvml_lib lib;
        memset(&lib, 0, sizeof(lib));
        lib.nvmlInit_v2 = nvmlInit_v2;
        lib.nvmlShutdown = nvmlShutdown;
        lib.nvmlDeviceGetSupportedEventTypes = nvmlDeviceGetSupportedEventTypes;
        lib.nvmlEventSetCreate = nvmlEventSetCreate;
        lib.nvmlDeviceRegisterEvents = nvmlDeviceRegisterEvents;
        lib.nvmlEventSetWait_v2 = nvmlEventSetWait_v2;
        lib.nvmlEventSetFree = nvmlEventSetFree;
        return lib;
}

/* --- facts and records ------------------------------------------------------------------ */

static const char *const addr_of_gpu[MAX_GPUS] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:c3:00.0"};

static struct nvml_gpu gpus[MAX_GPUS];
static struct nvml_facts facts;

/* n GPUs, all with a handle and a bus id, all supporting every event type. */
static void reset(unsigned int n) {
        memset(&cfg, 0, sizeof(cfg));
        cfg.wait_rc_gpu = -1;
        memset(gpus, 0, sizeof(gpus));
        memset(&facts, 0, sizeof(facts));
        memset(registered, 0, sizeof(registered));
        q_head = q_tail = 0;
        atomic_store(&inits, 0);
        atomic_store(&shutdowns, 0);
        atomic_store(&creates, 0);
        atomic_store(&frees, 0);
        atomic_store(&waits, 0);
        for (unsigned int i = 0; i < n; i++) {
                cfg.supported[i] = 0xf;
                gpus[i].index = i;
                gpus[i].device = dev_of(i);
                gpus[i].handle = (struct nv_u32){.state = NV_OK, .fn = "nvmlDeviceGetHandleByIndex_v2"};
                gpus[i].pci_bus_id.state = NV_OK;
                snprintf(gpus[i].pci_bus_id.v, sizeof(gpus[i].pci_bus_id.v), "%s", addr_of_gpu[i]);
        }
        facts.initialized = true;
        facts.init_state = NVML_INIT_OK;
        facts.n_gpus = n;
        facts.gpus = gpus;
}

static struct {
        struct nvml_event r[2 * MAX_QUEUE];
        unsigned int n;
} got;

static void collect(const struct nvml_event *e, void *userdata) {
        assert_ptr_equal(userdata, &got);
        assert_true(got.n < sizeof(got.r) / sizeof(got.r[0]));
        got.r[got.n++] = *e;
}

static void clear_got(void) {
        memset(&got, 0, sizeof(got));
}

static unsigned int count_kind(enum nvml_event_kind k) {
        unsigned int n = 0;
        for (unsigned int i = 0; i < got.n; i++)
                n += got.r[i].kind == k;
        return n;
}

static const struct nvml_event *find_kind(enum nvml_event_kind k, int gpu) {
        for (unsigned int i = 0; i < got.n; i++)
                if (got.r[i].kind == k && got.r[i].gpu == gpu)
                        return &got.r[i];
        return NULL;
}

static struct nvml_deadlines short_deadlines(void) {
        return (struct nvml_deadlines){.call_ms = 150, .init_ms = 150};
}

/* --- tests ------------------------------------------------------------------------------ */

static void test_delivered(void **state) {
        (void)state;
        reset(4);
        struct nvml_lib lib = stub_lib();
        struct nvml_events *ev = NULL;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        assert_non_null(ev);
        assert_int_equal(nvml_events_registered(ev), 4);
        for (unsigned int i = 0; i < 4; i++) {
                assert_int_equal(registered[i], NVML_EVENTS_DEFAULT_TYPES);
                assert_int_equal(nvml_events_types_of(ev, i), NVML_EVENTS_DEFAULT_TYPES);
        }
        assert_int_equal(atomic_load(&inits), 1);
        assert_int_equal(atomic_load(&creates), 1);

        push(3, nvmlEventTypeXidCriticalError, 79, 0xFFFFFFFFu);
        push(0, nvmlEventTypeDoubleBitEccError, 0, 0xFFFFFFFFu);
        push(1, nvmlEventTypeXidCriticalError, 13, 2);
        push(2, nvmlEventTypeSingleBitEccError, 0, 0xFFFFFFFFu);
        clear_got();
        int64_t before = 0;
        struct timespec ts;
        clock_gettime(CLOCK_BOOTTIME, &ts);
        before = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
        unsigned long long t0 = now_ms();
        /* Returns as soon as something came: the queued burst in one call, not after 2 s. */
        assert_int_equal(nvml_events_poll(ev, 2000, collect, &got), 4);
        assert_true(now_ms() - t0 < SCALED_MS(1000));
        assert_int_equal(got.n, 4);
        assert_int_equal(got.r[0].kind, NVML_EVENT_XID);
        assert_int_equal(got.r[0].gpu, 3);
        assert_string_equal(got.r[0].addr, "0000:c3:00.0");
        assert_int_equal(got.r[0].data, 79);
        assert_int_equal(got.r[0].type, nvmlEventTypeXidCriticalError);
        assert_int_equal(got.r[0].rc, NVML_SUCCESS);
        assert_string_equal(got.r[0].fn, "nvmlEventSetWait_v2");
        assert_int_equal(got.r[0].gpu_instance_id, 0xFFFFFFFFu);
        assert_true(got.r[0].usec >= before);
        assert_true(got.r[0].wall_usec > 1600000000LL * 1000000LL);
        assert_int_equal(got.r[1].kind, NVML_EVENT_ECC_DBE);
        assert_string_equal(got.r[1].addr, "0000:18:00.0");
        assert_int_equal(got.r[2].kind, NVML_EVENT_XID);
        assert_int_equal(got.r[2].data, 13);
        assert_int_equal(got.r[2].gpu_instance_id, 2);
        assert_int_equal(got.r[3].kind, NVML_EVENT_ECC_SBE);
        assert_int_equal(got.r[3].gpu, 2);

        /* As a kernel-log record, to be judged with sys/xid.c's. */
        struct xid_event x;
        assert_int_equal(nvml_event_to_xid(&got.r[0], &x), 0);
        assert_string_equal(x.addr, "0000:c3:00.0");
        assert_int_equal(x.code, 79);
        assert_int_equal(x.usec, got.r[0].usec);
        assert_string_equal(x.text, "NVML event");
        assert_int_equal(nvml_event_to_xid(&got.r[1], &x), -EINVAL);

        /* Nothing queued: waits the whole ms, TIMEOUT is no event. */
        clear_got();
        t0 = now_ms();
        assert_int_equal(nvml_events_poll(ev, 120, collect, &got), 0);
        assert_true(now_ms() - t0 >= 110);
        assert_int_equal(got.n, 0);

        /* An event of a device NVML did not list to us still comes, naming no GPU. */
        push(0, 0x8000, 5, 0xFFFFFFFFu);
        queue[q_tail - 1].device = (nvmlDevice_t)(uintptr_t)0x9999;
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 500, collect, &got), 1);
        assert_int_equal(got.r[0].kind, NVML_EVENT_OTHER);
        assert_int_equal(got.r[0].gpu, -1);
        assert_string_equal(got.r[0].addr, "");
        assert_int_equal(got.r[0].type, 0x8000);

        assert_false(nvml_events_abandoned(ev));
        assert_false(nvml_events_stop(ev));
        assert_int_equal(atomic_load(&frees), 1);
        assert_int_equal(atomic_load(&shutdowns), 1);
        assert_false(nvml_events_stop(NULL));
        assert_int_equal(deadline_threads_alive(), 0);
}

static void test_batch(void **state) {
        (void)state;
        reset(1);
        struct nvml_lib lib = stub_lib();
        struct nvml_events *ev = NULL;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        for (unsigned int i = 0; i < 100; i++)
                push(0, nvmlEventTypeXidCriticalError, 31, 0xFFFFFFFFu);
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 1000, collect, &got), (int)NVML_EVENTS_BATCH);
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 1000, collect, &got), 100 - (int)NVML_EVENTS_BATCH);
        assert_int_equal(count_kind(NVML_EVENT_XID), 100 - NVML_EVENTS_BATCH);
        assert_false(nvml_events_stop(ev));
}

static void test_not_supported(void **state) {
        (void)state;
        reset(4);
        struct nvml_lib lib = stub_lib();
        cfg.supported_rc[1] = NVML_ERROR_NOT_SUPPORTED; /* no events at all */
        cfg.supported[2] = nvmlEventTypePState;           /* events, none of ours */
        cfg.refuse_ecc[3] = true;                          /* lists ECC, refuses it: keeps Xid */
        struct nvml_events *ev = NULL;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        assert_int_equal(nvml_events_registered(ev), 2);
        assert_int_equal(nvml_events_types_of(ev, 0), NVML_EVENTS_DEFAULT_TYPES);
        assert_int_equal(nvml_events_types_of(ev, 1), 0);
        assert_int_equal(nvml_events_types_of(ev, 2), 0);
        assert_int_equal(nvml_events_types_of(ev, 3), nvmlEventTypeXidCriticalError);
        assert_int_equal(registered[1], 0);
        assert_int_equal(registered[2], 0);

        /* Said once: at the first poll, not again. */
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 30, collect, &got), 2);
        assert_int_equal(got.n, 2);
        const struct nvml_event *e = find_kind(NVML_EVENT_UNSUPPORTED, 1);
        assert_non_null(e);
        assert_string_equal(e->fn, "nvmlDeviceGetSupportedEventTypes");
        assert_int_equal(e->rc, NVML_ERROR_NOT_SUPPORTED);
        assert_string_equal(e->addr, "0000:2a:00.0");
        e = find_kind(NVML_EVENT_UNSUPPORTED, 2);
        assert_non_null(e);
        assert_int_equal(e->rc, NVML_SUCCESS);
        assert_int_equal(e->data, nvmlEventTypePState);
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 30, collect, &got), 0);
        assert_false(nvml_events_stop(ev));

        /* No GPU with events: nothing to wait for, said at once. */
        reset(2);
        cfg.supported_rc[0] = NVML_ERROR_NOT_SUPPORTED;
        cfg.supported_rc[1] = NVML_ERROR_NOT_SUPPORTED;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        assert_int_equal(nvml_events_registered(ev), 0);
        clear_got();
        unsigned long long t0 = now_ms();
        assert_int_equal(nvml_events_poll(ev, 5000, collect, &got), -ENODEV);
        assert_true(now_ms() - t0 < SCALED_MS(1000));
        assert_int_equal(count_kind(NVML_EVENT_UNSUPPORTED), 2);
        assert_int_equal(atomic_load(&waits), 0);
        assert_false(nvml_events_stop(ev));
        assert_int_equal(atomic_load(&frees), 1);
        assert_int_equal(atomic_load(&shutdowns), 1);

        /* A library without the event functions: one notice, nothing registered. */
        reset(2);
        lib.nvmlEventSetWait_v2 = NULL;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), -ENODEV);
        assert_int_equal(got.n, 1);
        assert_int_equal(got.r[0].kind, NVML_EVENT_ERROR);
        assert_int_equal(got.r[0].gpu, -1);
        assert_string_equal(got.r[0].fn, "nvmlEventSetWait_v2");
        assert_int_equal(got.r[0].rc, NVML_ERROR_FUNCTION_NOT_FOUND);
        assert_int_equal(atomic_load(&creates), 0);
        assert_false(nvml_events_stop(ev));
        assert_int_equal(atomic_load(&shutdowns), 1); /* its own reference, released */

        /* No nvmlDeviceGetSupportedEventTypes (old library): Xid alone is tried. */
        reset(1);
        lib = stub_lib();
        lib.nvmlDeviceGetSupportedEventTypes = NULL;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        assert_int_equal(nvml_events_types_of(ev, 0), nvmlEventTypeXidCriticalError);
        assert_false(nvml_events_stop(ev));

        /* Creating the set fails. */
        reset(1);
        cfg.create_fails = true;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), -ENODEV);
        assert_int_equal(got.n, 1);
        assert_string_equal(got.r[0].fn, "nvmlEventSetCreate");
        assert_int_equal(got.r[0].rc, NVML_ERROR_MEMORY);
        assert_false(nvml_events_stop(ev));
        assert_int_equal(atomic_load(&frees), 0);
        assert_int_equal(atomic_load(&shutdowns), 1);

        /* Facts without NVML: refused. */
        reset(1);
        facts.initialized = false;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), -EINVAL);
        assert_null(ev);
        assert_int_equal(nvml_events_start(NULL, &facts, NULL, 0, &ev), -EINVAL);
        assert_int_equal(nvml_event_kind_name(NVML_EVENT_GPU_LOST)[0], 'g');
}

static void test_gpu_lost(void **state) {
        (void)state;
        reset(4);
        struct nvml_lib lib = stub_lib();
        /* GPU 1 fell off the bus while running: NVML still hands out its handle and
         * registers it, every query answers GPU_IS_LOST (and so does its bus id). */
        cfg.supported_rc[1] = NVML_ERROR_GPU_IS_LOST;
        gpus[1].pci_bus_id = (struct nv_str){.state = NV_ERROR, .rc = NVML_ERROR_GPU_IS_LOST, .fn = "nvmlDeviceGetPciInfo_v3"};
        /* GPU 2 was lost before: no handle. */
        gpus[2].handle = (struct nv_u32){.state = NV_ERROR, .rc = NVML_ERROR_GPU_IS_LOST, .fn = "nvmlDeviceGetHandleByIndex_v2"};
        gpus[2].device = NULL;
        /* GPU 3 lost, and registration refused too. */
        cfg.supported_rc[3] = NVML_ERROR_GPU_IS_LOST;
        cfg.register_rc[3] = NVML_ERROR_GPU_IS_LOST;

        struct nvml_events *ev = NULL;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        assert_int_equal(nvml_events_types_of(ev, 1), nvmlEventTypeXidCriticalError);
        assert_int_equal(nvml_events_types_of(ev, 2), 0);
        assert_int_equal(nvml_events_types_of(ev, 3), 0);
        assert_int_equal(nvml_events_registered(ev), 2);

        push(1, nvmlEventTypeXidCriticalError, 79, 0xFFFFFFFFu);
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 500, collect, &got), 4);
        assert_int_equal(count_kind(NVML_EVENT_GPU_LOST), 3); /* once each */
        const struct nvml_event *e = find_kind(NVML_EVENT_GPU_LOST, 1);
        assert_non_null(e);
        assert_string_equal(e->fn, "nvmlDeviceGetSupportedEventTypes");
        assert_string_equal(e->addr, "");
        e = find_kind(NVML_EVENT_GPU_LOST, 2);
        assert_non_null(e);
        assert_string_equal(e->fn, "nvmlDeviceGetHandleByIndex_v2");
        assert_string_equal(e->addr, "0000:3a:00.0");
        assert_non_null(find_kind(NVML_EVENT_GPU_LOST, 3));
        e = find_kind(NVML_EVENT_XID, 1);
        assert_non_null(e);
        assert_int_equal(e->data, 79);
        assert_string_equal(e->addr, "");

        /* Now every wait answers GPU_IS_LOST at once: said once per GPU, and the poll
         * still takes its time (a loop around it does not spin). */
        cfg.wait_rc = NVML_ERROR_GPU_IS_LOST;
        cfg.wait_rc_gpu = 0;
        clear_got();
        unsigned long long t0 = now_ms();
        assert_int_equal(nvml_events_poll(ev, 100, collect, &got), 1);
        assert_true(now_ms() - t0 >= 90);
        assert_int_equal(got.r[0].kind, NVML_EVENT_GPU_LOST);
        assert_int_equal(got.r[0].gpu, 0);
        assert_string_equal(got.r[0].fn, "nvmlEventSetWait_v2");
        clear_got();
        t0 = now_ms();
        for (int i = 0; i < 3; i++)
                assert_int_equal(nvml_events_poll(ev, 40, collect, &got), 0);
        assert_true(now_ms() - t0 >= 110);
        assert_int_equal(got.n, 0);
        /* ... one naming no GPU of ours, once too; GPU 1 was already said. */
        cfg.wait_rc_gpu = -1;
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), 1);
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), 0);
        cfg.wait_rc_gpu = 1;
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), 0);
        assert_int_equal(got.n, 1);
        assert_int_equal(got.r[0].gpu, -1);

        /* Another failure: said once in a row, again after a success in between. */
        cfg.wait_rc = NVML_ERROR_UNKNOWN;
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), 1);
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), 0);
        cfg.wait_rc = NVML_SUCCESS;
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), 0);
        cfg.wait_rc = NVML_ERROR_UNKNOWN;
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), 1);
        assert_int_equal(count_kind(NVML_EVENT_ERROR), 2);
        assert_int_equal(got.r[0].rc, NVML_ERROR_UNKNOWN);

        assert_false(nvml_events_stop(ev));
        assert_int_equal(atomic_load(&frees), 1);
        assert_int_equal(atomic_load(&shutdowns), 1);
}

static void test_wait_hangs(void **state) {
        (void)state;
        reset(2);
        struct nvml_lib lib = stub_lib();
        struct nvml_deadlines dl = short_deadlines();
        struct nvml_events *ev = NULL;
        assert_int_equal(nvml_events_start(&lib, &facts, &dl, 0, &ev), 0);
        cfg.wait_hang = true;
        push(0, nvmlEventTypeXidCriticalError, 48, 0xFFFFFFFFu);

        clear_got();
        unsigned long long t0 = now_ms();
        /* The wait may take its 100 ms plus the 150 ms call deadline, not for ever. */
        assert_int_equal(nvml_events_poll(ev, 100, collect, &got), -ETIMEDOUT);
        unsigned long long dt = now_ms() - t0;
        assert_true(dt >= 240);
        assert_true(dt < SCALED_MS(1500));
        assert_int_equal(got.n, 1);
        assert_int_equal(got.r[0].kind, NVML_EVENT_HUNG);
        assert_string_equal(got.r[0].fn, "nvmlEventSetWait_v2");
        assert_true(got.r[0].elapsed_ms >= 240);
        assert_true(nvml_events_abandoned(ev));
        assert_int_equal(deadline_threads_alive(), 1);

        /* From now on no call: */
        unsigned int w = atomic_load(&waits);
        clear_got();
        t0 = now_ms();
        assert_int_equal(nvml_events_poll(ev, 1000, collect, &got), -ETIMEDOUT);
        assert_true(now_ms() - t0 < SCALED_MS(100));
        assert_int_equal(got.n, 0);
        assert_int_equal(atomic_load(&waits), w);
        /* stop frees nothing NVML holds and makes no call: the caller must _exit. */
        assert_true(nvml_events_stop(ev));
        assert_int_equal(atomic_load(&frees), 0);
        assert_int_equal(atomic_load(&shutdowns), 0);

        /* The stuck wait comes back after all: it writes only its own memory. */
        drain();
}

static void test_register_hangs(void **state) {
        (void)state;
        reset(3);
        struct nvml_lib lib = stub_lib();
        struct nvml_deadlines dl = short_deadlines();
        cfg.register_hang_gpu1 = true;
        struct nvml_events *ev = NULL;
        unsigned long long t0 = now_ms();
        assert_int_equal(nvml_events_start(&lib, &facts, &dl, 0, &ev), 0);
        assert_true(now_ms() - t0 < SCALED_MS(1500));
        assert_true(nvml_events_abandoned(ev));
        assert_int_equal(nvml_events_types_of(ev, 0), NVML_EVENTS_DEFAULT_TYPES);
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 100, collect, &got), -ETIMEDOUT);
        const struct nvml_event *e = find_kind(NVML_EVENT_HUNG, 1);
        assert_non_null(e);
        assert_string_equal(e->fn, "nvmlDeviceRegisterEvents");
        assert_string_equal(e->addr, "0000:2a:00.0");
        assert_true(nvml_events_stop(ev));
        assert_int_equal(atomic_load(&frees), 0);
        assert_int_equal(atomic_load(&shutdowns), 0);
        drain();
}

static void test_facts_hung_gpu(void **state) {
        (void)state;
        reset(2);
        struct nvml_lib lib = stub_lib();
        /* GPU 1's gather hung: a thread may still be inside NVML for it, leave it alone. */
        gpus[1].timed_out = true;
        gpus[1].timeout_fn = "nvmlDeviceGetPowerUsage";
        struct nvml_events *ev = NULL;
        assert_int_equal(nvml_events_start(&lib, &facts, NULL, 0, &ev), 0);
        assert_int_equal(nvml_events_registered(ev), 1);
        assert_int_equal(registered[1], 0);
        clear_got();
        assert_int_equal(nvml_events_poll(ev, 10, collect, &got), 1);
        assert_int_equal(got.r[0].kind, NVML_EVENT_ERROR);
        assert_int_equal(got.r[0].gpu, 1);
        assert_int_equal(got.r[0].rc, NVML_ERROR_TIMEOUT);
        assert_string_equal(got.r[0].fn, "nvmlDeviceGetPowerUsage");
        assert_false(nvml_events_stop(ev));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_delivered),
                cmocka_unit_test(test_batch),
                cmocka_unit_test(test_not_supported),
                cmocka_unit_test(test_gpu_lost),
                cmocka_unit_test(test_facts_hung_gpu),
                cmocka_unit_test(test_wait_hangs),
                cmocka_unit_test(test_register_hangs),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
