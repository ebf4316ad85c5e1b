/* SPDX-License-Identifier: MIT */
/* Signatures and the three operators, context-independent form (paper Sections 3.2, 3.3, 4.3, 5.2).
 */
#include "erg/signature.h"
#include "erg/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void erg_signature_init(erg_signature *sig)
{
    memset(sig, 0, sizeof *sig);
    sig->grade = ERG_GRADE_HW_SHUNT;
}

double erg_signature_energy_j(const erg_signature *sig)
{
    return sig->static_power_w * sig->time_s + sig->dynamic_energy_j;
}

double erg_signature_static_energy_j(const erg_signature *sig)
{
    return sig->static_power_w * sig->time_s;
}

double erg_signature_dynamic_var_j2(const erg_signature *sig)
{
    return sig->energy_var_j2 - sig->static_power_w * sig->static_power_w * sig->time_var_s2;
}

int erg_signature_check(const erg_signature *sig, erg_diag *diag)
{
    static const char *const names[] = {"static_power_w", "time_s", "dynamic_energy_j",
                                        "time_var_s2", "energy_var_j2"};
    const double v[] = {sig->static_power_w, sig->time_s, sig->dynamic_energy_j, sig->time_var_s2,
                        sig->energy_var_j2};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (!isfinite(v[i]))
            return erg_diag_set(diag, ERG_EINVAL, NULL, "%s%s%s is not finite", sig->name,
                                sig->name[0] ? ": " : "", names[i]);
        if (v[i] < 0.0)
            return erg_diag_set(diag, ERG_EINVAL, NULL, "%s%s%s is negative (%g)", sig->name,
                                sig->name[0] ? ": " : "", names[i], v[i]);
    }
    double floor = sig->static_power_w * sig->static_power_w * sig->time_var_s2;
    if (sig->energy_var_j2 < floor * (1.0 - 1e-9) - 1e-300)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "%s%senergy_var_j2 (%g J^2) is below static_power_w^2 * time_var_s2 "
                            "(%g J^2): the dynamic-energy variance would be negative (Axiom M1)",
                            sig->name, sig->name[0] ? ": " : "", sig->energy_var_j2, floor);
    return ERG_OK;
}

int erg_signature_idle(const char *device, double static_power_w, double time_s, erg_signature *out)
{
    if (!out || !isfinite(static_power_w) || !isfinite(time_s) || static_power_w < 0.0 ||
        time_s < 0.0)
        return ERG_EINVAL;
    erg_signature_init(out);
    out->static_power_w = static_power_w;
    out->time_s = time_s;
    snprintf(out->name, sizeof out->name, "idle");
    if (device)
        snprintf(out->device, sizeof out->device, "%s", device);
    return ERG_OK;
}

/* Common device of the operands, or "" when they differ. */
static void common_device(const erg_signature *ops, size_t n, char *buf, size_t size)
{
    snprintf(buf, size, "%s", ops[0].device);
    for (size_t i = 1; i < n; i++)
        if (strcmp(ops[i].device, buf) != 0) {
            buf[0] = '\0';
            return;
        }
}

/* Whether a composite's time, energies and variances are finite numbers. */
static int composed_finite(const erg_signature *r)
{
    double st = r->static_power_w * r->time_s;
    return isfinite(r->time_s) && isfinite(r->dynamic_energy_j) && isfinite(st) &&
           isfinite(st + r->dynamic_energy_j) && isfinite(r->time_var_s2) &&
           isfinite(r->energy_var_j2);
}

static erg_grade weakest_of(const erg_signature *ops, size_t n)
{
    erg_grade g = ERG_GRADE_HW_SHUNT;
    for (size_t i = 0; i < n; i++)
        g = erg_grade_weakest(g, ops[i].grade);
    return g;
}

/* A composite carries every flag of its parts (their union): a figure built on a stale or
 * wrap-corrected measurement says so wherever it is used. */
static unsigned flags_of(const erg_signature *ops, size_t n)
{
    unsigned f = 0;
    for (size_t i = 0; i < n; i++)
        f |= ops[i].flags;
    return f;
}

