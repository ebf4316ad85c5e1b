/* SPDX-License-Identifier: MIT */
/*
 * Frontier of an expression (series-parallel) schedule by the composition rules of the paper's
 * Section 6.2: ⊗ as the Pareto-min of the Minkowski sum (Property 6.1), ⊕ with a shared device
 * operating point and slack (6.2.2), ⊕multi with each device held at its static power.
 *
 * Every sub-expression yields a candidate set of real choices. Candidates carry (T, S, d, h): time,
 * static energy, dynamic energy and hold power h = S/T (closure, Property 5.3), plus the ω_dev
 * group of their first and last leaf (for transition elements) and their uniform group (for ⊕).
 * A candidate is dropped only when another of the same class dominates it for every use an
 * enclosing operator can make of it: in (T, E) when no ⊕/⊕multi encloses it, in (T, d, h) when
 * one does (padding to a makespan T* costs h·T* + d).
 */
#include "frontier/opsched.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_TR (-2) /* class key when the schedule declares no transition */

struct cand {
    double t, S, d, h;
    int first, last, uni;
};

struct cset {
    size_t n, cap;
    struct cand *c;
    size_t arity;
    size_t *kids; /* n × arity: operand candidate indices, or the point index for a leaf */
    struct cset **sub;
    size_t leaf; /* choice slot of a leaf, FR_NONE otherwise */
};

struct ctx {
    const erg_opsched *os;
    int has_tr;
    double delta; /* trimming factor per ⊗ step, 0 for exact */
    size_t n_pool, cap_pool;
    struct cset **pool;
    size_t n_slot, cap_slot;
    char **slot_name;
    size_t *uses; /* per element: leaves named after it so far */
    erg_diag *diag;
    int inexact; /* a padded ⊗ combined parts of different hold powers (docs/frontier.md) */
};

static void cset_free(struct cset *s)
{
    if (!s)
        return;
    free(s->c);
    free(s->kids);
    free(s->sub);
    free(s);
}

static struct cset *cset_new(struct ctx *x, size_t arity)
{
    struct cset *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (erg__fr_grow((void **)&x->pool, &x->cap_pool, x->n_pool + 1, sizeof *x->pool)) {
        free(s);
        return NULL;
    }
    x->pool[x->n_pool++] = s;
    s->arity = arity;
    s->leaf = FR_NONE;
    s->sub = calloc(arity, sizeof *s->sub);
    return s->sub ? s : NULL;
}

/* ERG_ERANGE (named by eval) when a candidate's time, energies or hold power are not finite. */
static int cset_push(struct cset *s, const struct cand *c, const size_t *kids)
{
    if (!isfinite(c->t) || !isfinite(c->S) || !isfinite(c->d) || !isfinite(c->h) ||
        !isfinite(c->S + c->d))
        return ERG_ERANGE;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct cand *nc = realloc(s->c, cap * sizeof *nc);
        if (!nc)
            return ERG_ENOMEM;
        s->c = nc;
        size_t *nk = realloc(s->kids, cap * s->arity * sizeof *nk);
        if (!nk)
            return ERG_ENOMEM;
        s->kids = nk;
        s->cap = cap;
    }
    s->c[s->n] = *c;
    memcpy(&s->kids[s->n * s->arity], kids, s->arity * sizeof *kids);
    s->n++;
    return ERG_OK;
}

/* ---- pruning ---- */

struct ord {
    const struct cand *c;
    size_t i;
    int padded;
};

static int cls_cmp(const struct cand *a, const struct cand *b)
{
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    if (a->last != b->last)
        return a->last < b->last ? -1 : 1;
    if (a->uni != b->uni)
        return a->uni < b->uni ? -1 : 1;
    return 0;
}

