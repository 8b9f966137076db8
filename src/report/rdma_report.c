#include "report/rdma_report.h"

#include <inttypes.h>
#include <jansson.h>
#include <string.h>

#include "report/envelope.h"
#include "core/json_text.h"

static json_t *num_or_null(double v) {
        return v >= 0 ? json_real(v) : json_null();
}

static json_t *test_list(unsigned tests) {
        json_t *a = json_array();
        for (int t = 0; t < RDMA_TEST_COUNT; t++)
                if (tests & (1u << t))
                        json_array_append_new(a, json_string(rdma_test_name((enum rdma_test)t)));
        return a;
}

static const char *failure_name(enum rdma_failure f) {
        switch (f) {
        case RDMA_OK: return NULL;
        case RDMA_FAIL_BAD_INPUT: return "bad_input";
        case RDMA_FAIL_LIBRARY: return "library";
        case RDMA_FAIL_NO_DEVICE: return "no_device";
        case RDMA_FAIL_PORT: return "port";
        case RDMA_FAIL_MEMORY: return "memory";
        case RDMA_FAIL_PEER: return "peer";
        case RDMA_FAIL_VERBS: return "verbs";
        }
        return "unknown";
}

char *rdma_report_json(const struct rdma_report *r) {
        const struct rdma_result *res = r->res;
        const struct rdma_options *o = r->opt;
        json_t *root = envelope_new(RDMA_SCHEMA, "bench rdma");
        if (!root)
                return NULL;
        json_object_set_new(root, "role", json_string(o->server ? "server" : "client"));
        const struct rdma_plan *p = res->plan.tests ? &res->plan : &o->plan;
        json_object_set_new(root, "options",
                            json_pack("{s:o, s:I, s:I, s:i, s:i, s:i, s:i, s:f}", "tests", test_list(p->tests),
                                      "min_bytes", (json_int_t)p->min_bytes, "max_bytes", (json_int_t)p->max_bytes,
                                      "iterations", (int)p->iters, "latency_iterations", (int)p->lat_iters, "tx_depth",
                                      (int)p->tx_depth, "port", (int)o->port, "step_timeout_s", o->step_ms / 1000));
        json_t *dev = json_null();
        if (res->device[0]) {
                dev = json_object();
                json_object_set_new(dev, "name", json_text(res->device));
                json_object_set_new(dev, "port", json_integer(res->ib_port));
                json_object_set_new(dev, "link_layer", json_string(res->ethernet ? "Ethernet" : "InfiniBand"));
                json_object_set_new(dev, "lid", json_integer(res->lid));
                json_object_set_new(dev, "gid_index", res->gid_index >= 0 ? json_integer(res->gid_index) : json_null());
                json_object_set_new(dev, "gid", res->gid[0] ? json_text(res->gid) : json_null());
                json_object_set_new(dev, "roce_v2", res->ethernet ? json_boolean(res->gid_roce_v2) : json_null());
                json_object_set_new(dev, "mtu", res->mtu ? json_integer(res->mtu) : json_null());
                json_object_set_new(dev, "active_speed", json_integer(res->active_speed));
                json_object_set_new(dev, "active_width", json_integer(res->active_width));
                json_object_set_new(dev, "speed", res->have_rate ? json_string(res->rate.speed) : json_null());
                json_object_set_new(dev, "lanes", res->have_rate ? json_integer(res->rate.lanes) : json_null());
                json_object_set_new(dev, "link_signal_gbps", res->have_rate ? json_real(res->rate.signal_gbps) : json_null());
                json_object_set_new(dev, "link_data_gbps", res->have_rate ? json_real(res->rate.data_gbps) : json_null());
                json_object_set_new(dev, "rate_source", res->have_rate ? json_string(res->rate_from_sysfs ? "sysfs" : "ibv_query_port")
                                                                       : json_null());
        }
        json_object_set_new(root, "device", dev);
        json_object_set_new(root, "memory", res->memory[0] ? json_text(res->memory) : json_null());
        json_object_set_new(root, "peer", res->peer[0] ? json_text(res->peer) : json_null());
        json_object_set_new(root, "note", res->note[0] ? json_text(res->note) : json_null());
        json_object_set_new(root, "units",
                            json_pack("{s:s, s:s, s:s}", "bandwidth", "Gb/s (10^9 bit/s, perftest --report_gbits)",
                                      "bandwidth_mibps", "MiB/s (2^20 bytes/s, perftest's default MB/sec)", "latency",
                                      "usec (half the round trip, perftest's ib_write_lat)"));
        for (int t = 0; t < RDMA_TEST_COUNT; t++) {
                if (t == RDMA_TEST_WRITE_LAT) {
                        json_t *a = json_array();
                        for (size_t i = 0; i < res->n_lat; i++) {
                                const struct rdma_lat_row *x = &res->lat[i];
                                json_t *row = json_pack("{s:I, s:i}", "bytes", (json_int_t)x->bytes, "iterations", (int)x->iters);
                                json_object_set_new(row, "t_min_us", num_or_null(x->t_min_us));
                                json_object_set_new(row, "t_max_us", num_or_null(x->t_max_us));
                                json_object_set_new(row, "t_typical_us", num_or_null(x->t_typical_us));
                                json_object_set_new(row, "t_avg_us", num_or_null(x->t_avg_us));
                                json_object_set_new(row, "t_stdev_us", num_or_null(x->t_stdev_us));
                                json_object_set_new(row, "t_p99_us", num_or_null(x->t_p99_us));
                                json_object_set_new(row, "t_p99_9_us", num_or_null(x->t_p999_us));
                                json_object_set_new(row, "verified", json_boolean(x->verified));
                                json_object_set_new(row, "verify_error", x->verify_error[0] ? json_text(x->verify_error) : json_null());
                                json_array_append_new(a, row);
                        }
                        json_object_set_new(root, "write_lat", a);
                        continue;
                }
                json_t *a = json_array();
                for (size_t i = 0; i < res->n_bw; i++) {
                        const struct rdma_bw_row *x = &res->bw[i];
                        if ((int)x->test != t)
                                continue;
                        json_t *row = json_pack("{s:I, s:i}", "bytes", (json_int_t)x->bytes, "iterations", (int)x->iters);
                        json_object_set_new(row, "bw_peak_gbps", num_or_null(x->peak_gbps));
                        json_object_set_new(row, "bw_average_gbps", num_or_null(x->avg_gbps));
                        json_object_set_new(row, "bw_average_mibps",
                                            num_or_null(x->avg_gbps >= 0 ? x->avg_gbps * 1e9 / 8 / 1048576 : -1));
                        json_object_set_new(row, "msg_rate_mpps", num_or_null(x->msg_rate_mpps));
                        json_object_set_new(row, "verified", json_boolean(x->verified));
                        json_object_set_new(row, "verify_error", x->verify_error[0] ? json_text(x->verify_error) : json_null());
                        json_array_append_new(a, row);
                }
                json_object_set_new(root, rdma_test_name((enum rdma_test)t), a);
        }
        json_t *vs = json_array();
        unsigned counts[_STATUS_COUNT] = {0};
        for (size_t i = 0; i < r->n_verdicts; i++) {
                const struct rdma_verdict *v = &r->verdicts[i];
                counts[v->status]++;
                json_t *o2 = json_pack("{s:s, s:s}", "test", v->test, "status", status_name(v->status));
                json_object_set_new(o2, "bytes", v->bytes ? json_integer((json_int_t)v->bytes) : json_null());
                json_object_set_new(o2, "observed_gbps", num_or_null(v->observed_gbps));
                json_object_set_new(o2, "link_data_gbps", num_or_null(v->link_gbps));
                json_object_set_new(o2, "ratio", num_or_null(v->ratio));
                json_object_set_new(o2, "pass_ratio", v->pass_ratio > 0 ? json_real(v->pass_ratio) : json_null());
                json_object_set_new(o2, "warn_ratio", v->warn_ratio > 0 ? json_real(v->warn_ratio) : json_null());
                json_object_set_new(o2, "summary", json_text(v->summary));
                json_array_append_new(vs, o2);
        }
        json_object_set_new(root, "verdicts", vs);
        json_object_set_new(root, "rationale", r->rationale ? json_text(r->rationale) : json_null());
        const char *fname = failure_name(res->failure);
        json_object_set_new(root, "failure", fname ? json_string(fname) : json_null());
        json_object_set_new(root, "error", res->error[0] ? json_text(res->error) : json_null());
        json_object_set_new(root, "summary", envelope_summary(counts, r->verdict, r->duration_ms));
        char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        return s;
}

