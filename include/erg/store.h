/* SPDX-License-Identifier: MIT */
/**
 * erg/store.h - a signature store: characterized energy signatures kept in one SQLite file, keyed
 * by name, so that `erg measure --signature`, `erg trace` rules and schedules can name signatures
 * measured once and reused (the reuse the energy calculus is for: "Energy Calculus",
 * arXiv 2607.11087, Sections 1 and 4.4, step 5 "Reuse").
 *
 * Default file: $ERG_STORE, else $XDG_DATA_HOME/erg/signatures.db, else
 * ~/.local/share/erg/signatures.db. One row per name; putting a name again replaces its signature
 * and keeps the previous one in history (erg_store_history).
 *
 * Thread safety: one erg_store per thread. SQLite serialises writers across processes; a busy
 * database is retried for up to 5 s.
 */
#ifndef ERG_STORE_H
#define ERG_STORE_H

#include <stddef.h>

#include "erg/error.h"
#include "erg/signature.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "erg/api.h"

/** Opaque handle on an open store. */
typedef struct erg_store erg_store;

/**
 * Path of the default store into buf of *size bytes, from $ERG_STORE, $XDG_DATA_HOME (an absolute
 * value) or $HOME as above (libuv's uv_os_homedir rule, as every erg default-path function):
 * ERG_OK and *size = the path's length; ERG_ERANGE when it does not fit, buf untouched and *size =
 * the bytes needed (NUL included); ERG_ENOENT when no variable is set; ERG_EINVAL for NULL.
 */
ERG_API ERG_NODISCARD int erg_store_default_path(char *buf, size_t *size);

/** How erg_store_open opens a store. */
enum {
    ERG_STORE_READONLY =
        0,                /**< read only (SQLITE_OPEN_READONLY): list, get, history; never writes */
    ERG_STORE_CREATE = 1, /**< read-write, creating the file and its folder when absent (put) */
    ERG_STORE_READWRITE = 2 /**< read-write, the store must exist (rm) */
};

/**
 * Open the store at path in mode (ERG_STORE_READONLY, ERG_STORE_CREATE, ERG_STORE_READWRITE).
 * Nothing is written unless the file is already an erg store or mode is ERG_STORE_CREATE and the
 * file does not exist: an existing empty file, a SQLite database without erg's tables, a
 * non-regular file are refused unchanged. A lock held by another process is waited for (10 s by
 * default, erg_store_set_wait), then ERG_EBUSY.
 * Errors: ERG_EINVAL (unknown mode; not a regular file; an empty file; a foreign database; diag
 * names the file), ERG_ENOENT (missing and mode is not ERG_STORE_CREATE), ERG_EACCES, ERG_EBUSY,
 * ERG_EIO (not SQLite, or corrupt), ERG_EVERSION (a newer schema).
 * Schema versions: erg-store/2 (this erg) keeps each signature's measurement flags in a "flags"
 * column beside its JSON. An erg-store/1 file (earlier erg) is read as it is when opened
 * ERG_STORE_READONLY, and upgraded in place (one transaction: the column added with '' for the
 * old rows, which held no flags, and the format tag) when opened for writing; an erg that knows
 * only erg-store/1 then refuses it with its ERG_EVERSION.
 */
ERG_API ERG_NODISCARD int erg_store_open(const char *path, int mode, erg_store **out,
                                         erg_diag *diag);

/** erg_store_open with the wait of erg_store_set_wait given from the start, so that a lock met
 *  while the store is being opened is waited for and told too. Errors as erg_store_open. */
ERG_API ERG_NODISCARD int erg_store_open_wait(const char *path, int mode, double timeout_s,
                                              void (*waiting)(void *ud, const char *path), void *ud,
                                              erg_store **out, erg_diag *diag);

/**
 * How long a lock held by another process is waited for (timeout_s ≥ 0; default 10 s), and a
 * callback told once, with the store's path, when a wait passes 1 s (so a command can say it
 * waits; NULL: silent). NULL-safe. Not thread-safe with other calls on the same store.
 */
ERG_API void erg_store_set_wait(erg_store *store, double timeout_s,
                                void (*waiting)(void *ud, const char *path), void *ud);

/**
 * Group writes into one transaction: after erg_store_begin, puts and removes are kept until
 * erg_store_end(store, 1, ...) commits them all, or erg_store_end(store, 0, ...) (or a failed
 * commit) leaves the store as it was. Returns ERG_OK, ERG_EINVAL (a transaction is already open /
 * none is open), ERG_EBUSY, ERG_EACCES (a read-only store), ERG_EIO.
 */
ERG_API ERG_NODISCARD int erg_store_begin(erg_store *store, erg_diag *diag);
/** Commit (commit != 0) or roll back the writes since erg_store_begin. See erg_store_begin. */
ERG_API ERG_NODISCARD int erg_store_end(erg_store *store, int commit, erg_diag *diag);

/** Close a store. NULL-safe. */
ERG_API void erg_store_close(erg_store *store);