static int cmp_ord(const void *pa, const void *pb)
{
    const struct ord *a = pa, *b = pb;
    int k = cls_cmp(a->c, b->c);
    if (k)
        return k;
    if (a->c->t != b->c->t)
        return a->c->t < b->c->t ? -1 : 1;
    double ea = a->padded ? a->c->d : a->c->S + a->c->d;
    double eb = b->padded ? b->c->d : b->c->S + b->c->d;
    if (ea != eb)
        return ea < eb ? -1 : 1;
    if (a->c->h != b->c->h)
        return a->c->h < b->c->h ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

/* Keep the non-dominated candidates of each class; with delta > 0 (and not padded) also trim:
 * drop q when the last kept p (T_p ≤ T_q) has E_p ≤ (1+delta)·E_q. */
static int prune(struct cset *s, int padded, double delta)
{
    if (s->n <= 1)
        return ERG_OK;
    struct ord *o = malloc(s->n * sizeof *o);
    char *keep = calloc(s->n, 1);
    size_t *kept = malloc(s->n * sizeof *kept);
    if (!o || !keep || !kept) {
        free(o);
        free(keep);
        free(kept);
        return ERG_ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++)
        o[i] = (struct ord){&s->c[i], i, padded};
    qsort(o, s->n, sizeof *o, cmp_ord);
    size_t a = 0;
    while (a < s->n) {
        size_t b = a + 1;
        while (b < s->n && cls_cmp(o[a].c, o[b].c) == 0)
            b++;
        int same_h = 1;
        for (size_t i = a + 1; i < b && same_h; i++)
            same_h = fabs(o[i].c->h - o[a].c->h) <= 1e-12 * fmax(1.0, fabs(o[a].c->h));
        if (!padded || same_h) {
            double best = INFINITY, last_kept = INFINITY;
            for (size_t i = a; i < b; i++) {
                double e = padded ? o[i].c->d : o[i].c->S + o[i].c->d;
                if (e < best) {
                    best = e;
                    if (!padded && delta > 0 && last_kept <= (1.0 + delta) * e)
                        continue;
                    keep[o[i].i] = 1;
                    last_kept = e;
                }
            }
        } else {
            size_t nk = 0;
            for (size_t i = a; i < b; i++) {
                const struct cand *q = o[i].c;
                int dom = 0;
                for (size_t k = 0; k < nk && !dom; k++) {
                    const struct cand *p = &s->c[kept[k]];
                    dom = p->t <= q->t && p->d <= q->d && p->h <= q->h;
                }
                if (!dom) {
                    kept[nk++] = o[i].i;
                    keep[o[i].i] = 1;
                }
            }
        }
        a = b;
    }
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!keep[i])
            continue;
        if (w != i) {
            s->c[w] = s->c[i];
            memmove(&s->kids[w * s->arity], &s->kids[i * s->arity], s->arity * sizeof *s->kids);
        }
        w++;
    }
    s->n = w;
    free(o);
    free(keep);
    free(kept);
    return ERG_OK;
}

/* ---- operators ---- */

static const struct fr_transition *find_tr(const erg_opsched *os, int from, int to)
{
    return erg__fr_find_tr(os, from, to);
}

static int leaf_set(struct ctx *x, size_t elem, int padded, struct cset **out)
{
    const struct fr_element *el = &x->os->elem[elem];
    struct cset *s = cset_new(x, 1);
    if (!s)
        return ERG_ENOMEM;
    /* Choice slot, named after the element ("#k" for its k-th use). */
    size_t uses = x->uses[elem]++;
    if (erg__fr_grow((void **)&x->slot_name, &x->cap_slot, x->n_slot + 1, sizeof *x->slot_name))
        return ERG_ENOMEM;
    char name[ERG_SIG_NAME_MAX + 24];
    if (uses)
        snprintf(name, sizeof name, "%s#%zu", el->name, uses + 1);
    else
        snprintf(name, sizeof name, "%s", el->name);
    if (!(x->slot_name[x->n_slot] = strdup(name)))
        return ERG_ENOMEM;
    s->leaf = x->n_slot++;
    for (size_t p = 0; p < el->n; p++) {
        const erg_signature *g = &el->pts[p].sig;
        int grp = el->pts[p].group;
        struct cand c = {g->time_s,
                         g->static_power_w * g->time_s,
                         g->dynamic_energy_j,
                         g->static_power_w,
                         x->has_tr ? grp : NO_TR,
                         x->has_tr ? grp : NO_TR,
                         grp};
        int prc = cset_push(s, &c, &p);
        if (prc != ERG_OK)
            return prc;
    }
    *out = s;
    return prune(s, padded, 0.0);
}

