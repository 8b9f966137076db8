/* Figures that are not finite numbers reach a JSON report as null: jansson refuses NaN and
 * the infinities, and a json_pack of one returned NULL, so a bench measurement whose mean
 * was 0 (a coefficient of variation of NaN) lost its whole "stats" object. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/bench_json.h"
#include "core/json_real.h"

static void test_json_real_or_null(void **state) {
        (void)state;
        const double not_finite[] = {NAN, INFINITY, -INFINITY};
        for (size_t i = 0; i < sizeof(not_finite) / sizeof(not_finite[0]); i++) {
                json_t *j = json_real_or_null(not_finite[i]);
                assert_true(json_is_null(j));
                json_decref(j);
        }
        json_t *j = json_real_or_null(1.5);
        assert_true(json_is_real(j));
        assert_true(json_real_value(j) == 1.5);
        json_decref(j);
        j = json_real_or_null(-0.0);
        assert_true(json_is_real(j));
        json_decref(j);
}

/* Three samples of 0: the mean is 0, the coefficient of variation NaN. */
static void test_measurement_stats_with_nan(void **state) {
        (void)state;
        double samples[] = {0, 0, 0};
        struct measurement m = {.samples = samples, .n_samples = 3, .verified = true};
        strcpy(m.bench, "memory");
        strcpy(m.name, "triad");
        strcpy(m.subject, "host");
        strcpy(m.unit, "GB/s");
        m.stats.n = 3;
        m.stats.cv = NAN;
        m.stats.max = INFINITY;
        json_t *o = bench_json_measurement(&m);
        assert_non_null(o);
        json_t *stats = json_object_get(o, "stats");
        assert_true(json_is_object(stats));
        assert_true(json_is_null(json_object_get(stats, "cv")));
        assert_true(json_is_null(json_object_get(stats, "max")));
        assert_true(json_is_real(json_object_get(stats, "mean")));
        assert_int_equal(json_integer_value(json_object_get(stats, "n")), 3);
        char *text = json_dumps(o, JSON_COMPACT);
        assert_non_null(text);
        assert_non_null(strstr(text, "\"cv\":null"));
        free(text);
        json_decref(o);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_json_real_or_null),
                cmocka_unit_test(test_measurement_stats_with_nan),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
