/* SPDX-License-Identifier: MIT */
#include "core/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int erg__dynlib_sym(void *handle, const char *name, void *fn, size_t fn_size)
{
    void *p = dlsym(handle, name);
    if (!p || fn_size != sizeof p)
        return 0;
    memcpy(fn, &p, sizeof p); /* object pointer to function pointer (POSIX dlsym) */
    return 1;
}

int erg__dynlib_load(struct erg__dynlib *lib, erg__dynlib_bind_fn bind, void *table, erg_diag *diag)
{
    pthread_mutex_lock(&lib->mu);
    if (!lib->tried) {
        lib->tried = 1;
        void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
        const char *missing = NULL;
        if (!h) {
            const char *e = dlerror();
            lib->status = ERG_ENOLIB;
            snprintf(lib->detail, sizeof lib->detail, "%s", e ? e : "dlopen failed");
        } else if (bind(h, table, &missing) != ERG_OK) {
            lib->status = ERG_ENOLIB;
            snprintf(lib->detail, sizeof lib->detail, "not the library erg needs: no symbol %s",
                     missing ? missing : "?");
            dlclose(h);
        }
    }
    int rc = lib->status;
    pthread_mutex_unlock(&lib->mu);
    if (rc != ERG_OK)
        return erg_diag_set(diag, rc, lib->soname,
                            "cannot be loaded, needed for %s (install Debian's %s): %s",
                            lib->needed_for, lib->package, lib->detail);
    return ERG_OK;
}
