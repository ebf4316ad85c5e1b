/* SPDX-License-Identifier: MIT */
/* erg predict model / sweep: a whole LLM's time and energy per phase from its config.json
 * (HYMELL levels 1-3, Sections 3.4-3.6 and 4). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "erg/stats.h"
#include "erg/predict.h"
#include "predict_levels.h"

static void help_model(FILE *out)
{
    fprintf(out,
            "Usage: erg predict model CONFIG.json --target NAME|DIR [--phase prefill|decode|both]\n"
            "         [--prompt N] [--kv L] [--batch B] [--output N] [--last-logits]\n"
            "         [--static-power-w W] [--json] [--emit-schedule OUT.json]\n\n"
            "Time and energy of a whole forward of the model in CONFIG.json (a HuggingFace\n"
            "config) on a target (a folder models/<name>/ with ops.json and optionally\n"
            "blocks.json, e2e.json, and on GPU targets gpu.json: kernel models, memory; the\n"
            "committed ones: a100, cpu, h100, h200; H100 and A100 are time only, their energy\n"
            "is '-', null in --json), per phase: prefill of --batch sequences of --prompt tokens\n"
            "(default 1 x 512), decode of one token per sequence against --kv cached tokens\n"
            "(default: the prompt length), with a per-block breakdown (HYMELL levels 1-3).\n"
            "--last-logits computes the LM head for the last prompt position only (default:\n"
            "every position, as a HF forward does). --emit-schedule writes a schedule/1 (layers\n"
            "in sequence, blocks inside) that 'erg compose' evaluates to the same totals; its\n"
            "signatures take --static-power-w (default 0) as the static power (a time-only\n"
            "target has no energy to write: refused, exit 2, nothing written). When the\n"
            "weights and KV cache exceed the target's memory (gpu.json memory_gib), it warns\n"
            "on stderr (--json: \"warnings\") and still predicts. A target with a serving\n"
            "level 3 (gpu.json; the H100, from ML.ENERGY) also gives the decode step as served:\n"
            "its ITL and energy per output token (--json: the decode phase's \"serving\",\n"
            "null without one).\n"
            "--output N adds the whole request: the prefill, then the N - 1 decode steps that\n"
            "generate the other output tokens, each against its own KV length (prompt + 1 ...\n"
            "prompt + N - 1): its time, energy, time per output token and energy per output\n"
            "token (--json: \"request\"); it takes neither --phase nor --kv.\n"
            "A prompt, KV length or request longer than the config's max_position_embeddings\n"
            "is predicted with a warning. Sizes are positive integers; batch x prompt and\n"
            "batch x kv (with --output, batch x (prompt + N)) at most 2^40 tokens, N at most\n"
            "2^24 (each decode step is predicted: 2^24 steps take about a minute).\n"
            "--kv with --phase prefill is refused (the prefill has no cache).\n"
            "Exit status: 0 predicted, 2 bad input (config, target, phase, sizes).\n");
}

static void help_sweep(FILE *out)
{
    fprintf(out,
            "Usage: erg predict sweep CONFIG.json --target NAME|DIR --set KEY=A:B:STEP ...\n"
            "         [--phase prefill|decode|both] [--prompt N] [--kv L] [--batch B]\n"
            "         [--last-logits] [--csv|--json]\n\n"
            "Design-space sweep (HYMELL Section 4): every combination of the --set ranges\n"
            "(A to B by STEP, or one value A), predicted per phase. Keys: d_model, n_heads,\n"
            "n_kv_heads, head_dim, heads (= n_heads = n_kv_heads, head_dim = d_model / heads),\n"
            "d_ff, d_ff_expert, n_layers, n_experts, top_k, n_shared, d_ff_shared, window,\n"
            "vocab, and batch, prompt, kv. Prints one row per point and phase: the keys, the\n"
            "phase, time_s and energy_j of the forward and of one attention and one FFN/MoE\n"
            "block; --csv as CSV; --json as {\"erg\": \"model-sweep/1\", \"keys\", \"rows\":\n"
            "[{KEY..., \"phase\", \"time_s\", \"energy_j\", \"attention_time_s\", ...}],\n"
            "\"skipped\": [{KEY..., \"reason\"}]} (energy null on a time-only target). Points\n"
            "the architecture cannot have (heads not dividing d_model, ...) are listed on\n"
            "stderr as skipped.\n"
            "Exit status: 0, 2 bad input or every point skipped (nothing on stdout).\n");
}

static int int_opt(const char *cmd, const char *opt, const char *text, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v <= 0 || v > (1ll << 40)) {
        erg_cli_usage(cmd, "%s expects a positive integer, got '%s'", opt, text);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

struct common {
    const char *config, *target, *schedule;
    int phases; /* bit 0 prefill, bit 1 decode */
    int64_t prompt, kv, batch;
    int64_t output; /* --output: output tokens per sequence of the whole request, 0 none */
    int have_kv, have_phase, json, csv, last_logits;
    double static_w;
    char sets[16][128];
    int n_sets;
};

