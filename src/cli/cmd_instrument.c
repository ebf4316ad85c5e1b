/* SPDX-License-Identifier: MIT */
/* erg instrument / erg report: the Python side of erg (python/erg), run by Debian's python3.
 * Both exec $ERG_PYTHON (default /usr/bin/python3) -m erg.instrument / erg.report with the
 * package on PYTHONPATH and liberg in ERG_LIBRARY, so that `erg instrument` works from a build
 * tree and from an installation alike:
 *   package: $ERG_PYTHONPATH, else <bin>/../share/erg/python (installed), else the source tree;
 *   liberg:  $ERG_LIBRARY, else <bin>/../<libdir>/liberg.so.<major> (installed), else the build
 *            tree's. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ERG_CLI_PYTHON_SOURCE_DIR
#define ERG_CLI_PYTHON_SOURCE_DIR ""
#endif
#ifndef ERG_CLI_SHARED_LIB_BUILD
#define ERG_CLI_SHARED_LIB_BUILD ""
#endif
#ifndef ERG_CLI_PY_BIN_TO_LIB
#define ERG_CLI_PY_BIN_TO_LIB "../lib/liberg.so.0"
#endif
#ifndef ERG_CLI_BIN_TO_PYTHON
#define ERG_CLI_BIN_TO_PYTHON "../share/erg/python"
#endif

/* The folder of the running program into buf ("" when unknown). */
static void exe_dir(char *buf, size_t size)
{
    buf[0] = '\0';
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0)
        return;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
}

static int exists(const char *path)
{
    return path[0] && access(path, R_OK) == 0;
}

int erg_cli_exec_python(const char *cmd, const char *module, int argc, char **argv)
{
    char dir[4096], cand[4600];
    exe_dir(dir, sizeof dir);

    const char *pkg = getenv("ERG_PYTHONPATH");
    char pkgbuf[4600] = "";
    if (!pkg || !*pkg) {
        snprintf(cand, sizeof cand, "%s/%s/erg/__init__.py", dir, ERG_CLI_BIN_TO_PYTHON);
        if (dir[0] && exists(cand))
            snprintf(pkgbuf, sizeof pkgbuf, "%s/%s", dir, ERG_CLI_BIN_TO_PYTHON);
        else
            snprintf(pkgbuf, sizeof pkgbuf, "%s", ERG_CLI_PYTHON_SOURCE_DIR);
        pkg = pkgbuf;
    }
    snprintf(cand, sizeof cand, "%s/erg/__init__.py", pkg);
    if (!exists(cand)) {
        fprintf(stderr,
                "erg %s: the erg Python package is not found (looked in '%s'); set "
                "ERG_PYTHONPATH to the folder that holds erg/\n",
                cmd, pkg);
        return ERG_EXIT_USAGE;
    }
    const char *old = getenv("PYTHONPATH");
    size_t len = strlen(pkg) + (old ? strlen(old) : 0) + 2;
    char *pp = malloc(len);
    if (!pp) {
        fprintf(stderr, "erg %s: out of memory\n", cmd);
        return ERG_EXIT_USAGE;
    }
    snprintf(pp, len, "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", pp, 1);
    free(pp);

    const char *lib = getenv("ERG_LIBRARY");
    if (!lib || !*lib) {
        snprintf(cand, sizeof cand, "%s/%s", dir, ERG_CLI_PY_BIN_TO_LIB);
        if (dir[0] && exists(cand))
            setenv("ERG_LIBRARY", cand, 1);
        else if (exists(ERG_CLI_SHARED_LIB_BUILD))
            setenv("ERG_LIBRARY", ERG_CLI_SHARED_LIB_BUILD, 1);
    }

    const char *py = getenv("ERG_PYTHON");
    if (!py || !*py)
        py = "/usr/bin/python3";
    const char **args = calloc((size_t)argc + 4, sizeof *args);
    if (!args) {
        fprintf(stderr, "erg %s: out of memory\n", cmd);
        return ERG_EXIT_USAGE;
    }
    args[0] = py;
    args[1] = "-m";
    args[2] = module;
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    fflush(NULL);
    execv(py, erg_cli_exec_argv(args));
    fprintf(stderr, "erg %s: cannot run %s: %s (set ERG_PYTHON to a python3 with torch)\n", cmd, py,
            strerror(errno));
    free(args);
    return ERG_EXIT_USAGE;
}

static int run(int argc, char **argv)
{
    return erg_cli_exec_python("instrument", "erg.instrument", argc, argv);
}

const struct erg_cli_command erg_cli_cmd_instrument = {
    "instrument", "wrap each library call of a Python script in an energy window (FECoM)", run};