static const char *test_title(enum rdma_test t) {
        return t == RDMA_TEST_WRITE_BW ? "RDMA_Write BW Test" : t == RDMA_TEST_READ_BW ? "RDMA_Read BW Test"
                                                                                      : "RDMA_Write Latency Test";
}

#define RULE "---------------------------------------------------------------------------------------\n"

void rdma_report_text(FILE *out, const struct rdma_report *r, const struct text_options *t) {
        const struct rdma_result *res = r->res;
        const struct rdma_options *o = r->opt;
        const struct rdma_plan *p = res->plan.tests ? &res->plan : &o->plan;
        fprintf(out, "gpuvet bench rdma (%s)\n", o->server ? "server" : "client");
        if (res->device[0]) {
                fprintf(out, " Device         : %s port %u (%s)\n", res->device, res->ib_port,
                        res->ethernet ? (res->gid_roce_v2 ? "Ethernet, RoCE v2" : "Ethernet, RoCE") : "InfiniBand");
                if (res->have_rate && res->rate_from_sysfs)
                        fprintf(out, " Link           : %uX %s, %.4g Gb/s (sysfs ports/%u/rate)\n", res->rate.lanes,
                                res->rate.speed, res->rate.data_gbps, res->ib_port);
                else if (res->have_rate)
                        fprintf(out, " Link           : %uX %s, %.4g Gb/s signalling, %.4g Gb/s data\n", res->rate.lanes,
                                res->rate.speed, res->rate.signal_gbps, res->rate.data_gbps);
                else
                        fprintf(out, " Link           : unknown rate (active_speed %u, active_width %u)\n",
                                res->active_speed, res->active_width);
                fprintf(out, " LID / GID      : %u / %s (index %d)\n", res->lid, res->gid, res->gid_index);
                if (res->mtu)
                        fprintf(out, " MTU            : %u\n", res->mtu);
        }
        if (res->memory[0])
                fprintf(out, " Memory         : %s\n", res->memory);
        if (res->peer[0])
                fprintf(out, " Peer           : %s\n", res->peer);
        fprintf(out, " Connection     : RC, TX depth %u, %u iterations (latency: %u)\n", p->tx_depth, p->iters,
                p->lat_iters);
        for (int tt = 0; tt < RDMA_TEST_COUNT; tt++) {
                if (!(p->tests & (1u << tt)))
                        continue;
                bool any = false;
                if (tt == RDMA_TEST_WRITE_LAT) {
                        if (res->n_lat == 0)
                                continue;
                        fprintf(out, RULE " %s\n" RULE, test_title((enum rdma_test)tt));
                        fprintf(out, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                                     "t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]   data\n");
                        for (size_t i = 0; i < res->n_lat; i++) {
                                const struct rdma_lat_row *x = &res->lat[i];
                                if (x->t_avg_us < 0)
                                        fprintf(out, " %-7" PRIu64 " %-11u  (measured by the client)%*s%s\n", x->bytes,
                                                x->iters, 85, "", x->verified ? "verified" : "CORRUPT");
                                else
                                        fprintf(out, " %-7" PRIu64 " %-11u  %-13.2f  %-13.2f  %-15.2f  %-13.2f  %-14.2f  "
                                                     "%-21.2f  %-23.2f  %s\n",
                                                x->bytes, x->iters, x->t_min_us, x->t_max_us, x->t_typical_us, x->t_avg_us,
                                                x->t_stdev_us, x->t_p99_us, x->t_p999_us, x->verified ? "verified" : "CORRUPT");
                        }
                        continue;
                }
                for (size_t i = 0; i < res->n_bw; i++) {
                        const struct rdma_bw_row *x = &res->bw[i];
                        if ((int)x->test != tt)
                                continue;
                        if (!any) {
                                fprintf(out, RULE " %s\n" RULE, test_title((enum rdma_test)tt));
                                fprintf(out, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
                                             "MsgRate[Mpps]   data\n");
                                any = true;
                        }
                        if (x->avg_gbps < 0)
                                fprintf(out, " %-10" PRIu64 " %-14u (measured by the client)%*s%s\n", x->bytes, x->iters,
                                        31, "", x->verified ? "verified" : "CORRUPT");
                        else
                                fprintf(out, " %-10" PRIu64 " %-14u %-18.2f %-20.2f %-15.6f %s\n", x->bytes, x->iters,
                                        x->peak_gbps, x->avg_gbps, x->msg_rate_mpps, x->verified ? "verified" : "CORRUPT");
                }
        }
        fprintf(out, RULE);
        if (res->note[0])
                fprintf(out, " Note: %s\n", res->note);
        fprintf(out, " Gb/s are 10^9 bit/s (perftest --report_gbits; MiB/s in the JSON). Data: each size's bytes\n"
                     " checked once after its timed loop, on the side that received them.\n");
        if (res->error[0])
                fprintf(out, "\n Error: %s\n", res->error);
        fputc('\n', out);
        unsigned counts[_STATUS_COUNT] = {0};
        for (size_t i = 0; i < r->n_verdicts; i++) {
                const struct rdma_verdict *v = &r->verdicts[i];
                char g[32];
                counts[v->status]++;
                fprintf(out, "%s %-12s %s\n", report_text_glyph(v->status, t, g, sizeof(g)), v->test, v->summary);
        }
        report_text_verdict(out, t, r->verdict, counts, r->duration_ms);
}