/* batch x prompt, batch x kv and batch x (prompt + output) at most 2^40
 * (erg_phase_tokens_check): ERG_OK, or ERG_EINVAL with why[] filled. */
static int tokens_check(const struct common *c, char *why, size_t size)
{
    return erg_phase_tokens_check(c->phases, c->batch, c->prompt, c->kv, c->output, why, size);
}

static int parse_common(const char *cmd, int argc, char **argv, struct common *c, int sweep)
{
    static const struct option opts[] = {{"target", required_argument, NULL, 't'},
                                         {"phase", required_argument, NULL, 'p'},
                                         {"prompt", required_argument, NULL, 'P'},
                                         {"kv", required_argument, NULL, 'k'},
                                         {"batch", required_argument, NULL, 'b'},
                                         {"output", required_argument, NULL, 'O'},
                                         {"json", no_argument, NULL, 'J'},
                                         {"csv", no_argument, NULL, 'C'},
                                         {"emit-schedule", required_argument, NULL, 'S'},
                                         {"static-power-w", required_argument, NULL, 'w'},
                                         {"last-logits", no_argument, NULL, 'L'},
                                         {"set", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    memset(c, 0, sizeof *c);
    c->phases = 3;
    c->prompt = 512;
    c->batch = 1;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 't':
            c->target = optarg;
            break;
        case 'p':
            if (strcmp(optarg, "prefill") == 0)
                c->phases = 1;
            else if (strcmp(optarg, "decode") == 0)
                c->phases = 2;
            else if (strcmp(optarg, "both") == 0)
                c->phases = 3;
            else
                return erg_cli_usage(cmd, "unknown phase '%s' (prefill, decode or both)", optarg);
            c->have_phase = 1;
            break;
        case 'P':
            if (int_opt(cmd, "--prompt", optarg, &c->prompt))
                return ERG_EXIT_USAGE;
            break;
        case 'k':
            if (int_opt(cmd, "--kv", optarg, &c->kv))
                return ERG_EXIT_USAGE;
            c->have_kv = 1;
            break;
        case 'b':
            if (int_opt(cmd, "--batch", optarg, &c->batch))
                return ERG_EXIT_USAGE;
            break;
        case 'O':
            if (sweep)
                return erg_cli_usage(cmd, "--output belongs to 'erg predict model'");
            if (int_opt(cmd, "--output", optarg, &c->output))
                return ERG_EXIT_USAGE;
            if (c->output > (int64_t)1 << 24)
                return erg_cli_usage(cmd, "--output %lld: at most 2^24 output tokens",
                                     (long long)c->output);
            break;
        case 'J':
            c->json = 1;
            break;
        case 'C':
            if (!sweep)
                return erg_cli_usage(cmd, "--csv belongs to 'erg predict sweep'");
            c->csv = 1;
            break;
        case 'S':
            if (sweep)
                return erg_cli_usage(cmd, "--emit-schedule belongs to 'erg predict model'");
            c->schedule = optarg;
            break;
        case 'w':
            if (sweep)
                return erg_cli_usage(cmd, "--static-power-w belongs to 'erg predict model' "
                                          "(with --emit-schedule)");
            if (erg_cli_double(cmd, "--static-power-w", optarg, &c->static_w) != 0)
                return ERG_EXIT_USAGE;
            if (c->static_w < 0)
                return erg_cli_usage(cmd, "--static-power-w must not be negative");
            break;
        case 'L':
            c->last_logits = 1;
            break;
        case 's':
            if (!sweep)
                return erg_cli_usage(cmd, "--set belongs to 'erg predict sweep'");
            if (c->n_sets == 16)
                return erg_cli_usage(cmd, "at most 16 --set options");
            snprintf(c->sets[c->n_sets++], sizeof c->sets[0], "%s", optarg);
            break;
        case 'h':
            (sweep ? help_sweep : help_model)(stdout);
            return -1;
        default:
            return erg_cli_bad_option(cmd, argc, argv, "h", opts);
        }
    }
    if (c->json && c->csv)
        return erg_cli_usage(cmd, "give either --csv or --json");
    if (optind != argc - 1)
        return erg_cli_usage(cmd,
                             optind == argc ? "missing CONFIG.json" : "expected one CONFIG.json");
    c->config = argv[optind];
    if (!c->target) {
        char names[512];
        erg_predict_targets(names, sizeof names);
        return erg_cli_usage(cmd, "--target NAME|DIR is required (the targets: %s, or a folder)",
                             names[0] ? names : "none found");
    }
    if (c->have_kv && c->phases == 1)
        return erg_cli_usage(cmd, "--kv sets the decode phase's KV cache; --phase prefill has "
                                  "none (drop --kv, or use --phase decode or both)");
    if (c->output > 0 && (c->have_phase || c->have_kv))
        return erg_cli_usage(cmd, "--output predicts the whole request (the prefill, then the "
                                  "decode steps, each with its own KV length): it takes neither "
                                  "--phase nor --kv");
    if (c->output > 0 && c->schedule)
        return erg_cli_usage(cmd, "--emit-schedule writes the phases, not an --output request: "
                                  "give one or the other");
    if (!c->have_kv)
        c->kv = c->prompt;
    char why[200];
    if (!sweep && tokens_check(c, why, sizeof why))
        return erg_cli_usage(cmd, "%s", why);
    return ERG_EXIT_OK;
}