/**
 * Store sig under sig->name (must be non-empty); an existing, different entry of that name moves to
 * history (storing an identical signature again changes nothing).
 * The signature must pass erg_signature_check. Errors: ERG_EINVAL, ERG_EIO.
 */
ERG_API ERG_NODISCARD int erg_store_put(erg_store *store, const erg_signature *sig, erg_diag *diag);

/** Fetch the current signature named name. Errors: ERG_ENOENT (no such name), ERG_EIO. */
ERG_API ERG_NODISCARD int erg_store_get(erg_store *store, const char *name, erg_signature *out,
                                        erg_diag *diag);

/**
 * A signature resolver (erg_signature_resolver in erg/trace.h) over a store: ud is an open
 * erg_store, or NULL for the default store (erg_store_default_path), opened read-only for the call.
 * Errors: ERG_ENOENT (no store, or no such name: diag says which), those of erg_store_open and
 * erg_store_get.
 */
ERG_API ERG_NODISCARD int erg_store_signature_resolver(void *ud, const char *name,
                                                       erg_signature *out, erg_diag *diag);

/** Remove name and its history. Errors: ERG_ENOENT, ERG_EIO. */
ERG_API ERG_NODISCARD int erg_store_remove(erg_store *store, const char *name, erg_diag *diag);

/**
 * Call fn(ud, sig) for every current signature, ordered by name; fn returning non-zero stops the
 * walk and that value is returned. Errors: ERG_EIO.
 */
ERG_API ERG_NODISCARD int erg_store_each(erg_store *store,
                                         int (*fn)(void *ud, const erg_signature *sig), void *ud,
                                         erg_diag *diag);

/**
 * Number of earlier versions kept for name (0 when none). Errors: ERG_EIO.
 */
ERG_API ERG_NODISCARD int erg_store_history(erg_store *store, const char *name, size_t *count,
                                            erg_diag *diag);

/**
 * Call fn(ud, sig, stored_unix_s) for every earlier version of name, newest first (version 1 is
 * the one replaced last); fn returning non-zero stops the walk and that value is returned.
 * stored_unix_s is when that version was stored (s since the Unix epoch). Errors: ERG_EIO.
 */
ERG_API ERG_NODISCARD int erg_store_history_each(erg_store *store, const char *name,
                                                 int (*fn)(void *ud, const erg_signature *sig,
                                                           double stored_unix_s),
                                                 void *ud, erg_diag *diag);

/**
 * Write the store-list/1 document of every current signature in store, ordered by name, to path
 * ("-": standard output), whole or not at all (what `erg store list --json` prints;
 * docs/store.md): {"erg": "store-list/1", "signatures": [{"name", "device", "energy_j" (E =
 * s·T + d), "time_s", "static_power_w", "dynamic_energy_j", "grade", "runs", "flags" (names as
 * erg_flag_name gives them)}...]}, J, s, W; a non-finite number is null. Errors: ERG_EINVAL
 * (NULL), ERG_EIO (reading the store, or writing: nothing half-written; a device, FIFO or
 * symlink at path is never replaced), ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_store_write_list_json(const char *path, erg_store *store,
                                                    erg_diag *diag);

/**
 * Write the store-list/1 document of the earlier versions of name, newest first (what `erg store
 * history NAME --json` prints) to path ("-": standard output), whole or not at all: {"erg":
 * "store-list/1", "name", "signatures": [...]}, each entry as in erg_store_write_list_json plus
 * "version" (1 = the version replaced last) and "stored_unix_s" (s since the Unix epoch); an
 * empty list when name has no history. Errors: ERG_EINVAL (NULL), ERG_ENOENT (no current
 * signature named name; nothing written), ERG_EIO, ERG_ENOMEM.
 */
ERG_API ERG_NODISCARD int erg_store_write_history_json(const char *path, erg_store *store,
                                                       const char *name, erg_diag *diag);

/* ---- Signatures with context points (docs/context.md; paper Section 4.4, step 5 "Reuse") ---- */

/**
 * Store a signature with its context points and command under cs->null_context.name (non-empty),
 * as erg_store_put does: a different entry of that name moves to history. erg_store_get of the
 * same name gives the null-context signature; erg_store_get_context gives the points too.
 * Errors: ERG_EINVAL, ERG_EIO.
 */
ERG_API ERG_NODISCARD int erg_store_put_context(erg_store *store, const erg_context_signature *cs,
                                                erg_diag *diag);

/** Fetch the current signature named name with its context points (none when stored without),
 *  as many as it holds. *out is written whole on success, with new storage that the caller
 *  releases (erg_context_signature_release); its former content is not read nor freed.
 *  Errors: ERG_ENOENT (no such name), ERG_EIO, ERG_EPARSE (a stored point is malformed),
 *  ERG_ENOMEM. */
ERG_API ERG_NODISCARD int erg_store_get_context(erg_store *store, const char *name,
                                                erg_context_signature *out, erg_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
