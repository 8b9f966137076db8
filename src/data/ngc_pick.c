/* Choosing an NGC image's release (data/ngc_pick.h). */
#include "data/ngc_pick.h"

#include <stdlib.h>
#include <string.h>

/* How much help a verdict needs: lower is better; those that do not run are worst. */
static int rank(enum compat_verdict v) {
        switch (v) {
        case COMPAT_NATIVE: return 0;
        case COMPAT_MINOR: return 1;
        case COMPAT_FORWARD: return 2;
        default: return 3;
        }
}

/* Judge one release for every GPU (gpus[0..n)), keeping the worst: native < minor <
 * forward < anything that does not run. */
static void ngc_judge_release(const struct compat *c, const struct ngc_release *r, const struct compat_gpu *gpus,
                              size_t n, const char *driver, struct compat_judgement *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->verdict = COMPAT_NATIVE;
        bool first = true;
        for (size_t i = 0; i < n; i++) {
                struct compat_judgement j;
                compat_judge_ngc(c, &r->judge, &gpus[i], driver, &j);
                if (first || rank(j.verdict) > rank(ret->verdict))
                        *ret = j;
                first = false;
        }
}

void ngc_pick(const struct compat *c, const struct ngc_image *img, const struct compat_gpu *gpus, size_t n,
              const char *driver, struct ngc_pick *ret) {
        memset(ret, 0, sizeof(*ret));
        struct compat_judgement *j = calloc(img->n_releases ? img->n_releases : 1, sizeof(*j));
        if (!j)
                return; /* no pick; the caller says none runs, which a retry corrects */
        for (size_t i = 0; i < img->n_releases; i++)
                ngc_judge_release(c, &img->releases[i], gpus, n, driver, &j[i]);
        /* The newest native release; else the newest through minor-version compatibility;
         * else the newest with forward compatibility. */
        size_t best = img->n_releases;
        for (int tier = 0; tier <= 2 && best == img->n_releases; tier++)
                for (size_t i = img->n_releases; i-- > 0 && best == img->n_releases;)
                        if (rank(j[i].verdict) == tier)
                                best = i;
        if (best < img->n_releases) {
                ret->release = &img->releases[best];
                ret->how = j[best];
        }
        size_t newer_from = best < img->n_releases ? best + 1 : 0;
        for (size_t i = img->n_releases; i-- > newer_from;) {
                if (ret->n_excluded < NGC_PICK_MAX_EXCLUDED)
                        ret->excluded[ret->n_excluded++] = (struct ngc_excluded){.release = &img->releases[i], .why = j[i]};
                ret->n_excluded_total++;
        }
        free(j);
}
