/* SPDX-License-Identifier: MIT */
/*
 * Frontier of an expression (series-parallel) schedule by the composition rules of the paper's
 * Section 6.2: ⊗ as the Pareto-min of the Minkowski sum (Property 6.1), ⊕ with a shared device
 * operating point and slack (6.2.2), ⊕multi with each device held at its static power.
 *
 * Every sub-expression yields a candidate set of real choices. Candidates carry (T, S, d, h, he):
 * time, static energy, dynamic energy, closure static power h = S/T (Property 5.3) and the static
 * power he of the state the candidate ends in (its last leaf's ω_dev; a ⊕multi's: the sum of its
 * operands'), plus the ω_dev group of their first and last leaf (for transition elements) and
 * their uniform group (for ⊕). A ⊕multi operand that ends before the makespan T* is padded by an
 * idle element at he (docs/frontier.md, "Padding"): it costs E + he·(T* − T), linear in T*, so the
 * rules stay exact. A candidate is dropped only when another of the same class dominates it for
 * every use an enclosing operator can make of it: in (T, E) when no ⊕/⊕multi encloses it, in
 * (T, d) per uniform ω_dev group inside a ⊕ operand, and inside a ⊕multi operand in (T, E) with
 * the time difference charged at the most any later padding can cost (prune).
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
    double he; /* static power of the state it ends in, W (what pads it inside a ⊕multi) */
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
    double *hb; /* per expression: the most its candidates' he can be (hend_bound), NAN unknown */
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
    double ea = a->padded == 1 ? a->c->d : a->c->S + a->c->d;
    double eb = b->padded == 1 ? b->c->d : b->c->S + b->c->d;
    if (ea != eb)
        return ea < eb ? -1 : 1;
    if (a->c->h != b->c->h)
        return a->c->h < b->c->h ? -1 : 1;
    if (a->c->he != b->c->he)
        return a->c->he < b->c->he ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

/*
 * Keep the non-dominated candidates of each class; with delta > 0 (and not padded) also trim:
 * drop q when the last kept p (T_p ≤ T_q) has E_p ≤ (1+delta)·E_q.
 * padded 2 (inside a ⊕multi operand): the candidates are padded, from their end to the makespan
 * T*, at a power known only later. pad_w NAN: they end the operand, so at their own he; p then
 * costs no more than q at every T* ≥ T_q iff T_p ≤ T_q, he_p ≤ he_q and E_p + he_p·(T_q − T_p) ≤
 * E_q. pad_w finite: a later part ends the operand, padding at most pad_w W, so p is never worse
 * iff T_p ≤ T_q and E_p + pad_w·(T_q − T_p) ≤ E_q (a ⊗ adds the same to both and a ⊕multi
 * compares them at the same makespan).
 */
static int prune(struct cset *s, int padded, double pad_w, double delta)
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
        if (padded == 2) {
            size_t nk = 0;
            for (size_t i = a; i < b; i++) {
                const struct cand *q = o[i].c;
                double eq = q->S + q->d;
                int dom = 0;
                for (size_t k = 0; k < nk && !dom; k++) {
                    const struct cand *p = &s->c[kept[k]];
                    double w = isnan(pad_w) ? p->he : pad_w;
                    dom = p->t <= q->t && (!isnan(pad_w) || p->he <= q->he) &&
                          p->S + p->d + w * (q->t - p->t) <= eq;
                }
                if (!dom) {
                    kept[nk++] = o[i].i;
                    keep[o[i].i] = 1;
                }
            }
        } else if (!padded || same_h) {
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

static int leaf_set(struct ctx *x, size_t elem, int padded, double pad_w, struct cset **out)
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
                         grp,
                         g->static_power_w};
        int prc = cset_push(s, &c, &p);
        if (prc != ERG_OK)
            return prc;
    }
    *out = s;
    return prune(s, padded, pad_w, 0.0);
}

/* A then B: times, static and dynamic energies add (with a declared transition between); the
 * result ends in B's state (he). pad_w: as prune, for the result. */
