/* SPDX-License-Identifier: MIT */
#include "calculus/strmap.h"
#include "calculus/graph.h"

#include <stdlib.h>
#include <string.h>

/* Eight bytes at a time, each folded in by a multiply and a shift, then a final avalanche
 * (splitmix64's finaliser): a handful of multiplies for a typical node id, against one per byte
 * for FNV-1a. Keys of 1 to 8 bytes are read whole (two overlapping 4-byte loads, or three single
 * bytes), so that distinct keys of one length give distinct words before the mix. */
uint32_t erg__strmap_hashn(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)n * 0xff51afd7ed558ccdULL);
    for (; n > 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        w = (uint64_t)a << 32 | b;
    } else if (n > 0) {
        w = (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[n / 2] << 8 |
            (uint64_t)(unsigned char)s[n - 1];
    }
    h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 29;
    return (uint32_t)(h ^ (h >> 32));
}

/* Whether the stored key k (NUL-terminated, perhaps shorter than len) is the len bytes at key
 * (none of them NUL). Never reads k past its NUL: a short k ends in a mismatch. A short key is
 * compared inline, byte by byte, which costs less than a call for the few bytes of a node id. */
static int key_equal(const char *k, const char *key, size_t len)
{
    if (len > 16)
        return strncmp(k, key, len) == 0 && k[len] == '\0';
    for (size_t i = 0; i < len; i++)
        if (k[i] != key[i])
            return 0;
    return k[len] == '\0';
}

void erg__strmap_prefetch(const erg__strmap *map, uint32_t h)
{
    if (map->cap)
        __builtin_prefetch(&map->slots[(size_t)h & (map->cap - 1)]);
}

uint32_t erg__strmap_find_h(const erg__strmap *map, const char *key, size_t len, uint32_t h,
                            erg__strmap_key_fn keyfn, const void *ctx)
{
    if (map->cap == 0)
        return ERG__STRMAP_NONE;
    size_t mask = map->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        uint64_t v = map->slots[i];
        if (v == 0)
            return ERG__STRMAP_NONE;
        uint32_t at = (uint32_t)v - 1;
        if ((uint32_t)(v >> 32) == h && key_equal(keyfn(ctx, at), key, len))
            return at;
    }
}

uint32_t erg__strmap_find(const erg__strmap *map, const char *key, erg__strmap_key_fn keyfn,
                          const void *ctx)
{
    if (map->cap == 0)
        return ERG__STRMAP_NONE;
    size_t len = strlen(key);
    return erg__strmap_find_h(map, key, len, erg__strmap_hashn(key, len), keyfn, ctx);
}

static void place(uint64_t *slots, size_t cap, uint64_t slot)
{
    size_t mask = cap - 1;
    size_t i = (size_t)(slot >> 32) & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = slot;
}

int erg__strmap_insert_h(erg__strmap *map, uint32_t index, uint32_t h)
{
    if ((map->n + 1) * 2 > map->cap) {
        size_t cap = map->cap ? map->cap * 2 : 16;
        /* A large table on 2 MiB pages: its probes are random, and on 4 KiB pages most of
         * them would miss the TLB as well as the cache. */
        uint64_t *slots = erg__graph_alloc(cap * sizeof *slots, 1);
        if (!slots)
            return -1;
        for (size_t i = 0; i < map->cap; i++)
            if (map->slots[i])
                place(slots, cap, map->slots[i]);
        free(map->slots);
        map->slots = slots;
        map->cap = cap;
    }
    place(map->slots, map->cap, (uint64_t)h << 32 | ((uint64_t)index + 1));
    map->n++;
    return 0;
}

int erg__strmap_insert(erg__strmap *map, uint32_t index, erg__strmap_key_fn keyfn, const void *ctx)
{
    const char *key = keyfn(ctx, index);
    return erg__strmap_insert_h(map, index, erg__strmap_hashn(key, strlen(key)));
}

void erg__strmap_free(erg__strmap *map)
{
    free(map->slots);
    map->slots = NULL;
    map->cap = map->n = 0;
}
