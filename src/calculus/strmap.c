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
        __builtin_prefetch(&map->slots[(size_t)(uint32_t)(h ^ (h >> 32)) & (map->cap - 1)]);
}

/* The 32 hash bits a slot keeps: they place the key and filter the string compares. */
static uint32_t hash32(const char *key)
{
    uint64_t h = fnv1a(key);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t erg__strmap_find(const erg__strmap *map, const char *key, erg__strmap_key_fn keyfn,
                          const void *ctx)
{
    if (map->cap == 0)
        return ERG__STRMAP_NONE;
    size_t mask = map->cap - 1;
    uint32_t h = hash32(key);
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        uint64_t v = map->slots[i];
        if (v == 0)
            return ERG__STRMAP_NONE;
        uint32_t at = (uint32_t)v - 1;
        if ((uint32_t)(v >> 32) == h && strcmp(keyfn(ctx, at), key) == 0)
            return at;
    }
}

static void place(uint64_t *slots, size_t cap, uint64_t slot)
{
    size_t mask = cap - 1;
    size_t i = (size_t)(slot >> 32) & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = slot;
}

int erg__strmap_insert(erg__strmap *map, uint32_t index, erg__strmap_key_fn keyfn, const void *ctx)
{
    if ((map->n + 1) * 2 > map->cap) {
        size_t cap = map->cap ? map->cap * 2 : 16;
        uint64_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < map->cap; i++)
            if (map->slots[i])
                place(slots, cap, map->slots[i]);
        free(map->slots);
        map->slots = slots;
        map->cap = cap;
    }
    place(map->slots, map->cap, (uint64_t)hash32(keyfn(ctx, index)) << 32 | ((uint64_t)index + 1));
    map->n++;
    return 0;
}

void erg__strmap_free(erg__strmap *map)
{
    free(map->slots);
    map->slots = NULL;
    map->cap = map->n = 0;
}