int erg_signature_seq(const erg_signature *ops, size_t n, erg_signature *out, erg_diag *diag)
{
    if (!ops || !out || n == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "sequential composition needs at least one operand");
    double e = 0, t = 0, d = 0, ve = 0, vt = 0;
    for (size_t i = 0; i < n; i++) {
        e += erg_signature_energy_j(&ops[i]);
        t += ops[i].time_s;
        d += ops[i].dynamic_energy_j;
        ve += ops[i].energy_var_j2;
        vt += ops[i].time_var_s2;
    }
    erg_signature r;
    erg_signature_init(&r);
    r.time_s = t;
    r.dynamic_energy_j = d;
    r.energy_var_j2 = ve;
    r.time_var_s2 = vt;
    /* Closure (Property 5.3): s' = (E - d')/T'. With T' = 0 all static energy is 0 too. */
    r.static_power_w = t > 0.0 ? (e - d) / t : ops[0].static_power_w;
    if (r.static_power_w < 0.0) /* rounding only: E - d = sum s_i T_i >= 0 */
        r.static_power_w = 0.0;
    r.grade = weakest_of(ops, n);
    r.flags = flags_of(ops, n);
    common_device(ops, n, r.device, sizeof r.device);
    if (!composed_finite(&r)) {
        /* name the operand at which the running sums stop being finite */
        double ce = 0, ct = 0, cv = 0;
        size_t i = 0;
        for (; i + 1 < n; i++) {
            ce += erg_signature_energy_j(&ops[i]);
            ct += ops[i].time_s;
            cv += ops[i].energy_var_j2 + ops[i].time_var_s2;
            if (!isfinite(ce) || !isfinite(ct) || !isfinite(cv))
                break;
        }
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "sequential composition: the time or energy up to operand %zu (\"%s\") "
                            "is not finite (it overflows a double)",
                            i + 1, ops[i].name);
    }
    *out = r;
    return ERG_OK;
}

/* Var(max T_i) and the max of means, for both parallel operators. */
static int max_time(const erg_signature *ops, size_t n, double *t_out, double *var_out,
                    erg_diag *diag)
{
    double t = ops[0].time_s;
    for (size_t i = 1; i < n; i++)
        if (ops[i].time_s > t)
            t = ops[i].time_s;
    double var;
    if (n == 1) {
        var = ops[0].time_var_s2;
    } else if (n == 2) {
        erg_max2_normal(ops[0].time_s, ops[0].time_var_s2, ops[1].time_s, ops[1].time_var_s2, NULL,
                        &var);
    } else {
        double *m = malloc(n * sizeof *m), *v = malloc(n * sizeof *v);
        if (!m || !v) {
            free(m);
            free(v);
            return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
            m[i] = ops[i].time_s;
            v[i] = ops[i].time_var_s2;
        }
        int rc = erg_maxn_normal(m, v, n, NULL, &var);
        free(m);
        free(v);
        if (rc != ERG_OK)
            return erg_diag_set(diag, rc, NULL, "variance of the makespan: %s", erg_strerror(rc));
    }
    *t_out = t;
    *var_out = var;
    return ERG_OK;
}

/* Both parallel operators once their operands are checked: the operands start together and the
 * composite holds static power s (one device's for ⊕, the devices' sum for ⊕multi) over the
 * longest: E = s·max T_i + Σ d_i, σ²_E = Σ σ²_d_i + s²·Var(max T_i) (Sections 3.3.2-3.3.3, App. F).
 */
static int parallel(const erg_signature *ops, size_t n, double s, erg_signature *out,
                    erg_diag *diag)
{
    double t = 0, vt = 0; /* max_time sets both on success; gcc -O2 cannot see it */
    int rc = max_time(ops, n, &t, &vt, diag);
    if (rc != ERG_OK)
        return rc;
    double d = 0, vd = 0;
    for (size_t i = 0; i < n; i++) {
        d += ops[i].dynamic_energy_j;
        vd += erg_signature_dynamic_var_j2(&ops[i]);
    }
    erg_signature r;
    erg_signature_init(&r);
    r.static_power_w = s;
    r.time_s = t;
    r.dynamic_energy_j = d;
    r.time_var_s2 = vt;
    r.energy_var_j2 = vd + s * s * vt;
    r.grade = weakest_of(ops, n);
    r.flags = flags_of(ops, n);
    common_device(ops, n, r.device, sizeof r.device);
    if (!composed_finite(&r)) {
        size_t worst = 0;
        for (size_t i = 1; i < n; i++)
            if (!(ops[i].time_s <= ops[worst].time_s))
                worst = i;
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "parallel composition: the time or energy is not finite (it "
                            "overflows a double; longest operand %zu, \"%s\")",
                            worst + 1, ops[worst].name);
    }
    *out = r;
    return ERG_OK;
}