static int seq2(struct ctx *x, struct cset *A, struct cset *B, int padded, double pad_w,
                struct cset **out)
{
    struct cset *s = cset_new(x, 2);
    if (!s)
        return ERG_ENOMEM;
    s->sub[0] = A;
    s->sub[1] = B;
    size_t next_prune = 65536;
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
                             a->uni == b->uni ? a->uni : -1,
                             b->he};
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
            if (prune(s, padded, pad_w, 0.0))
                return ERG_ENOMEM;
            next_prune = 2 * s->n + 65536;
        }
    }
    *out = s;
    return prune(s, padded, pad_w, padded ? 0.0 : x->delta);
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
                  size_t n, int padded, double pad_w, struct cset **out)
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
            struct cand c = {0, 0, 0, sg, x->has_tr ? g : NO_TR, x->has_tr ? g : NO_TR, g, sg};
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
    return prune(s, padded, pad_w, 0.0);
}

/* One ⊕multi operand at makespan T: its candidates with t ≤ T as lines over the extra padding
 * Δ ≥ 0 an enclosing ⊕multi may still add, cost(Δ) = E + he·(T − t) + he·Δ (padded at the state
 * each ends in). env[0] is the cheapest at Δ = 0 (the lowest he among equals); with full, env[j]
 * is the cheapest from Δ = brk[j] on (the lower envelope, slopes strictly decreasing). Returns
 * the number of pieces, 0 when no candidate fits in T. */
static size_t envelope(const struct cset *op, double T, int full, size_t *env, double *brk)
{
    size_t cur = FR_NONE;
    double ccost = INFINITY;
    for (size_t i = 0; i < op->n; i++) {
        const struct cand *a = &op->c[i];
        if (a->t > T)
            continue;
        double cost = a->S + a->d + a->he * (T - a->t);
        if (cost < ccost || (cost == ccost && cur != FR_NONE && a->he < op->c[cur].he)) {
            ccost = cost;
            cur = i;
        }
    }
    if (cur == FR_NONE)
        return 0;
    env[0] = cur;
    brk[0] = 0.0;
    size_t m = 1;
    double at = 0.0;
    while (full) {
        const struct cand *c = &op->c[cur];
        double ac = c->S + c->d + c->he * (T - c->t);
        size_t nxt = FR_NONE;
        double best = INFINITY;
        for (size_t i = 0; i < op->n; i++) {
            const struct cand *a = &op->c[i];
            if (a->t > T || !(a->he < c->he))
                continue;
            double ai = a->S + a->d + a->he * (T - a->t);
            double dl = fmax(at, (ai - ac) / (c->he - a->he)); /* where it gets cheaper */
            if (dl < best || (dl == best && nxt != FR_NONE && a->he < op->c[nxt].he)) {
                best = dl;
                nxt = i;
            }
        }
        if (nxt == FR_NONE || !isfinite(best))
            break;
        env[m] = nxt;
        brk[m] = best;
        m++;
        cur = nxt;
        at = best;
    }
    return m;
}

/* ⊕multi: every device is held for the makespan T*; an operand that ends at T < T* is padded by
 * an idle element at the static power of the state it ends in (he), so at T* operand k takes
 * argmin{E + he·(T* − T) : T ≤ T*}. Inside another ⊕multi operand's end (padded 2, pad_w NAN) the
 * result is padded again at its own he = Σ he_k, so every piece of the operands' envelopes over
 * that extra padding is kept (exact: the operands pad independently). */