static int seq2(struct ctx *x, struct cset *A, struct cset *B, int padded, struct cset **out)
{
    struct cset *s = cset_new(x, 2);
    if (!s)
        return ERG_ENOMEM;
    s->sub[0] = A;
    s->sub[1] = B;
    size_t next_prune = 65536;
    if (padded == 2 && !x->inexact) {
        /* Inside a ⊕multi operand the parts were pruned in (T, d, h), which is sound for this ⊗
         * only when every part has the same hold power: the padded cost of a ⊗ uses its averaged
         * h = S/T, not monotone in a part's T when the other parts' h differ. Flag it. (Inside a
         * ⊕ operand only candidates of one uniform ω_dev group are used, all at one static
         * power, and pruning never compares candidates of different groups.) */
        double hmin = INFINITY, hmax = -INFINITY;
        for (size_t i = 0; i < A->n; i++)
            hmin = fmin(hmin, A->c[i].h), hmax = fmax(hmax, A->c[i].h);
        for (size_t j = 0; j < B->n; j++)
            hmin = fmin(hmin, B->c[j].h), hmax = fmax(hmax, B->c[j].h);
        for (size_t i = 0; x->has_tr && i < A->n; i++)
            for (size_t j = 0; j < B->n; j++) {
                const struct fr_transition *tr = find_tr(x->os, A->c[i].last, B->c[j].first);
                if (tr)
                    hmin = fmin(hmin, tr->sig.static_power_w),
                    hmax = fmax(hmax, tr->sig.static_power_w);
            }
        if (hmax - hmin > 1e-9 * fmax(fabs(hmax), 1e-12))
            x->inexact = 1;
    }
    for (size_t i = 0; i < A->n; i++) {
        const struct cand *a = &A->c[i];
        for (size_t j = 0; j < B->n; j++) {
            const struct cand *b = &B->c[j];
            struct cand c = {a->t + b->t,
                             a->S + b->S,
                             a->d + b->d,
                             0,
                             a->first,
                             b->last,
                             a->uni == b->uni ? a->uni : -1};
            const struct fr_transition *tr = x->has_tr ? find_tr(x->os, a->last, b->first) : NULL;
            if (tr) {
                c.t += tr->sig.time_s;
                c.S += tr->sig.static_power_w * tr->sig.time_s;
                c.d += tr->sig.dynamic_energy_j;
                c.uni = -1;
            }
            c.h = c.t > 0 ? c.S / c.t : b->h;
            size_t k[2] = {i, j};
            int prc = cset_push(s, &c, k);
            if (prc != ERG_OK)
                return prc;
        }
        /* Keep memory bounded: prune whenever the candidates have doubled since the last prune. */
        if (s->n > next_prune) {
            if (prune(s, padded, 0.0))
                return ERG_ENOMEM;
            next_prune = 2 * s->n + 65536;
        }
    }
    *out = s;
    return prune(s, padded, padded ? 0.0 : x->delta);
}

struct byt {
    double t;
    size_t i;
};

