/* SPDX-License-Identifier: MIT */
/* erg fit blocks / erg fit model: HYMELL levels 2 and 3 from profile files, with the held-out
 * accuracy in the layout of the paper's Tables 4-6 beside its numbers. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "erg/stats.h"
#include "erg/predict.h"
#include "predict_levels.h"

static void help_blocks(FILE *out)
{
    fprintf(out,
            "Usage: erg fit blocks PROFILE_DIR|blocks.csv -o BLOCKS.json [--ops OPS.json]\n"
            "         [--seed S] [--width W] [--layers L] [--epochs E] [--no-cv] [--json]\n\n"
            "Fit HYMELL level 2 (Sections 3.4-3.5): per block kind, an MLP correcting the\n"
            "level-1 sum of the block's ops (OPS.json; default: ops.json in the folder above\n"
            "the CSV's, i.e. models/<name>/ops.json for models/<name>/profile/blocks.csv).\n"
            "Accuracy is leave-one-architecture-out: each row is predicted by a fit that saw no\n"
            "row of its arch; printed in the layout of Tables 4 and 5 beside the paper's\n"
            "numbers and the plain level-1 sum. Exit status: 0 written, 2 bad input.\n");
}

static void help_model(FILE *out)
{
    fprintf(out,
            "Usage: erg fit model models.csv -o E2E.json [--target DIR] [--seed S] [--width W]\n"
            "         [--layers L] [--epochs E] [--no-cv] [--json] [--per-sequence ARCH]\n"
            "         [--nested]\n\n"
            "Fit HYMELL level 3 (Section 3.6): an MLP on log targets from the block estimates\n"
            "of the target (DIR/ops.json and DIR/blocks.json when present; default DIR: the\n"
            "folder above the CSV's) and global features. Accuracy leave-one-architecture-out\n"
            "in the layout of Table 6 beside the paper's numbers and the plain block sum;\n"
            "--per-sequence ARCH adds Table 7's layout: the held-out error of each batch-1\n"
            "row of ARCH by sequence length, beside AMALI's aggregate and HYMELL's figures.\n"
            "--nested also reports nested held-out accuracy: for each architecture, levels 2\n"
            "and 3 refitted (model choices included) on the other architectures' rows\n"
            "(blocks.csv beside models.csv, and models.csv) and scored on its rows; one\n"
            "level-2 and one level-3 fit per architecture (minutes on the CPU profile).\n"
            "Exit status: 0 written, 2 bad input.\n");
}

struct opts {
    const char *in, *out, *aux, *per_seq;
    int json, nested;
    erg_mlp_options mlp;
};

static int parse(const char *sub, int argc, char **argv, struct opts *o, void (*help)(FILE *))
{
    static const struct option lo[] = {{"output", required_argument, NULL, 'o'},
                                       {"ops", required_argument, NULL, 'O'},
                                       {"target", required_argument, NULL, 'T'},
                                       {"seed", required_argument, NULL, 's'},
                                       {"width", required_argument, NULL, 'w'},
                                       {"layers", required_argument, NULL, 'l'},
                                       {"epochs", required_argument, NULL, 'e'},
                                       {"no-cv", no_argument, NULL, 'N'},
                                       {"json", no_argument, NULL, 'J'},
                                       {"per-sequence", required_argument, NULL, 'q'},
                                       {"nested", no_argument, NULL, 'n'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    erg_mlp_options_init(&o->mlp);
    int c;
    unsigned long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->out = optarg;
            break;
        case 'O':
            if (strcmp(sub, "blocks") != 0)
                return erg_cli_usage("fit", "--ops belongs to 'erg fit blocks'");
            o->aux = optarg;
            break;
        case 'T':
            if (strcmp(sub, "model") != 0)
                return erg_cli_usage("fit", "--target belongs to 'erg fit model'");
            o->aux = optarg;
            break;
        case 's':
            if (erg_cli_ulong("fit", "--seed", optarg, &v))
                return ERG_EXIT_USAGE;
            o->mlp.seed = v;
            break;
        case 'w':
            if (erg_cli_count("fit", "--width", optarg, 1, 64, &v))
                return ERG_EXIT_USAGE;
            o->mlp.width = (unsigned)v;
            break;
        case 'l':
            if (erg_cli_count("fit", "--layers", optarg, 1, 4, &v))
                return ERG_EXIT_USAGE;
            o->mlp.hidden_layers = (unsigned)v;
            break;
        case 'e':
            if (erg_cli_count("fit", "--epochs", optarg, 20, 100000, &v))
                return ERG_EXIT_USAGE;
            o->mlp.max_epochs = (unsigned)v;
            break;
        case 'N':
            o->mlp.cross_validate = 0;
            break;
        case 'q':
            if (strcmp(sub, "model") != 0)
                return erg_cli_usage("fit", "--per-sequence belongs to 'erg fit model'");
            o->per_seq = optarg;
            break;
        case 'J':
            o->json = 1;
            break;
        case 'n':
            if (strcmp(sub, "model") != 0)
                return erg_cli_usage("fit", "--nested belongs to 'erg fit model'");
            o->nested = 1;
            break;
        case 'h':
            help(stdout);
            return -1;
        default:
            return erg_cli_bad_option("fit", argc, argv, "o:h", lo);
        }
    }
    if (optind != argc - 1)
        return erg_cli_usage("fit", optind == argc ? "missing the profile file"
                                                   : "expected one profile file");
    o->in = argv[optind];
    if (!o->out)
        return erg_cli_usage("fit", "-o OUT.json is required");
    return 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "a/b/profile/blocks.csv" → "a/b/profile/.." */
