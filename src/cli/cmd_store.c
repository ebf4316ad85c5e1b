/* SPDX-License-Identifier: MIT */
/* erg store: keep characterized signatures in a SQLite file and take them out again. */
#include "cli.h"
#include "erg/signature.h"
#include "erg/store.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char store_help[] =
    "Usage: erg store [--store PATH] put SIGNATURE.json...\n"
    "       erg store [--store PATH] get NAME [-o OUT.json]\n"
    "       erg store [--store PATH] list [--json]\n"
    "       erg store [--store PATH] history NAME [--json]\n"
    "       erg store [--store PATH] get NAME --previous K [-o OUT.json]\n"
    "       erg store [--store PATH] rm NAME\n\n"
    "Keep characterized energy signatures (signature/1 files) in one SQLite file, by name, so "
    "that\n"
    "schedules, trace rules and later sessions can reuse them. Putting a name again replaces it "
    "and\n"
    "keeps the old one as history: 'history' lists earlier versions, newest first, and\n"
    "'get --previous K' takes out the K-th one (1 = the one replaced last).\n\n"
    "  --store PATH   the store file (default $ERG_STORE, $XDG_DATA_HOME/erg/signatures.db or\n"
    "                 ~/.local/share/erg/signatures.db)\n"
    "  -o, --output F write the signature to F instead of stdout (get)\n"
    "  --previous K   get the K-th earlier version instead of the current one\n"
    "  --json         list/history as JSON {\"erg\": \"store-list/1\", \"signatures\": [...]}\n\n"
    "Exit status: 0 success, 2 bad input, unknown name or unreadable store.\n";

struct list_ctx {
    unsigned long want; /* history: the version to take out (0: list them all) */
    unsigned long seen;
    erg_signature found;
};

/* " flags: a,b" after a text row, or "" */
static const char *flags_suffix(const erg_signature *s, char *buf, size_t size)
{
    if (!s->flags)
        return "";
    int n = snprintf(buf, size, "  flags: ");
    if (n > 0 && (size_t)n < size)
        erg_flags_text(s->flags, ",", buf + n, size - (size_t)n);
    return buf;
}

static int history_one(void *ud, const erg_signature *s, double stored_unix_s)
{
    struct list_ctx *c = ud;
    c->seen++;
    if (c->want) {
        if (c->seen == c->want) {
            c->found = *s;
            return 1;
        }
        return 0;
    }
    char fl[600];
    printf("%-8lu %14.0f %12.6g %12.6g %12.6g  %s%s\n", c->seen, stored_unix_s,
           erg_signature_energy_j(s), s->time_s, s->static_power_w, erg_grade_name(s->grade),
           flags_suffix(s, fl, sizeof fl));
    return 0;
}

static int list_one(void *ud, const erg_signature *s)
{
    (void)ud;
    char fl[600];
    printf("%-32s %-12s %12.6g %12.6g %12.6g  %s%s\n", s->name, s->device[0] ? s->device : "-",
           erg_signature_energy_j(s), s->time_s, s->static_power_w, erg_grade_name(s->grade),
           flags_suffix(s, fl, sizeof fl));
    return 0;
}

/* A lock held by another erg: say so once, then keep waiting (up to 30 s). */
static void say_waiting(void *ud, const char *path)
{
    (void)ud;
    fprintf(stderr, "erg: %s: waiting for another process to release the store (up to 30 s)\n",
            path);
}

/* Release n context signatures (calloc'ed: the unread ones are zeroed, hence empty) and the array.
 */
static void free_sigs(erg_context_signature *sigs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        erg_context_signature_release(&sigs[i]);
    free(sigs);
}