static erg_phase_spec phase_of(const struct common *c, erg_phase p)
{
    erg_phase_spec s = {p, c->batch, p == ERG_PHASE_PREFILL ? c->prompt : 0,
                        p == ERG_PHASE_DECODE ? c->kv : 0, !c->last_logits};
    return s;
}

/* Load config and target; on error print and return the exit status. */
static int load(const struct common *c, erg_arch *a, erg_predictor **p)
{
    erg_diag diag;
    erg_diag_clear(&diag);
    int rc = erg_arch_from_hf_config(c->config, a, &diag);
    if (rc == ERG_OK)
        rc = erg_predictor_open(c->target, p, &diag);
    if (rc != ERG_OK) {
        int st = erg_cli_fail(&diag, rc);
        return st == ERG_EXIT_NOMETER ? ERG_EXIT_USAGE : st;
    }
    return ERG_EXIT_OK;
}

/* erg predict model's exit after a prediction failed: the message (placed at the config when the
 * library gave no place), the predictor freed; a bad input's status, never "no meter". */
static int model_failed(const struct common *c, erg_predictor *p, erg_diag *diag, int rc)
{
    if (!diag->where[0])
        snprintf(diag->where, sizeof diag->where, "%s", c->config);
    erg_predictor_free(p);
    int st = erg_cli_fail(diag, rc);
    return st == ERG_EXIT_NOMETER ? ERG_EXIT_USAGE : st;
}