static void parent_of_csv_dir(const char *csv, char *buf, size_t size)
{
    const char *slash = strrchr(csv, '/');
    if (!slash)
        snprintf(buf, size, "..");
    else
        snprintf(buf, size, "%.*s/..", (int)(slash - csv), csv);
}

static void cell(double v)
{
    if (isfinite(v))
        printf(" %9.3f", v);
    else
        printf(" %9s", "-");
}

static void cell4(double v)
{
    if (isfinite(v))
        printf(" %9.4f", v);
    else
        printf(" %9s", "-");
}

/* One table row: ours (MAPE, R² of time and energy), the base's MAPE, the paper's. */
static void row(const char *name, const erg_accuracy *a, const double *paper)
{
    printf("  %-16s %5zu", name, a->n);
    cell(a->time_mape_pct);
    cell4(a->time_r2);
    cell(a->energy_mape_pct);
    cell4(a->energy_r2);
    cell(a->base_time_mape_pct);
    cell(a->base_energy_mape_pct);
    if (paper) {
        printf("   |");
        cell(paper[0]);
        cell4(paper[1]);
        cell(paper[2]);
        cell4(paper[3]);
    }
    printf("\n");
}

static void header(const char *title, const char *base)
{
    printf("%s\n  %-16s %5s %9s %9s %9s %9s %9s %9s   | %s\n", title, "", "n", "time MAPE", "R2",
           "enrg MAPE", "R2", base, "", "HYMELL (H100 NVL, bf16)");
    printf("  %-16s %5s %9s %9s %9s %9s %9s %9s   | %9s %9s %9s %9s\n", "", "", "%", "", "%", "",
           "time %", "energy %", "time %", "R2", "energy %", "R2");
}