static int cmp_byt(const void *pa, const void *pb)
{
    const struct byt *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

static int cmp_dbl(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : (a > b);
}

/* ⊕ on one device: at each makespan T*, s_g·T* + Σ_k min{d : point of operand k at group g, T ≤
 * T*}. */
/* Append to buf (size cap, used *len) what operand k of ⊕ is and the ω_dev groups it can run at. */
static void describe_operand(const struct ctx *x, const struct fr_expr *e, const char *path,
                             const struct cset *op, size_t k, char *buf, size_t cap, size_t *len)
{
    const erg_opsched *os = x->os;
    const struct fr_expr *kid = &os->expr[e->kids[k]];
    int w;
    if (kid->op == ERG_EXPR_LEAF)
        w = snprintf(buf + *len, cap - *len, "%s\"%s\" (%s.par[%zu]) at", k ? "; " : "",
                     os->elem[kid->elem].name, path, k);
    else
        w = snprintf(buf + *len, cap - *len, "%s%s.par[%zu] at", k ? "; " : "", path, k);
    *len = w > 0 && (size_t)w < cap - *len ? *len + (size_t)w : cap - 1;
    size_t shown = 0, mixed = 0;
    for (size_t i = 0; i < op->n; i++) {
        int g = op->c[i].uni;
        if (g < 0) {
            mixed = 1;
            continue;
        }
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = op->c[j].uni == g;
        if (seen)
            continue;
        if (shown++ == 4) {
            w = snprintf(buf + *len, cap - *len, " …");
        } else if (shown <= 4) {
            const char *om = os->group[g].omega;
            w = snprintf(buf + *len, cap - *len, "%s %s on %s", shown > 1 ? "," : "",
                         om[0] ? om : "no ω_dev (no omega.device)", os->group[g].device);
        } else
            continue;
        *len = w > 0 && (size_t)w < cap - *len ? *len + (size_t)w : cap - 1;
    }
    if (mixed) {
        w = snprintf(buf + *len, cap - *len, "%s mixed ω_dev", shown ? "," : "");
        *len = w > 0 && (size_t)w < cap - *len ? *len + (size_t)w : cap - 1;
    }
}

static int par_op(struct ctx *x, const struct fr_expr *e, const char *path, struct cset **ops,
                  size_t n, int padded, struct cset **out)
{
    const erg_opsched *os = x->os;
    struct cset *s = cset_new(x, n);
    if (!s)
        return ERG_ENOMEM;
    memcpy(s->sub, ops, n * sizeof *ops);
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += ops[k]->n;
    struct byt **lists = calloc(n, sizeof *lists);
    size_t *len = calloc(n, sizeof *len), *pos = calloc(n, sizeof *pos),
           *arg = calloc(n, sizeof *arg);
    size_t *pick = calloc(n, sizeof *pick);
    double *ts = malloc((total + 1) * sizeof *ts);
    int rc = ERG_OK, any = 0;
    if (!lists || !len || !pos || !arg || !pick || !ts) {
        rc = ERG_ENOMEM;
        goto done;
    }
    for (size_t k = 0; k < n && rc == ERG_OK; k++)
        if (!(lists[k] = malloc((ops[k]->n + 1) * sizeof **lists)))
            rc = ERG_ENOMEM;
    for (size_t gi = 0; gi < ops[0]->n && rc == ERG_OK; gi++) {
        int g = ops[0]->c[gi].uni;
        if (g < 0)
            continue;
        int seen = 0; /* handle each group once */
        for (size_t j = 0; j < gi && !seen; j++)
            seen = ops[0]->c[j].uni == g;
        if (seen)
            continue;
        int all = 1;
        double sg = ops[0]->c[gi].h;
        size_t nts = 0;
        for (size_t k = 0; k < n && rc == ERG_OK; k++) {
            len[k] = 0;
            for (size_t i = 0; i < ops[k]->n; i++) {
                const struct cand *c = &ops[k]->c[i];
                if (c->uni != g)
                    continue;
                if (fabs(c->h - sg) > 1e-6 * fmax(fabs(sg), 1e-9)) {
                    rc = erg_diag_set(
                        x->diag, ERG_EINVAL, NULL,
                        "⊕ operands on device %s at ω_dev %s have static power %g W and %g W "
                        "(operands of ⊕ share one static power)",
                        os->group[g].device, os->group[g].omega[0] ? os->group[g].omega : "{}", sg,
                        c->h);
                    break;
                }
                lists[k][len[k]++] = (struct byt){c->t, i};
                ts[nts++] = c->t;
            }
            if (len[k] == 0)
                all = 0;
        }
        if (rc != ERG_OK || !all)
            continue;
        any = 1;
        double tlo = 0;
        for (size_t k = 0; k < n; k++) {
            qsort(lists[k], len[k], sizeof **lists, cmp_byt);
            tlo = fmax(tlo, lists[k][0].t);
            pos[k] = 0;
            arg[k] = FR_NONE;
        }
        qsort(ts, nts, sizeof *ts, cmp_dbl);
        for (size_t q = 0; q < nts && rc == ERG_OK; q++) {
            double T = ts[q];
            if (T < tlo || (q > 0 && ts[q - 1] == T))
                continue;
            struct cand c = {0, 0, 0, sg, x->has_tr ? g : NO_TR, x->has_tr ? g : NO_TR, g};
            for (size_t k = 0; k < n; k++) {
                while (pos[k] < len[k] && lists[k][pos[k]].t <= T) {
                    size_t i = lists[k][pos[k]].i;
                    if (arg[k] == FR_NONE || ops[k]->c[i].d < ops[k]->c[arg[k]].d)
                        arg[k] = i;
                    pos[k]++;
                }
                if (arg[k] == FR_NONE) { /* no finite choice at this makespan */
                    rc = ERG_ERANGE;
                    break;
                }
                pick[k] = arg[k];
                c.t = fmax(c.t, ops[k]->c[arg[k]].t);
                c.d += ops[k]->c[arg[k]].d;
            }
            if (rc == ERG_OK) {
                c.S = sg * c.t;
                rc = cset_push(s, &c, pick);
            }
        }
    }
    if (rc == ERG_OK && !any) {
        char what[300]; /* the diag keeps 512 bytes: leave room for the path and the hint */
        size_t used = 0;
        what[0] = '\0';
        for (size_t k = 0; k < n; k++)
            describe_operand(x, e, path, ops[k], k, what, sizeof what, &used);
        rc = erg_diag_set(x->diag, ERG_EINVAL, NULL,
                          "%s: ⊕ operands share no device operating point (ω_dev): %s; give every "
                          "operand the same \"omega\": {\"device\": ...} (or omega_device for "
                          "points) on one device; operands on different devices compose with multi",
                          path, what);
    }
done:
    if (lists)
        for (size_t k = 0; k < n; k++)
            free(lists[k]);
    free(lists);
    free(len);
    free(pos);
    free(arg);
    free(pick);
    free(ts);
    if (rc != ERG_OK)
        return rc;
    *out = s;
    return prune(s, padded, 0.0);
}

/* ⊕multi: each operand held at its hold power h for the whole makespan; at T* operand k takes
 * argmin{h·T* + d : T ≤ T*}. */
static int multi_op(struct ctx *x, struct cset **ops, size_t n, int padded, struct cset **out)
{
    struct cset *s = cset_new(x, n);
    if (!s)
        return ERG_ENOMEM;
    memcpy(s->sub, ops, n * sizeof *ops);
    size_t total = 0;
    double tlo = 0;
    for (size_t k = 0; k < n; k++) {
        total += ops[k]->n;
        double mn = INFINITY;
        for (size_t i = 0; i < ops[k]->n; i++)
            mn = fmin(mn, ops[k]->c[i].t);
        tlo = fmax(tlo, mn);
    }
    double *ts = malloc((total + 1) * sizeof *ts);
    size_t *pick = malloc(n * sizeof *pick);
    if (!ts || !pick) {
        free(ts);
        free(pick);
        return ERG_ENOMEM;
    }
    size_t nts = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < ops[k]->n; i++)
            if (ops[k]->c[i].t >= tlo)
                ts[nts++] = ops[k]->c[i].t;
    qsort(ts, nts, sizeof *ts, cmp_dbl);
    int rc = ERG_OK;
    for (size_t q = 0; q < nts && rc == ERG_OK; q++) {
        double T = ts[q];
        if (q > 0 && ts[q - 1] == T)
            continue;
        struct cand c = {0, 0, 0, 0, x->has_tr ? -1 : NO_TR, x->has_tr ? -1 : NO_TR, -1};
        for (size_t k = 0; k < n; k++) {
            size_t bi = FR_NONE;
            double be = INFINITY;
            for (size_t i = 0; i < ops[k]->n; i++) {
                const struct cand *a = &ops[k]->c[i];
                if (a->t > T)
                    continue;
                double e = a->h * T + a->d;
                if (e < be || (e == be && bi != FR_NONE && a->h < ops[k]->c[bi].h)) {
                    be = e;
                    bi = i;
                }
            }
            if (bi == FR_NONE) { /* no finite choice at this makespan */
                rc = ERG_ERANGE;
                break;
            }
            pick[k] = bi;
            c.t = fmax(c.t, ops[k]->c[bi].t);
            c.d += ops[k]->c[bi].d;
            c.h += ops[k]->c[bi].h;
        }
        if (rc == ERG_OK) {
            c.S = c.h * c.t;
            rc = cset_push(s, &c, pick);
        }
    }
    free(ts);
    free(pick);
    if (rc != ERG_OK)
        return rc;
    *out = s;
    return prune(s, padded, 0.0);
}