static int run_store(int argc, char **argv)
{
    static const struct option opts[] = {
        {"store", required_argument, NULL, 's'}, {"output", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'j'},        {"previous", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    const char *path = NULL, *output = "-";
    int json = 0, c;
    unsigned long previous = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            path = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'p':
            if (erg_cli_ulong("store", "--previous", optarg, &previous) != 0)
                return ERG_EXIT_USAGE;
            if (previous == 0)
                return erg_cli_usage("store",
                                     "--previous counts from 1 (the version replaced last)");
            break;
        case 'h':
            fputs(store_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("store", argc, argv, "o:h", opts);
        }
    }
    if (optind >= argc)
        return erg_cli_usage("store", "missing action: put, get, list or rm");
    const char *action = argv[optind++];
    char defpath[1024];
    if (!path) {
        if (erg_store_default_path(defpath, &(size_t){sizeof defpath}) != ERG_OK)
            return erg_cli_usage("store", "no store path: give --store or set ERG_STORE");
        path = defpath;
    }
    int is_put = strcmp(action, "put") == 0;
    if (!is_put && strcmp(action, "get") && strcmp(action, "list") && strcmp(action, "rm") &&
        strcmp(action, "history"))
        return erg_cli_usage("store", "unknown action '%s' (put, get, list, history, rm)", action);
    if ((is_put && optind >= argc) ||
        ((!strcmp(action, "get") || !strcmp(action, "rm") || !strcmp(action, "history")) &&
         optind + 1 != argc))
        return erg_cli_usage("store", "'%s' needs %s", action,
                             is_put ? "signature files" : "one name");

    erg_diag d;
    erg_diag_clear(&d);
    int rc;
    if (is_put) {
        /* Read every file first, so a bad one stores nothing. */
        size_t n = (size_t)(argc - optind);
        erg_context_signature *sigs = calloc(n, sizeof *sigs); /* with their context points */
        if (!sigs)
            return erg_cli_fail(NULL, ERG_ENOMEM);
        for (size_t i = 0; i < n; i++) {
            if ((rc = erg_context_signature_read_file(argv[optind + (int)i], &sigs[i], &d)) !=
                ERG_OK) {
                free_sigs(sigs, n);
                return erg_cli_fail(&d, rc);
            }
            if (!sigs[i].null_context.name[0]) {
                fprintf(stderr, "erg: %s: the signature has no \"name\" to store it under\n",
                        argv[optind + (int)i]);
                free_sigs(sigs, n);
                return ERG_EXIT_USAGE;
            }
        }
        erg_store *st;
        if ((rc = erg_store_open_wait(path, ERG_STORE_CREATE, 30, say_waiting, NULL, &st, &d)) !=
            ERG_OK) {
            free_sigs(sigs, n);
            return erg_cli_fail(&d, rc);
        }
        /* one transaction: every file is stored, or none */
        rc = erg_store_begin(st, &d);
        for (size_t i = 0; i < n && rc == ERG_OK; i++)
            rc = erg_store_put_context(st, &sigs[i], &d);
        if (rc == ERG_OK)
            rc = erg_store_end(st, 1, &d);
        else if (erg_store_end(st, 0, NULL) != ERG_OK) /* closing rolls back as well */
            fprintf(stderr, "erg: warning: the rollback failed; closing the store undoes it\n");
        erg_store_close(st);
        free_sigs(sigs, n);
        if (rc != ERG_OK)
            return erg_cli_fail(&d, rc);
        return ERG_EXIT_OK;
    }
    erg_store *st;
    if ((rc = erg_store_open_wait(path,
                                  strcmp(action, "rm") ? ERG_STORE_READONLY : ERG_STORE_READWRITE,
                                  30, say_waiting, NULL, &st, &d)) != ERG_OK)
        return erg_cli_fail(&d, rc);
    if (!strcmp(action, "get") && previous) {
        struct list_ctx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.want = previous;
        rc = erg_store_history_each(st, argv[optind], history_one, &ctx, &d);
        if (rc == 1)
            rc = erg_signature_write_file(output, &ctx.found, &d);
        else if (rc == ERG_OK)
            rc = erg_diag_set(&d, ERG_ENOENT, path, "'%s' has %lu earlier version%s, not %lu",
                              argv[optind], ctx.seen, ctx.seen == 1 ? "" : "s", previous);
    } else if (!strcmp(action, "get")) {
        erg_context_signature *cs = malloc(sizeof *cs);
        if (!cs)
            rc = erg_diag_set(&d, ERG_ENOMEM, NULL, "out of memory");
        else if ((rc = erg_store_get_context(st, argv[optind], cs, &d)) == ERG_OK) {
            rc = erg_context_signature_write_file(output, cs, &d);
            erg_context_signature_release(cs);
        }
        free(cs);
    } else if (!strcmp(action, "history") && json) {
        rc = erg_store_write_history_json("-", st, argv[optind], &d);
    } else if (!strcmp(action, "history")) {
        erg_signature cur;
        if ((rc = erg_store_get(st, argv[optind], &cur, &d)) == ERG_OK) {
            struct list_ctx ctx;
            memset(&ctx, 0, sizeof ctx);
            printf("%-8s %14s %12s %12s %12s  %s\n", "version", "stored_unix_s", "energy_j",
                   "time_s", "static_w", "grade");
            rc = erg_store_history_each(st, argv[optind], history_one, &ctx, &d);
            if (rc == ERG_OK && ctx.seen == 0)
                printf("(no earlier versions)\n");
        }
    } else if (!strcmp(action, "rm")) {
        rc = erg_store_remove(st, argv[optind], &d);
    } else if (json) {
        rc = erg_store_write_list_json("-", st, &d);
    } else {
        printf("%-32s %-12s %12s %12s %12s  %s\n", "name", "device", "energy_j", "time_s",
               "static_w", "grade");
        rc = erg_store_each(st, list_one, NULL, &d);
    }
    erg_store_close(st);
    return rc == ERG_OK ? ERG_EXIT_OK : erg_cli_fail(&d, rc);
}

const struct erg_cli_command erg_cli_cmd_store = {
    "store", "keep signatures in a SQLite store and reuse them", run_store};