/* Held-out accuracy of block b in phase, or an empty row (n = 0) when b was not fitted. */
static erg_accuracy accuracy_or_empty(const erg_block_model *m, erg_block b, int phase)
{
    erg_accuracy a;
    if (erg_block_model_accuracy(m, b, phase, &a) != ERG_OK)
        memset(&a, 0, sizeof a);
    return a;
}
int erg_cli_fit_blocks(int argc, char **argv)
{
    struct opts o;
    int st = parse("blocks", argc, argv, &o, help_blocks);
    if (st)
        return st < 0 ? ERG_EXIT_OK : st;
    char csv[2048], ops[2100];
    if (is_dir(o.in))
        snprintf(csv, sizeof csv, "%s/blocks.csv", o.in);
    else
        snprintf(csv, sizeof csv, "%s", o.in);
    if (o.aux)
        snprintf(ops, sizeof ops, "%s", o.aux);
    else {
        char up[2060];
        parent_of_csv_dir(csv, up, sizeof up);
        snprintf(ops, sizeof ops, "%s/ops.json", up);
    }
    erg_diag diag;
    erg_diag_clear(&diag);
    erg_block_sample *s = NULL;
    size_t n = 0;
    erg_op_model *l1 = NULL;
    erg_block_model *m = NULL;
    int rc = erg_blocks_csv_read(csv, &s, &n, &diag);
    if (rc == ERG_OK) {
        rc = erg_op_model_load(ops, &l1, &diag);
        if (rc == ERG_ENOENT)
            fprintf(stderr,
                    "erg: level 2 corrects a level-1 model: fit one with 'erg fit ops "
                    "ops.csv -o %s' or name it with --ops\n",
                    ops);
    }
    if (rc == ERG_OK)
        rc = erg_block_model_fit(l1, s, n, &o.mlp, &m, &diag);
    if (rc == ERG_OK)
        rc = erg_block_model_save(o.out, m, &diag);
    if (rc != ERG_OK) {
        free(s);
        erg_op_model_free(l1);
        erg_block_model_free(m);
        st = erg_cli_fail(&diag, rc);
        return st == ERG_EXIT_NOMETER ? ERG_EXIT_USAGE : st;
    }
    static const double t4[3][4] = {{3.514, 0.9997, 4.237, 0.9996},
                                    {0.441, 0.9276, 0.599, 0.9996},
                                    {1.978, 0.9636, 2.418, 0.9996}};
    static const double t5[3][4] = {{4.063, 0.9998, 4.612, 0.9998},
                                    {5.168, 0.9946, 6.333, 0.9951},
                                    {4.616, 0.9972, 5.473, 0.9975}};
    erg_accuracy att[2], ffn[2], avg;
    att[0] = accuracy_or_empty(m, ERG_BLOCK_ATTENTION, ERG_PHASE_PREFILL);
    att[1] = accuracy_or_empty(m, ERG_BLOCK_ATTENTION, ERG_PHASE_DECODE);
    ffn[0] = accuracy_or_empty(m, ERG_BLOCK_FFN, -1);
    ffn[1] = accuracy_or_empty(m, ERG_BLOCK_MOE, -1);
    if (o.json) {
        erg_fit_report r = {.level = 2, .model_path = o.out, .blocks = m, .rows = n};
        rc = erg_fit_report_write_json("-", &r, &diag);
    } else {
        printf("level 2 on %s (%zu rows), level 1 %s; held out: leave-one-architecture-out\n\n",
               csv, n, ops);
        if (erg_block_model_has(m, ERG_BLOCK_ATTENTION)) {
            header("Attention block estimator (Table 4 layout)", "level 1");
            row("Prefill", &att[0], t4[0]);
            row("Decode", &att[1], t4[1]);
            erg_accuracy_average(att, 2, &avg);
            row("Average", &avg, t4[2]);
            printf("\n");
        }
        if (erg_block_model_has(m, ERG_BLOCK_FFN) || erg_block_model_has(m, ERG_BLOCK_MOE)) {
            header("FFN block estimator (Table 5 layout)", "level 1");
            row("Dense FFN", &ffn[0], t5[0]);
            row("MoE FFN", &ffn[1], t5[1]);
            erg_accuracy_average(ffn, 2, &avg);
            row("Average", &avg, t5[2]);
            printf("\n");
        }
        static const erg_block rest[] = {ERG_BLOCK_NORM, ERG_BLOCK_EMBEDDING, ERG_BLOCK_LM_HEAD};
        int any = 0;
        for (int k = 0; k < 3; k++) {
            erg_accuracy a;
            if (erg_block_model_accuracy(m, rest[k], -1, &a) != ERG_OK)
                continue;
            if (!any++)
                header("Other blocks (no table in the paper)", "level 1");
            row(erg_block_name(rest[k]), &a, NULL);
        }
        int first = 1;
        for (int k = 0; k < ERG_BLOCK_COUNT; k++)
            for (int p = 0; p < 2; p++) {
                const char *use;
                double sc[3];
                if (erg_block_model_phase(m, (erg_block)k, p, &use, sc) != ERG_OK ||
                    !isfinite(sc[0]))
                    continue;
                if (first) {
                    printf("%slevel 1 corrected by, per phase (held-out MAPE of time and energy: "
                           "shared / own / none)\n",
                           any ? "\n" : "");
                    first = 0;
                    any = 1;
                }
                printf("  %-10s %-8s %-7s %7.2f / %7.2f / %7.2f %%\n", erg_block_name((erg_block)k),
                       p ? "decode" : "prefill", use, sc[0], sc[1], sc[2]);
            }
        printf("%swrote %s\n", any ? "\n" : "", o.out);
    }
    free(s);
    erg_op_model_free(l1);
    erg_block_model_free(m);
    return rc == ERG_OK ? ERG_EXIT_OK : erg_cli_fail(&diag, rc);
}