/* Largest number of ε-trims on any path from the root to a leaf: each trim multiplies the energy
 * error by at most (1 + δ), so δ = (1+ε)^(1/depth) − 1 keeps the total within 1 + ε. Sequences are
 * merged as balanced binary trees in ε mode, so a chain of n adds ⌈log2 n⌉ trims, not n − 1. */
static size_t ceil_log2(size_t n)
{
    size_t k = 0;
    while (((size_t)1 << k) < n)
        k++;
    return k;
}

static size_t count_trims(const erg_opsched *os, size_t id, int padded)
{
    const struct fr_expr *e = &os->expr[id];
    if (e->op == ERG_EXPR_LEAF || padded || e->op != ERG_EXPR_SEQ)
        return 0; /* no trimming inside ⊕/⊕multi operands */
    size_t deepest = 0;
    for (size_t k = 0; k < e->n; k++) {
        size_t c = count_trims(os, e->kids[k], 0);
        deepest = c > deepest ? c : deepest;
    }
    return deepest + ceil_log2(e->n);
}

/* path: the JSON path of expression id as schedule/1 spells it ("expr", "expr.par[1]", ...). */
static int eval(struct ctx *x, size_t id, const char *path, int padded, unsigned depth,
                struct cset **out)
{
    const struct fr_expr *e = &x->os->expr[id];
    if (depth > 10000)
        return erg_diag_set(x->diag, ERG_EINVAL, NULL, "expression nested too deeply");
    if (e->op == ERG_EXPR_LEAF) {
        int lrc = leaf_set(x, e->elem, padded, out);
        if (lrc == ERG_ERANGE)
            return erg_diag_set(x->diag, ERG_ERANGE, NULL,
                                "%s: element \"%s\": a point's energy is not finite (it "
                                "overflows a double; check its units: seconds and joules)",
                                path, x->os->elem[e->elem].name);
        return lrc;
    }
    /* 0: not padded; 1: inside a ⊕ operand (padded at the shared static power of its uniform
     * ω_dev group); 2: inside a ⊕multi operand (padded at the averaged hold power h). */
    int sub_padded = e->op == ERG_EXPR_MULTI ? 2 : e->op == ERG_EXPR_PAR ? 1 : padded;
    struct cset **ops = malloc(e->n * sizeof *ops);
    if (!ops)
        return ERG_ENOMEM;
    int rc = ERG_OK;
    const char *key = e->op == ERG_EXPR_SEQ ? "seq" : e->op == ERG_EXPR_PAR ? "par" : "multi";
    for (size_t k = 0; k < e->n && rc == ERG_OK; k++) {
        char sub[512];
        /* a path past 511 bytes (nesting hundreds deep) is cut: it only names places in messages */
        if (snprintf(sub, sizeof sub, "%s.%s[%zu]", path, key, k) >= (int)sizeof sub)
            sub[sizeof sub - 1] = '\0';
        rc = eval(x, e->kids[k], sub, sub_padded, depth + 1, &ops[k]);
    }
    if (rc == ERG_OK) {
        if (e->op == ERG_EXPR_SEQ && x->delta > 0 && !padded) {
            /* Balanced merge tree (⊗ is associative, Property 6.1): fewer trims per path. */
            size_t m = e->n;
            while (m > 1 && rc == ERG_OK) {
                size_t w = 0;
                for (size_t k = 0; k + 1 < m && rc == ERG_OK; k += 2)
                    rc = seq2(x, ops[k], ops[k + 1], padded, &ops[w++]);
                if (m % 2)
                    ops[w++] = ops[m - 1];
                m = w;
            }
            *out = ops[0];
        } else if (e->op == ERG_EXPR_SEQ) {
            struct cset *acc = ops[0];
            for (size_t k = 1; k < e->n && rc == ERG_OK; k++)
                rc = seq2(x, acc, ops[k], padded, &acc);
            *out = acc;
        } else if (e->op == ERG_EXPR_PAR) {
            rc = par_op(x, e, path, ops, e->n, padded, out);
        } else {
            rc = multi_op(x, ops, e->n, padded, out);
        }
    }
    if (rc == ERG_ERANGE && (!x->diag || x->diag->status == ERG_OK))
        rc = erg_diag_set(x->diag, ERG_ERANGE, NULL,
                          "%s: the %s's time or energy is not finite (it overflows a double; "
                          "check the elements' units: seconds and joules)",
                          path, key);
    free(ops);
    return rc;
}

