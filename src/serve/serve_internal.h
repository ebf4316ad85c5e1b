/* SPDX-License-Identifier: MIT */
/* Private to src/serve. */
#ifndef ERG_SERVE_INTERNAL_H
#define ERG_SERVE_INTERNAL_H

#include <stddef.h>

#include "erg/serve.h"

/* A growable text buffer (sbuf.c); failed sticks once an allocation failed. */
typedef struct erg__sbuf {
    char *buf;
    size_t len, cap;
    int failed;
} erg__sbuf;

int erg__sbuf_printf(erg__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append a double-quoted, escaped Prometheus label value. */
void erg__sbuf_label(erg__sbuf *b, const char *v);

/* Render the sample-time text of e and swap it in. ERG_OK or ERG_ENOMEM. */
int erg__exporter_rerender(erg_exporter *e);

/* The root prefix for /proc: explicit, else $ERG_ROOT unless the process runs with elevated
 * privilege (secure_getenv), else "" (the host's). Written without a trailing slash. */
void erg__serve_root(const char *explicit_root, char *buf, size_t size);

/* Per-process / per-cgroup attribution of CPU-side energy by CPU time (Scaphandre's model;
 * attrib.c). */
struct erg__attrib;
int erg__attrib_new(const char *root, erg_attribute kind, size_t top, struct erg__attrib **out);
/* One interval: cpu_j is the interval's CPU-side energy (J; NaN when no figure). */
void erg__attrib_interval(struct erg__attrib *a, double cpu_j);
void erg__attrib_render(const struct erg__attrib *a, erg__sbuf *b);
void erg__attrib_free(struct erg__attrib *a);

#endif