/* HYMELL Table 7: per sequence length, batch 1, one architecture: |error| of time and energy. */
static void per_sequence(const erg_e2e_model *m, const char *arch)
{
    const erg_e2e_heldout_row *r;
    size_t n = erg_e2e_model_heldout(m, &r);
    static const double amali[2] = {15.56, 34.90}, hymell[2][2] = {{4.19, 2.92}, {1.58, 1.34}};
    printf("\nPer-sequence accuracy of %s at batch 1 (Table 7 layout; held out)\n", arch);
    printf("  %-8s %8s %12s %12s   | %12s %12s %12s\n", "mode", "seq len", "time err %",
           "energy err %", "AMALI time %", "HYMELL time %", "HYMELL enrg %");
    for (int ph = 0; ph < 2; ph++) {
        double st = 0, se = 0;
        int k = 0, ke = 0;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(r[i].arch, arch) != 0 || r[i].phase.batch != 1 ||
                (int)r[i].phase.phase != ph || !isfinite(r[i].predicted_time_s))
                continue;
            double et = 100 * fabs(r[i].predicted_time_s - r[i].time_s) / r[i].time_s;
            double ee = 100 * fabs(r[i].predicted_energy_j - r[i].energy_j) / r[i].energy_j;
            printf("  %-8s %8lld %12.3f", ph ? "decode" : "prefill",
                   (long long)(ph ? r[i].phase.kv : r[i].phase.prompt), et);
            if (isfinite(ee)) {
                printf(" %12.3f\n", ee);
                se += ee;
                ke++;
            } else
                printf(" %12s\n", "-");
            st += et;
            k++;
        }
        if (!k)
            printf("  %-8s (no batch-1 rows of %s)\n", ph ? "decode" : "prefill", arch);
        else {
            printf("  %-8s %8s %12.3f", ph ? "decode" : "prefill", "MAPE", st / k);
            if (ke)
                printf(" %12.3f", se / ke);
            else
                printf(" %12s", "-");
            printf("   | %12.2f %12.2f %12.2f\n", amali[ph], hymell[ph][0], hymell[ph][1]);
        }
    }
}

/* --nested: blocks.csv beside models.csv (absent: the blocks answer at level 1), then
 * erg_levels_nested_accuracy. */
static int nested(const struct opts *o, const erg_op_model *l1, const erg_model_sample *s, size_t n,
                  erg_nested_accuracy *acc, erg_diag *diag)
{
    char path[2200];
    const char *slash = strrchr(o->in, '/');
    if (slash)
        snprintf(path, sizeof path, "%.*s/blocks.csv", (int)(slash - o->in), o->in);
    else
        snprintf(path, sizeof path, "blocks.csv");
    erg_block_sample *bs = NULL;
    size_t nb = 0;
    int rc = erg_blocks_csv_read(path, &bs, &nb, diag);
    if (rc == ERG_ENOENT) {
        fprintf(stderr, "erg: %s not found: the nested fits use level-1 blocks\n", path);
        erg_diag_clear(diag);
        rc = ERG_OK;
    }
    if (rc == ERG_OK)
        rc = erg_levels_nested_accuracy(l1, bs, nb, s, n, &o->mlp, acc, diag);
    free(bs);
    return rc;
}

static void nested_print(const erg_nested_accuracy *acc, const char *const *names)
{
    printf("\nnested leave-one-architecture-out (%zu folds: levels 2 and 3 refitted, their choices "
           "included, without each architecture)\n",
           acc->n_folds);
    header("Blocks (Tables 4-5 layout)", "level 1");
    static const char *const ph[2] = {"prefill", "decode"};
    for (int b = 0; b < ERG_BLOCK_COUNT; b++)
        for (int p = 0; p < 2; p++)
            if (acc->blocks[b][p].n) {
                char name[40];
                snprintf(name, sizeof name, "%s %s", erg_block_name((erg_block)b), ph[p]);
                row(name, &acc->blocks[b][p], NULL);
            }
    header("End-to-end estimator (Table 6 layout)", "blocks");
    erg_accuracy a[4], avg;
    for (int i = 0; i < 4; i++)
        a[i] = acc->e2e[i % 2][i / 2];
    erg_accuracy_average(a, 4, &avg);
    for (int i = 0; i < 4; i++)
        row(names[i], &a[i], NULL);
    row("Average", &avg, NULL);
}