static int multi_op(struct ctx *x, struct cset **ops, size_t n, int padded, double pad_w,
                    struct cset **out)
{
    struct cset *s = cset_new(x, n);
    if (!s)
        return ERG_ENOMEM;
    memcpy(s->sub, ops, n * sizeof *ops);
    int full = padded == 2 && isnan(pad_w);
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
    size_t *pick = malloc(n * sizeof *pick), *m = calloc(n, sizeof *m),
           *pos = calloc(n, sizeof *pos);
    size_t **env = calloc(n, sizeof *env);
    double **brk = calloc(n, sizeof *brk);
    int rc = !ts || !pick || !m || !pos || !env || !brk ? ERG_ENOMEM : ERG_OK;
    for (size_t k = 0; k < n && rc == ERG_OK; k++)
        if (!(env[k] = malloc((ops[k]->n + 1) * sizeof **env)) ||
            !(brk[k] = malloc((ops[k]->n + 1) * sizeof **brk)))
            rc = ERG_ENOMEM;
    size_t nts = 0;
    for (size_t k = 0; k < n && rc == ERG_OK; k++)
        for (size_t i = 0; i < ops[k]->n; i++)
            if (ops[k]->c[i].t >= tlo)
                ts[nts++] = ops[k]->c[i].t;
    if (rc == ERG_OK)
        qsort(ts, nts, sizeof *ts, cmp_dbl);
    for (size_t q = 0; q < nts && rc == ERG_OK; q++) {
        double T = ts[q];
        if (q > 0 && ts[q - 1] == T)
            continue;
        for (size_t k = 0; k < n && rc == ERG_OK; k++) {
            m[k] = envelope(ops[k], T, full, env[k], brk[k]);
            pos[k] = 0;
            if (m[k] == 0) /* no finite choice at this makespan */
                rc = ERG_ERANGE;
        }
        while (rc == ERG_OK) {
            struct cand c = {0, 0, 0, 0, x->has_tr ? -1 : NO_TR, x->has_tr ? -1 : NO_TR, -1, 0};
            for (size_t k = 0; k < n; k++) {
                pick[k] = env[k][pos[k]];
                c.t = fmax(c.t, ops[k]->c[pick[k]].t);
            }
            for (size_t k = 0; k < n; k++) {
                const struct cand *a = &ops[k]->c[pick[k]];
                c.S += a->S + a->he * (c.t - a->t); /* its idle element up to the makespan */
                c.d += a->d;
                c.he += a->he;
            }
            c.h = c.t > 0 ? c.S / c.t : c.he;
            if ((rc = cset_push(s, &c, pick)) != ERG_OK)
                break;
            double next = INFINITY;
            for (size_t k = 0; k < n; k++)
                if (pos[k] + 1 < m[k])
                    next = fmin(next, brk[k][pos[k] + 1]);
            if (isinf(next))
                break;
            for (size_t k = 0; k < n; k++)
                while (pos[k] + 1 < m[k] && brk[k][pos[k] + 1] <= next)
                    pos[k]++;
        }
    }
    for (size_t k = 0; env && brk && k < n; k++) {
        free(env[k]);
        free(brk[k]);
    }
    free(env);
    free(brk);
    free(m);
    free(pos);
    free(ts);
    free(pick);
    if (rc != ERG_OK)
        return rc;
    *out = s;
    return prune(s, padded, pad_w, 0.0);
}

/* The most the he of any candidate of expression id can be, W: a leaf's largest static power; a
 * ⊗'s last part's; a ⊕'s largest operand's; a ⊕multi's sum over its operands (memoized in x->hb).
 * It bounds the padding power of the parts before the last in a ⊕multi operand. */