static void reconstruct(const struct cset *s, size_t idx, size_t *row)
{
    if (s->leaf != FR_NONE) {
        row[s->leaf] = s->kids[idx];
        return;
    }
    for (size_t k = 0; k < s->arity; k++)
        reconstruct(s->sub[k], s->kids[idx * s->arity + k], row);
}

int erg__fr_expr_frontier(const erg_opsched *os, const erg_frontier_options *opts,
                          erg_frontier *out, erg_diag *diag)
{
    struct ctx x = {0};
    x.os = os;
    x.has_tr = os->n_tr > 0;
    x.diag = diag;
    x.uses = calloc(os->n_elem + 1, sizeof *x.uses);
    if (!x.uses)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    size_t root = os->n_expr - 1;
    if (opts->epsilon > 0) {
        size_t trims = count_trims(os, root, 0);
        x.delta = trims ? pow(1.0 + opts->epsilon, 1.0 / (double)trims) - 1.0 : 0.0;
    }
    struct cset *rs = NULL;
    int rc = eval(&x, root, "expr", 0, 0, &rs);
    double *t = NULL, *en = NULL;
    size_t *idx = NULL, nk = 0;
    if (rc == ERG_OK) {
        t = malloc((rs->n + 1) * sizeof *t);
        en = malloc((rs->n + 1) * sizeof *en);
        idx = malloc((rs->n + 1) * sizeof *idx);
        if (!t || !en || !idx)
            rc = ERG_ENOMEM;
    }
    if (rc == ERG_OK) {
        for (size_t i = 0; i < rs->n; i++) {
            t[i] = rs->c[i].t;
            en[i] = rs->c[i].S + rs->c[i].d;
        }
        rc = erg_pareto_min(t, en, rs->n, idx, &nk);
    }
    if (rc == ERG_OK) {
        out->n_points = nk;
        out->n_elements = x.n_slot;
        out->points = calloc(nk + 1, sizeof *out->points);
        out->choices = malloc((nk * x.n_slot + 1) * sizeof *out->choices);
        out->element_names = calloc(x.n_slot + 1, sizeof *out->element_names);
        if (!out->points || !out->choices || !out->element_names)
            rc = ERG_ENOMEM;
    }
    if (rc == ERG_OK) {
        out->method = opts->epsilon > 0 ? ERG_FRONTIER_APPROX : ERG_FRONTIER_EXACT;
        out->epsilon = opts->epsilon;
        out->inexact_padding = x.inexact;
        for (size_t i = 0; i < nk; i++) {
            const struct cand *c = &rs->c[idx[i]];
            erg_frontier_point *p = &out->points[i];
            p->time_s = c->t;
            p->static_energy_j = c->S;
            p->dynamic_energy_j = c->d;
            p->energy_j = c->S + c->d;
            /* No lower bound is known when the padding caveat applies: report the trivial 0. */
            p->bound_j = x.inexact ? 0.0 : p->energy_j / (1.0 + opts->epsilon);
            out->max_gap_j = fmax(out->max_gap_j, p->energy_j - p->bound_j);
            reconstruct(rs, idx[i], &out->choices[i * x.n_slot]);
        }
        for (size_t k = 0; k < x.n_slot; k++) {
            out->element_names[k] = x.slot_name[k];
            x.slot_name[k] = NULL;
        }
    }
    if (rc == ERG_ENOMEM && diag && diag->status == ERG_OK)
        erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    if (rc != ERG_OK)
        erg_frontier_free(out);
    free(t);
    free(en);
    free(idx);
    for (size_t i = 0; i < x.n_pool; i++)
        cset_free(x.pool[i]);
    free(x.pool);
    for (size_t i = 0; i < x.n_slot; i++)
        free(x.slot_name[i]);
    free(x.slot_name);
    free(x.uses);
    return rc;
}
