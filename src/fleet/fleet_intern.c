#include "fleet/fleet_intern.h"
#include "core/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s) {
        uint64_t h = 1469598103934665603ull; /* FNV-1a */
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ull;
        return h;
}

static int rehash(struct fleet_intern *t, size_t n_slots) {
        uint32_t *slots = calloc(n_slots, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        for (size_t id = 0; id < t->n; id++) {
                size_t i = hash(t->keys[id]) & (n_slots - 1);
                while (slots[i])
                        i = (i + 1) & (n_slots - 1);
                slots[i] = (uint32_t)id + 1;
        }
        free(t->slots);
        t->slots = slots;
        t->n_slots = n_slots;
        return 0;
}

long fleet_intern_id(struct fleet_intern *t, const char *key) {
        if ((t->n + 1) * 2 > t->n_slots && rehash(t, t->n_slots ? t->n_slots * 2 : 64) < 0)
                return -ENOMEM;
        size_t i = hash(key) & (t->n_slots - 1);
        for (; t->slots[i]; i = (i + 1) & (t->n_slots - 1))
                if (strcmp(t->keys[t->slots[i] - 1], key) == 0)
                        return (long)t->slots[i] - 1;
        if (array_grow((void **)&t->keys, t->n, &t->cap, sizeof(*t->keys), 32) < 0)
                return -ENOMEM;
        t->keys[t->n] = key;
        t->slots[i] = (uint32_t)t->n + 1;
        return (long)t->n++;
}

void fleet_intern_free(struct fleet_intern *t) {
        free(t->keys);
        free(t->slots);
        memset(t, 0, sizeof(*t));
}