static void print_phase(const erg_model_prediction *m)
{
    const erg_phase_spec *p = &m->phase;
    if (p->phase == ERG_PHASE_PREFILL)
        printf("prefill: %lld x %lld tokens", (long long)p->batch, (long long)p->prompt);
    else
        printf("decode: %lld sequence%s x 1 token, KV cache %lld", (long long)p->batch,
               p->batch == 1 ? "" : "s", (long long)p->kv);
    printf(": time %.4g s +- %.2g s, energy ", m->total.time_s, sqrt(m->total.time_var_s2));
    if (isfinite(m->total.energy_j))
        printf("%.4g J +- %.2g J (grade %s)", m->total.energy_j, sqrt(m->total.energy_var_j2),
               erg_grade_name(m->grade));
    else
        printf("- (the target has no energy)");
    printf(", level %d", m->total.level);
    if (m->total.level == 3)
        printf(" (block sum %.4g s x %.3f)", m->blocks_time_s, m->time_factor);
    printf("\n  %-18s %6s %13s %13s %13s %7s\n", "block", "count", "time_s each", "energy_j each",
           "time_s", "share");
    for (size_t i = 0; i < m->n_blocks; i++) {
        const erg_model_block_estimate *b = &m->blocks[i];
        double t = (double)b->count * b->each.time_s;
        char e[32] = "-"; /* a target without energy data: no figure, never "nan" */
        if (isfinite(b->each.energy_j))
            snprintf(e, sizeof e, "%.4g", b->each.energy_j);
        printf("  %-18s %6lld %13.4g %13s %13.4g %6.1f%%\n", b->name, (long long)b->count,
               b->each.time_s, e, t, 100 * t / m->total.time_s);
    }
}