int erg_cli_fit_model(int argc, char **argv)
{
    struct opts o;
    int st = parse("model", argc, argv, &o, help_model);
    if (st)
        return st < 0 ? ERG_EXIT_OK : st;
    char dir[2100], path[2200];
    if (o.aux)
        snprintf(dir, sizeof dir, "%s", o.aux);
    else
        parent_of_csv_dir(o.in, dir, sizeof dir);
    erg_diag diag;
    erg_diag_clear(&diag);
    erg_model_sample *s = NULL;
    size_t n = 0;
    erg_op_model *l1 = NULL;
    erg_block_model *l2 = NULL;
    erg_e2e_model *m = NULL;
    int rc = erg_models_csv_read(o.in, &s, &n, &diag);
    if (rc == ERG_OK) {
        snprintf(path, sizeof path, "%s/ops.json", dir);
        rc = erg_op_model_load(path, &l1, &diag);
        if (rc == ERG_ENOENT)
            fprintf(stderr, "erg: level 3 needs the target's level-1 model %s (--target DIR)\n",
                    path);
    }
    if (rc == ERG_OK) {
        snprintf(path, sizeof path, "%s/blocks.json", dir);
        rc = erg_block_model_load(path, &l2, &diag);
        if (rc == ERG_ENOENT)
            rc = ERG_OK; /* the blocks answer at level 1 */
    }
    if (rc == ERG_OK)
        rc = erg_e2e_model_fit(l1, l2, s, n, &o.mlp, &m, &diag);
    erg_nested_accuracy nacc;
    if (rc == ERG_OK && o.nested)
        rc = nested(&o, l1, s, n, &nacc, &diag);
    if (rc == ERG_OK)
        rc = erg_e2e_model_save(o.out, m, &diag);
    if (rc != ERG_OK) {
        free(s);
        erg_op_model_free(l1);
        erg_block_model_free(l2);
        erg_e2e_model_free(m);
        st = erg_cli_fail(&diag, rc);
        return st == ERG_EXIT_NOMETER ? ERG_EXIT_USAGE : st;
    }
    static const double t6[5][4] = {{10.179, 0.9938, 9.969, 0.9860},
                                    {8.194, 0.8968, 10.771, 0.8117},
                                    {12.772, 0.9527, 13.091, 0.9477},
                                    {12.776, 0.9221, 13.305, 0.9101},
                                    {10.980, 0.9414, 11.784, 0.9139}};
    static const char *const names[4] = {"Prefill (Dense)", "Decode (Dense)", "Prefill (MoE)",
                                         "Decode (MoE)"};
    erg_accuracy a[4] = {{0}}, avg;
    for (int i = 0; i < 4; i++)
        if (erg_e2e_model_accuracy(m, i % 2, i / 2, &a[i]) != ERG_OK)
            memset(&a[i], 0, sizeof a[i]);
    erg_accuracy_average(a, 4, &avg);
    if (o.json) {
        erg_fit_report r = {.level = 3,
                            .model_path = o.out,
                            .e2e = m,
                            .rows = n,
                            .blocks_level = l2 ? 2 : 1,
                            .nested = o.nested ? &nacc : NULL};
        rc = erg_fit_report_write_json("-", &r, &diag);
    } else {
        printf("level 3 on %s (%zu rows), blocks at level %d from %s; held out: "
               "leave-one-architecture-out\n\n",
               o.in, n, l2 ? 2 : 1, dir);
        header("End-to-end estimator (Table 6 layout)", "blocks");
        for (int i = 0; i < 4; i++)
            row(names[i], &a[i], t6[i]);
        row("Average", &avg, t6[4]);
        printf(
            "\nblock sums corrected by (held-out MAPE of time and energy: shared / own / none)\n");
        for (int g = 0; g < 4; g++) {
            const char *use;
            double sc[3];
            if (erg_e2e_model_group(m, g % 2, g / 2, &use, sc) == ERG_OK)
                printf("  %-16s %-7s %7.2f / %7.2f / %7.2f %%\n", names[g], use, sc[0], sc[1],
                       sc[2]);
        }
        if (o.per_seq)
            per_sequence(m, o.per_seq);
        if (o.nested)
            nested_print(&nacc, names);
        printf("\nwrote %s\n", o.out);
    }
    free(s);
    erg_op_model_free(l1);
    erg_block_model_free(l2);
    erg_e2e_model_free(m);
    return rc == ERG_OK ? ERG_EXIT_OK : erg_cli_fail(&diag, rc);
}
