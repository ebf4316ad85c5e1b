/* SPDX-License-Identifier: MIT */
/* Private: libraries loaded on demand (dlopen), the one seam for every library that only some
 * commands need (cairo for plots, GLPK for the frontier LP, libmicrohttpd for the exporter).
 *
 * Why: an energy meter must not perturb what it measures. Linked, these libraries and what they
 * pull in (X11, fontconfig, freetype, GnuTLS, SuiteSparse, ...) were mapped and relocated by every
 * erg process, `erg measure -- true` included (issue 13). Loaded here, a process maps a library
 * only when a command first needs it, and a host without it runs every other command.
 *
 * Shape: a user lists the functions it calls in an X-macro, declares a table of typed pointers
 * (ERG__DYNLIB_FIELD, the types taken from the library's own header with __typeof__, so the
 * header stays the single source of the prototypes) and a bind function (ERG__DYNLIB_BIND), and
 * calls erg__dynlib_load before its first call. The first attempt's outcome is kept: later callers
 * get the same table or the same error without retrying. Thread-safe (a mutex per library).
 *
 * Errors: ERG_ENOLIB (the CLI's exit status 3: something the host lacks, as for NVML) with
 * diag->where the soname and diag->detail naming what erg needs it for, the Debian package that
 * provides it, and dlerror's text or the missing symbol. */
#ifndef ERG_CORE_DYNLIB_H
#define ERG_CORE_DYNLIB_H

#include <pthread.h>
#include <stddef.h>

#include "erg/error.h"

/* One library loaded on demand; define it static with ERG__DYNLIB_INIT. */
struct erg__dynlib {
    const char *soname;     /* the run-time name dlopen is given ("libcairo.so.2") */
    const char *needed_for; /* what erg needs it for, named in the error ("plots") */
    const char *package;    /* the Debian package that provides it ("libcairo2") */
    pthread_mutex_t mu;
    int tried, status;
    char detail[192];
};
#define ERG__DYNLIB_INIT(soname, needed_for, package)                                              \
    {                                                                                              \
        (soname), (needed_for), (package), PTHREAD_MUTEX_INITIALIZER, 0, ERG_OK, ""                \
    }

/* Binds the table from an open handle: ERG_OK, or ERG_ENOLIB with *missing the first symbol the
 * library lacks. Written with ERG__DYNLIB_BIND over the user's X-macro. */
typedef int (*erg__dynlib_bind_fn)(void *handle, void *table, const char **missing);

/* Load lib (once) and bind table with bind. ERG_OK: table is filled and stays valid for the
 * process's life (the library is never closed). ERG_ENOLIB: diag says which library, why and the
 * package to install. */
int erg__dynlib_load(struct erg__dynlib *lib, erg__dynlib_bind_fn bind, void *table,
                     erg_diag *diag);

/* Store symbol name of handle into the function pointer at fn (fn_size bytes, the size of a
 * function pointer). Returns 1, or 0 when the library lacks it. */
int erg__dynlib_sym(void *handle, const char *name, void *fn, size_t fn_size);

/* A table field for function f, typed by the library's own prototype. */
#define ERG__DYNLIB_FIELD(f) __typeof__(f) *f;
/* One line of a bind function whose table is `t` and out-parameter `missing`. */
#define ERG__DYNLIB_BIND(f)                                                                        \
    if (!erg__dynlib_sym(handle, #f, &t->f, sizeof t->f)) {                                        \
        *missing = #f;                                                                             \
        return ERG_ENOLIB;                                                                         \
    }

#endif