int erg_cli_predict_model(int argc, char **argv)
{
    struct common c;
    int st = parse_common("predict model", argc, argv, &c, 0);
    if (st)
        return st < 0 ? ERG_EXIT_OK : st;
    erg_arch a;
    erg_predictor *p = NULL;
    if ((st = load(&c, &a, &p)))
        return st;
    erg_model_prediction m[2];
    int nm = 0;
    erg_diag diag;
    erg_diag_clear(&diag);
    for (int ph = 0; ph < 2; ph++) {
        if (!(c.phases & (1 << ph)))
            continue;
        erg_phase_spec spec = phase_of(&c, (erg_phase)ph);
        int rc = erg_predict_model(p, &a, &spec, &m[nm], &diag);
        if (rc != ERG_OK) {
            return model_failed(&c, p, &diag, rc);
        }
        nm++;
    }
    erg_model_request req;
    if (c.output > 0) {
        int rc = erg_predict_request(p, &a, &m[0], c.output, &req, &diag);
        if (rc != ERG_OK) {
            return model_failed(&c, p, &diag, rc);
        }
    }
    if (c.schedule) {
        char title[512];
        snprintf(title, sizeof title, "%s on %s (erg predict model)", a.name, erg_predictor_dir(p));
        erg_diag_clear(&diag);
        int rc = erg_model_schedule_write(c.schedule, &a, m, (size_t)nm, c.static_w, title, &diag);
        if (rc != ERG_OK) {
            erg_predictor_free(p);
            if (!diag.where[0])
                snprintf(diag.where, sizeof diag.where, "%s", c.schedule);
            return erg_cli_fail(&diag, rc) == ERG_EXIT_NOMETER ? ERG_EXIT_USAGE : ERG_EXIT_USAGE;
        }
    }
    double srv_itl = NAN, srv_ept = NAN;
    erg_diag sd;
    erg_diag_clear(&sd);
    int srv = (c.phases & 2) && erg_predict_serving_decode(p, c.config, c.batch, c.kv, &srv_itl,
                                                           &srv_ept, &sd) == ERG_OK;
    double params, active;
    params = erg_arch_params(&a, &active);
    /* quantized weights, weights + KV cache against the target's memory, sequences beyond the
     * trained length: warn, never refuse */
    erg_model_query q = {c.phases, c.batch, c.prompt, c.kv, c.output};
    erg_model_warning warnings[ERG_MODEL_WARNINGS_MAX];
    size_t nw = 0;
    if (erg_model_warnings(&a, p, &q, warnings, &nw, &diag) != ERG_OK)
        return model_failed(&c, p, &diag, diag.status);
    for (size_t i = 0; i < nw; i++)
        fprintf(stderr, "erg: warning: %s\n", warnings[i].text);
    if (c.json) {
        const char *wl[ERG_MODEL_WARNINGS_MAX];
        for (size_t i = 0; i < nw; i++)
            wl[i] = warnings[i].text;
        erg_model_report r = {.config = c.config,
                              .arch = &a,
                              .target = p,
                              .phases = m,
                              .n_phases = (size_t)nm,
                              .has_serving = srv,
                              .serving_itl_s = srv_itl,
                              .serving_energy_per_token_j = srv_ept,
                              .request = c.output > 0 ? &req : NULL,
                              .warnings = wl,
                              .n_warnings = nw,
                              .schedule = c.schedule};
        erg_diag_clear(&diag);
        int rc = erg_model_prediction_write_json("-", &r, &diag);
        if (rc != ERG_OK) {
            erg_predictor_free(p);
            return erg_cli_fail(&diag, rc);
        }
    } else {
        int top = erg_predictor_level(p);
        char lv[32];
        if (top > 1)
            snprintf(lv, sizeof lv, "levels 1-%d", top);
        else
            snprintf(lv, sizeof lv, "level %d only", top);
        printf("%s (%s, %.3g B parameters, %.3g B active) on %s (%s)\n", a.name, a.family,
               params / 1e9, active / 1e9, erg_predictor_dir(p), lv);
        for (int i = 0; i < nm; i++) {
            print_phase(&m[i]);
            if (srv && m[i].phase.phase == ERG_PHASE_DECODE)
                printf("  as served (the target's serving level 3, ML.ENERGY's steady-state vLLM "
                       "decode, 1 GPU): ITL %.4g s, energy %.4g J per output token\n",
                       srv_itl, srv_ept);
        }
        if (c.output > 0) {
            printf("request: %lld x (%lld prompt + %lld output tokens): time %.4g s +- %.2g s "
                   "(prefill %.4g s, %lld decode steps %.4g s",
                   (long long)c.batch, (long long)c.prompt, (long long)req.output, req.time_s,
                   req.time_sd_s, req.prefill_time_s, (long long)req.steps, req.decode_time_s);
            if (req.steps > 0)
                printf(", %.4g s per output token", req.decode_time_s / (double)req.steps);
            printf("), energy ");
            if (isfinite(req.energy_j))
                printf("%.4g J +- %.2g J (%.4g J per output token, grade %s)\n", req.energy_j,
                       req.energy_sd_j, req.energy_j / ((double)c.batch * (double)req.output),
                       erg_grade_name(req.grade));
            else
                printf("- (the target has no energy)\n");
        }
        if (c.schedule)
            printf("schedule: %s ('erg compose %s' gives these totals)\n", c.schedule, c.schedule);
    }
    erg_predictor_free(p);
    return ERG_EXIT_OK;
}

/* ---------------------------------------------------------------- sweep */

static int parse_set(const char *text, erg_sweep_range *r)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof r->key)
        return erg_cli_usage("predict sweep", "--set expects KEY=A:B:STEP or KEY=A, got '%s'",
                             text);
    snprintf(r->key, sizeof r->key, "%.*s", (int)(eq - text), text);
    long long v[3] = {0, 0, 1};
    int n = 0;
    const char *p = eq + 1;
    for (;;) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || errno || x <= 0 || n == 3)
            return erg_cli_usage("predict sweep",
                                 "--set %s: expected positive integers A:B:STEP or A, got '%s'",
                                 r->key, eq + 1);
        v[n++] = x;
        if (*end == '\0')
            break;
        if (*end != ':')
            return erg_cli_usage("predict sweep", "--set %s: expected A:B:STEP, got '%s'", r->key,
                                 eq + 1);
        p = end + 1;
    }
    if (n == 2)
        return erg_cli_usage("predict sweep", "--set %s: give STEP too (A:B:STEP)", r->key);
    r->lo = v[0];
    r->hi = n == 1 ? v[0] : v[1];
    r->step = n == 1 ? 1 : v[2];
    if (r->hi < r->lo)
        return erg_cli_usage("predict sweep", "--set %s: B (%lld) is below A (%lld)", r->key,
                             (long long)r->hi, (long long)r->lo);
    erg_arch probe;
    memset(&probe, 0, sizeof probe);
    probe.d_model = 64;
    if (strcmp(r->key, "batch") && strcmp(r->key, "prompt") && strcmp(r->key, "kv") &&
        strcmp(r->key, "heads") && erg_arch_set(&probe, r->key, 1, NULL) != ERG_OK)
        return erg_cli_usage("predict sweep",
                             "--set: unknown key '%s' (d_model, n_heads, n_kv_heads, head_dim, "
                             "heads, d_ff, d_ff_expert, n_layers, n_experts, top_k, n_shared, "
                             "d_ff_shared, window, vocab, batch, prompt, kv)",
                             r->key);
    return 0;
}