int erg_signature_par(const erg_signature *ops, size_t n, erg_signature *out, erg_diag *diag)
{
    if (!ops || !out || n == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "parallel composition needs at least one operand");
    const char *dev = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].device[0])
            continue;
        if (dev && strcmp(dev, ops[i].device) != 0)
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "same-device parallel (par) operands are on different devices "
                                "(\"%s\" and \"%s\"); use multi for cross-device parallelism",
                                dev, ops[i].device);
        dev = ops[i].device;
    }
    double s = ops[0].static_power_w;
    for (size_t i = 1; i < n; i++)
        if (fabs(ops[i].static_power_w - s) > 1e-9 * fmax(fabs(s), 1.0))
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "same-device parallel (par) operands have different static power "
                                "(%g W and %g W); a device has a single static power (Axiom P2)",
                                s, ops[i].static_power_w);
    return parallel(ops, n, s, out, diag);
}

struct devix {
    const char *dev;
    size_t i;
};

static int cmp_devix(const void *pa, const void *pb)
{
    const struct devix *a = pa, *b = pb;
    int c = strcmp(a->dev, b->dev);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* ⊕multi's operands are on distinct devices: ERG_OK, or ERG_EINVAL naming two that share one. */
static int distinct_devices(const erg_signature *ops, size_t n, erg_diag *diag)
{
    /* Two operands on one device: sorted (device, index) pairs side by side (n log n, not n^2);
     * named as before: the first operand that shares its device with a later one, and that one. */
    struct devix *v = malloc(n * sizeof *v);
    if (!v)
        return erg_diag_set(diag, ERG_ENOMEM, NULL, "out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (ops[i].device[0])
            v[m++] = (struct devix){ops[i].device, i};
    if (m > 1)
        qsort(v, m, sizeof *v, cmp_devix);
    size_t bi = SIZE_MAX, bj = SIZE_MAX;
    for (size_t a = 1; a < m; a++)
        if (strcmp(v[a].dev, v[a - 1].dev) == 0 && (a < 2 || strcmp(v[a - 2].dev, v[a].dev) != 0) &&
            v[a - 1].i < bi) {
            bi = v[a - 1].i;
            bj = v[a].i;
        }
    free(v);
    if (bi != SIZE_MAX)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "cross-device parallel (multi) operands %zu and %zu are both on "
                            "device \"%s\"; use par for same-device parallelism",
                            bi + 1, bj + 1, ops[bi].device);
    return ERG_OK;
}

int erg_signature_multi(const erg_signature *ops, size_t n, erg_signature *out, erg_diag *diag)
{
    if (!ops || !out || n == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "cross-device parallel composition needs at least one operand");
    int rc = distinct_devices(ops, n, diag);
    if (rc != ERG_OK)
        return rc;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += ops[i].static_power_w;
    return parallel(ops, n, s, out, diag);
}

int erg_signature_multi_end(const erg_signature *ops, const double *end_static_w, size_t n,
                            erg_signature *out, erg_diag *diag)
{
    if (!ops || !end_static_w || !out || n == 0)
        return erg_diag_set(diag, ERG_EINVAL, NULL,
                            "cross-device parallel composition needs at least one operand");
    int same = 1;
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(end_static_w[i] >= 0) || !isfinite(end_static_w[i]))
            return erg_diag_set(diag, ERG_EINVAL, NULL,
                                "multi operand %zu: the static power it ends in must be a finite "
                                "number >= 0 W (got %g)",
                                i + 1, end_static_w[i]);
        same = same && end_static_w[i] == ops[i].static_power_w;
        e += end_static_w[i];
    }
    if (same) /* every operand ends at its own static power: plain ⊕multi, bit for bit */
        return erg_signature_multi(ops, n, out, diag);
    int rc = distinct_devices(ops, n, diag);
    if (rc != ERG_OK)
        return rc;
    /* The makespan's fluctuation holds every device at the power it is left in: weight (Σ e_i)². */
    erg_signature r;
    if ((rc = parallel(ops, n, e, &r, diag)) != ERG_OK)
        return rc;
    /* Static energy: each operand's own, plus its idle element from its end to the makespan at
     * the static power of the state it ends in (DESIGN, "Idle elements and padding"). */
    double S = 0;
    for (size_t i = 0; i < n; i++)
        S += ops[i].static_power_w * ops[i].time_s + end_static_w[i] * (r.time_s - ops[i].time_s);
    r.static_power_w = r.time_s > 0.0 ? fmax(0.0, S / r.time_s) : e;
    if (!composed_finite(&r))
        return erg_diag_set(diag, ERG_ERANGE, NULL,
                            "cross-device parallel composition: the padded static energy is not "
                            "finite (it overflows a double)");
    *out = r;
    return ERG_OK;
}
