/* SPDX-License-Identifier: MIT */
#include "calculus/strmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

uint64_t erg__strmap_hash(const char *key)
{
    return fnv1a(key);
}

void erg__strmap_prefetch(const erg__strmap *map, uint64_t h)
{
    if (map->cap)
        __builtin_prefetch(&map->slots[(size_t)h & (map->cap - 1)]);
}

uint32_t erg__strmap_find(const erg__strmap *map, const char *key, erg__strmap_key_fn keyfn,
                          const void *ctx)
{
    if (map->cap == 0)
        return ERG__STRMAP_NONE;
    size_t mask = map->cap - 1;
    for (size_t i = (size_t)fnv1a(key) & mask;; i = (i + 1) & mask) {
        uint32_t v = map->slots[i];
        if (v == 0)
            return ERG__STRMAP_NONE;
        if (strcmp(keyfn(ctx, v - 1), key) == 0)
            return v - 1;
    }
}

static void place(uint32_t *slots, size_t cap, uint32_t index, const char *key)
{
    size_t mask = cap - 1;
    size_t i = (size_t)fnv1a(key) & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = index + 1;
}

int erg__strmap_insert(erg__strmap *map, uint32_t index, erg__strmap_key_fn keyfn, const void *ctx)
{
    if ((map->n + 1) * 2 > map->cap) {
        size_t cap = map->cap ? map->cap * 2 : 16;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < map->cap; i++)
            if (map->slots[i])
                place(slots, cap, map->slots[i] - 1, keyfn(ctx, map->slots[i] - 1));
        free(map->slots);
        map->slots = slots;
        map->cap = cap;
    }
    place(map->slots, map->cap, index, keyfn(ctx, index));
    map->n++;
    return 0;
}

void erg__strmap_free(erg__strmap *map)
{
    free(map->slots);
    map->slots = NULL;
    map->cap = map->n = 0;
}
