/* SPDX-License-Identifier: MIT */
/* String interner: kernel names repeat thousands of times in a trace, so each is stored once. */
#include "trace_internal.h"

#include <stdlib.h>
#include <string.h>

enum { CHUNK_BYTES = 64 * 1024 };

/* Eight bytes per step, multiply and fold (kernel names run to hundreds of bytes; a byte-wise
 * FNV-1a was 3 % of reading a trace). Only this table uses it: nothing written depends on it. */
static uint32_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)len;
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
        s += 8;
        len -= 8;
    }
    uint64_t v = 0;
    memcpy(&v, s, len);
    h = (h ^ v) * 0xc4ceb9fe1a85ec53u;
    h ^= h >> 29;
    return (uint32_t)(h ^ (h >> 32));
}

void erg__strtab_init(erg__strtab *t)
{
    memset(t, 0, sizeof *t);
}

void erg__strtab_free(erg__strtab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_chunks; i++)
        free(t->chunks[i]);
    free(t->chunks);
    free(t->slots);
    free(t->str);
    free(t->len);
    free(t->hash);
    memset(t, 0, sizeof *t);
}

static uint32_t lookup(const erg__strtab *t, const char *s, size_t len, uint32_t h, size_t *slot)
{
    size_t mask = t->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t id = t->slots[i];
        if (id == ERG__NOID) {
            *slot = i;
            return ERG__NOID;
        }
        if (t->hash[id] == h && t->len[id] == len && memcmp(t->str[id], s, len) == 0)
            return id;
    }
}

static int grow_slots(erg__strtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    uint32_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, cap * sizeof *slots);
    for (size_t id = 0; id < t->n; id++) {
        size_t i = t->hash[id] & (cap - 1);
        while (slots[i] != ERG__NOID)
            i = (i + 1) & (cap - 1);
        slots[i] = (uint32_t)id;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

static char *arena_alloc(erg__strtab *t, size_t n)
{
    if (t->chunk && t->chunk_cap - t->chunk_used >= n) {
        char *p = t->chunk + t->chunk_used;
        t->chunk_used += n;
        return p;
    }
    if (t->n_chunks == t->chunks_cap) {
        size_t c = t->chunks_cap ? t->chunks_cap * 2 : 16;
        char **p = realloc(t->chunks, c * sizeof *p);
        if (!p)
            return NULL;
        t->chunks = p;
        t->chunks_cap = c;
    }
    size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
    char *c = malloc(cap);
    if (!c)
        return NULL;
    t->chunks[t->n_chunks++] = c;
    if (n > CHUNK_BYTES / 2 && t->chunk) /* a big string gets its own chunk; keep the current one */
        return c;
    t->chunk = c;
    t->chunk_cap = cap;
    t->chunk_used = n;
    return c;
}

uint32_t erg__strtab_find(const erg__strtab *t, const char *s, size_t len)
{
    if (t->cap == 0)
        return ERG__NOID;
    size_t slot;
    return lookup(t, s, len, hash_bytes(s, len), &slot);
}

uint32_t erg__strtab_intern(erg__strtab *t, const char *s, size_t len)
{
    if (len >= UINT32_MAX || t->n >= UINT32_MAX - 1)
        return ERG__NOID;
    if ((t->n + 1) * 2 > t->cap && grow_slots(t) != 0)
        return ERG__NOID;
    uint32_t h = hash_bytes(s, len);
    size_t slot;
    uint32_t id = lookup(t, s, len, h, &slot);
    if (id != ERG__NOID)
        return id;
    if (t->n == t->n_cap) {
        size_t c = t->n_cap ? t->n_cap * 2 : 256;
        char **str = realloc(t->str, c * sizeof *str);
        if (!str)
            return ERG__NOID;
        t->str = str;
        uint32_t *l = realloc(t->len, c * sizeof *l);
        if (!l)
            return ERG__NOID;
        t->len = l;
        uint32_t *hh = realloc(t->hash, c * sizeof *hh);
        if (!hh)
            return ERG__NOID;
        t->hash = hh;
        t->n_cap = c;
    }
    char *p = arena_alloc(t, len + 1);
    if (!p)
        return ERG__NOID;
    memcpy(p, s, len);
    p[len] = '\0';
    id = (uint32_t)t->n++;
    t->str[id] = p;
    t->len[id] = (uint32_t)len;
    t->hash[id] = h;
    t->slots[slot] = id;
    return id;
}