/* erg predict sweep's header: the JSON document up to its rows (w), or the table's (CSV's)
 * column names. ERG_OK, or the status of erg_model_sweep_open with diag set. */
static int sweep_head(const struct common *c, const erg_sweep_range *r, const erg_predictor *p,
                      erg_model_sweep_writer **w, erg_diag *diag)
{
    const char *sep = c->csv ? "," : " ";
    if (c->json) {
        const char *keys[16];
        for (int i = 0; i < c->n_sets; i++)
            keys[i] = r[i].key;
        return erg_model_sweep_open("-", c->config, erg_predictor_dir(p), keys, (size_t)c->n_sets,
                                    w, diag);
    }
    for (int i = 0; i < c->n_sets; i++)
        printf(c->csv ? "%s%s" : "%10s%s", r[i].key, sep);
    printf(c->csv ? "phase,time_s,energy_j,attention_time_s,attention_energy_j,ffn_time_s,"
                    "ffn_energy_j\n"
                  : "%8s %12s %12s %17s %19s %12s %13s\n",
           "phase", "time_s", "energy_j", "attention_time_s", "attention_energy_j", "ffn_time_s",
           "ffn_energy_j");
    return ERG_OK;
}

/* What erg predict sweep prints as erg_predict_sweep hands it the points. */
struct sweep_out {
    const struct common *c;
    const erg_sweep_range *r;
    const erg_predictor *p;
    erg_model_sweep_writer *w; /* --json */
    int have_head;             /* the header is printed before the first row */
};

/* A row: the table's or CSV's line, or the document's row (the first block of each kind). */
static int sweep_row(void *ctx, const int64_t *cur, const erg_model_prediction *m)
{
    struct sweep_out *o = ctx;
    const struct common *c = o->c;
    if (!o->have_head && !c->json)
        (void)sweep_head(c, o->r, o->p, NULL, NULL);
    o->have_head = 1;
    if (c->json)
        return erg_model_sweep_row(o->w, cur, m);
    const char *sep = c->csv ? "," : " ";
    erg_estimate at, ffn;
    (void)erg_model_prediction_first_blocks(m, &at, &ffn);
    for (int i = 0; i < c->n_sets; i++)
        printf(c->csv ? "%lld%s" : "%10lld%s", (long long)cur[i], sep);
    /* energy without a figure (a time-only target): an empty CSV cell, "-" in the table */
    char te[32], ea[32], ef[32];
    const double ev[3] = {m->total.energy_j, at.energy_j, ffn.energy_j};
    char *es[3] = {te, ea, ef};
    for (int k = 0; k < 3; k++) {
        if (isfinite(ev[k]))
            snprintf(es[k], 32, "%.6g", ev[k]);
        else
            snprintf(es[k], 32, "%s", c->csv ? "" : "-");
    }
    printf(c->csv ? "%s,%.6g,%s,%.6g,%s,%.6g,%s\n" : "%8s %12.5g %12s %17.5g %19s %12.5g %13s\n",
           erg_phase_name(m->phase.phase), m->total.time_s, te, at.time_s, ea, ffn.time_s, ef);
    return ERG_OK;
}