static double hend_bound(struct ctx *x, size_t id)
{
    if (!isnan(x->hb[id]))
        return x->hb[id];
    const struct fr_expr *e = &x->os->expr[id];
    double b = 0.0;
    if (e->op == ERG_EXPR_LEAF) {
        const struct fr_element *el = &x->os->elem[e->elem];
        for (size_t p = 0; p < el->n; p++)
            b = fmax(b, el->pts[p].sig.static_power_w);
    } else if (e->op == ERG_EXPR_SEQ) {
        b = hend_bound(x, e->kids[e->n - 1]);
    } else {
        for (size_t k = 0; k < e->n; k++)
            b = e->op == ERG_EXPR_MULTI ? b + hend_bound(x, e->kids[k])
                                        : fmax(b, hend_bound(x, e->kids[k]));
    }
    return x->hb[id] = b;
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
/* pad_w: inside a ⊕multi operand (padded 2), NAN when this expression ends the operand (its
 * candidates are padded at their own he), else the most the later part that ends it can pad at. */
static int eval(struct ctx *x, size_t id, const char *path, int padded, double pad_w,
                unsigned depth, struct cset **out)
{
    const struct fr_expr *e = &x->os->expr[id];
    if (depth > 10000)
        return erg_diag_set(x->diag, ERG_EINVAL, NULL, "expression nested too deeply");
    if (e->op == ERG_EXPR_LEAF) {
        int lrc = leaf_set(x, e->elem, padded, pad_w, out);
        if (lrc == ERG_ERANGE)
            return erg_diag_set(x->diag, ERG_ERANGE, NULL,
                                "%s: element \"%s\": a point's energy is not finite (it "
                                "overflows a double; check its units: seconds and joules)",
                                path, x->os->elem[e->elem].name);
        return lrc;
    }
    /* 0: not padded; 1: inside a ⊕ operand (padded at the shared static power of its uniform
     * ω_dev group); 2: inside a ⊕multi operand (padded at the static power of the state it ends
     * in). */
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
        /* a ⊕multi's operands each end themselves; inside a ⊕multi operand the parts of a ⊗
         * before its last are padded by whatever ends the operand */
        double kid_pad = NAN;
        if (e->op == ERG_EXPR_SEQ && sub_padded == 2)
            kid_pad = !isnan(pad_w)  ? pad_w
                      : k + 1 < e->n ? hend_bound(x, e->kids[e->n - 1])
                                     : (double)NAN;
        else if (e->op == ERG_EXPR_PAR && sub_padded == 2)
            kid_pad = pad_w;
        rc = eval(x, e->kids[k], sub, sub_padded, kid_pad, depth + 1, &ops[k]);
    }
    if (rc == ERG_OK) {
        if (e->op == ERG_EXPR_SEQ && x->delta > 0 && !padded) {
            /* Balanced merge tree (⊗ is associative, Property 6.1): fewer trims per path. */
            size_t m = e->n;
            while (m > 1 && rc == ERG_OK) {
                size_t w = 0;
                for (size_t k = 0; k + 1 < m && rc == ERG_OK; k += 2)
                    rc = seq2(x, ops[k], ops[k + 1], padded, pad_w, &ops[w++]);
                if (m % 2)
                    ops[w++] = ops[m - 1];
                m = w;
            }
            *out = ops[0];
        } else if (e->op == ERG_EXPR_SEQ) {
            struct cset *acc = ops[0];
            for (size_t k = 1; k < e->n && rc == ERG_OK; k++) {
                double pw = k + 1 < e->n && padded == 2 && isnan(pad_w)
                                ? hend_bound(x, e->kids[e->n - 1])
                                : pad_w;
                rc = seq2(x, acc, ops[k], padded, pw, &acc);
            }
            *out = acc;
        } else if (e->op == ERG_EXPR_PAR) {
            rc = par_op(x, e, path, ops, e->n, padded, pad_w, out);
        } else {
            rc = multi_op(x, ops, e->n, padded, pad_w, out);
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
    x.hb = malloc((os->n_expr + 1) * sizeof *x.hb);
    if (!x.hb) {
        free(x.uses);
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; i < os->n_expr; i++)
        x.hb[i] = NAN;
    int rc = eval(&x, root, "expr", 0, NAN, 0, &rs);
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
        for (size_t i = 0; i < nk; i++) {
            const struct cand *c = &rs->c[idx[i]];
            erg_frontier_point *p = &out->points[i];
            p->time_s = c->t;
            p->static_energy_j = c->S;
            p->dynamic_energy_j = c->d;
            p->energy_j = c->S + c->d;
            p->bound_j = p->energy_j / (1.0 + opts->epsilon);
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
    free(x.hb);
    return rc;
}