/* A skipped point: on stderr, and in the document's "skipped". */
static int sweep_skip(void *ctx, const int64_t *cur, const char *reason)
{
    struct sweep_out *o = ctx;
    fprintf(stderr, "erg: skipped");
    for (int i = 0; i < o->c->n_sets; i++)
        fprintf(stderr, " %s=%lld", o->r[i].key, (long long)cur[i]);
    fprintf(stderr, ": %s\n", reason);
    return o->c->json ? erg_model_sweep_skip(o->w, cur, reason) : ERG_OK;
}

int erg_cli_predict_sweep(int argc, char **argv)
{
    struct common c;
    int st = parse_common("predict sweep", argc, argv, &c, 1);
    if (st)
        return st < 0 ? ERG_EXIT_OK : st;
    if (c.n_sets == 0)
        return erg_cli_usage("predict sweep", "sweep needs at least one --set KEY=A:B:STEP");
    erg_sweep_range r[ERG_SWEEP_MAX_KEYS];
    size_t points = 1;
    for (int i = 0; i < c.n_sets; i++) {
        if ((st = parse_set(c.sets[i], &r[i])))
            return st;
        for (int j = 0; j < i; j++)
            if (strcmp(r[j].key, r[i].key) == 0)
                return erg_cli_usage("predict sweep",
                                     "--set %s is given twice (one range per key: A:B:STEP)",
                                     r[i].key);
        points *= (size_t)((r[i].hi - r[i].lo) / r[i].step + 1);
        if (points > ERG_SWEEP_MAX_POINTS)
            return erg_cli_usage("predict sweep", "the sweep has more than 10^7 points");
    }
    erg_arch base;
    erg_predictor *p = NULL;
    if ((st = load(&c, &base, &p)))
        return st;
    /* the architecture's own warnings (quantized weights): the swept sizes vary */
    erg_model_query q = {0, c.batch, c.prompt, c.kv, 0};
    erg_model_warning qw[ERG_MODEL_WARNINGS_MAX];
    size_t nq = 0;
    erg_diag qd;
    erg_diag_clear(&qd);
    if (erg_model_warnings(&base, p, &q, qw, &nq, &qd) != ERG_OK) {
        erg_predictor_free(p);
        return erg_cli_fail(&qd, qd.status);
    }
    for (size_t i = 0; i < nq; i++)
        fprintf(stderr, "erg: warning: %s\n", qw[i].text);
    /* the header is printed before the first row: none when nothing is (--json: the document
     * is buffered until its first rows and abandoned when there are none) */
    struct sweep_out so = {&c, r, p, NULL, 0};
    if (c.json) {
        erg_diag hd;
        erg_diag_clear(&hd);
        if ((st = sweep_head(&c, r, p, &so.w, &hd)) != ERG_OK) {
            erg_predictor_free(p);
            return erg_cli_fail(&hd, st);
        }
    }
    erg_phase_spec spec = {ERG_PHASE_PREFILL, c.batch, c.prompt, c.kv, !c.last_logits};
    erg_diag sd;
    erg_diag_clear(&sd);
    int rc = erg_predict_sweep(p, &base, &spec, c.phases, c.have_kv, r, (size_t)c.n_sets, sweep_row,
                               sweep_skip, &so, NULL, &sd);
    erg_predictor_free(p);
    if (rc != ERG_OK) {
        erg_model_sweep_abort(so.w);
        return erg_cli_fail(NULL, rc);
    }
    if (!so.have_head) { /* every point skipped: nothing predicted, nothing on stdout */
        erg_model_sweep_abort(so.w);
        fprintf(stderr,
                "erg predict sweep: every point (%zu) was skipped: nothing predicted; the "
                "reasons are above\n",
                points);
        return ERG_EXIT_USAGE;
    }
    if (c.json) {
        erg_diag d;
        erg_diag_clear(&d);
        rc = erg_model_sweep_close(so.w, &d);
        if (rc != ERG_OK)
            return erg_cli_fail(&d, rc);
    }
    return ERG_EXIT_OK;
}
