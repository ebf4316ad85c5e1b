/* SPDX-License-Identifier: MIT */
/* Plot of a frontier with cairo: time on x, energy on y, staircase, plan marked; SVG, PNG or PDF
 * as the output path's extension names. */
#include "core/plot.h"
#include "frontier/opsched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int erg_frontier_plot_svg(const erg_frontier *f, size_t plan_idx, const double *ref_time_s,
                          const double *ref_energy_j, size_t ref_n, const char *path,
                          erg_diag *diag)
{
    if (!f || !path || f->n_points == 0 || (ref_n && (!ref_time_s || !ref_energy_j)) ||
        (plan_idx != ERG_FRONTIER_NO_PLAN && plan_idx >= f->n_points))
        return erg_diag_set(diag, ERG_EINVAL, NULL, "nothing to plot");
    /* the format the extension names; "-" (stdout) is SVG */
    int fmt = erg__plot_format(path);
    if (fmt < 0)
        return erg_diag_set(diag, ERG_EINVAL, path,
                            "the plot's format is named by its extension: .svg, .png or .pdf");
    const double W = 640, H = 420, L = 80, R = 20, Tm = 30, B = 50;
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (size_t i = 0; i < f->n_points; i++) {
        x0 = fmin(x0, f->points[i].time_s);
        x1 = fmax(x1, f->points[i].time_s);
        y0 = fmin(y0, f->points[i].energy_j);
        y1 = fmax(y1, f->points[i].energy_j);
    }
    for (size_t i = 0; i < ref_n; i++) {
        x0 = fmin(x0, ref_time_s[i]);
        x1 = fmax(x1, ref_time_s[i]);
        y0 = fmin(y0, ref_energy_j[i]);
        y1 = fmax(y1, ref_energy_j[i]);
    }
    double dx = x1 - x0, dy = y1 - y0;
    if (!(dx > 0))
        dx = fmax(fabs(x0), 1.0) * 0.1;
    if (!(dy > 0))
        dy = fmax(fabs(y0), 1.0) * 0.1;
    x0 -= 0.05 * dx, x1 += 0.05 * dx, y0 -= 0.05 * dy, y1 += 0.05 * dy;
#define PX(t) (L + ((t)-x0) / (x1 - x0) * (W - L - R))
#define PY(e) (H - B - ((e)-y0) / (y1 - y0) * (H - Tm - B))
    const struct erg__plot_frame fr = {W, H, L, R, Tm, B};
    struct erg__plot pl;
    int rc = erg__plot_begin_framed(&pl, (enum erg__plot_format)fmt, &fr, diag);
    if (rc != ERG_OK)
        return rc;
    const struct erg__cairo *C = pl.c;
    cairo_t *cr = pl.cr;
    /* Ticks and labels. */
    char lab[64];
    for (int i = 0; i <= 5; i++) {
        double t = x0 + (x1 - x0) * i / 5.0, e = y0 + (y1 - y0) * i / 5.0;
        C->cairo_move_to(cr, PX(t), H - B);
        C->cairo_line_to(cr, PX(t), H - B + 4);
        C->cairo_move_to(cr, L - 4, PY(e));
        C->cairo_line_to(cr, L, PY(e));
        C->cairo_stroke(cr);
        snprintf(lab, sizeof lab, "%.4g", t);
        C->cairo_move_to(cr, PX(t) - 14, H - B + 16);
        C->cairo_show_text(cr, lab);
        snprintf(lab, sizeof lab, "%.5g", e);
        C->cairo_move_to(cr, 4, PY(e) + 4);
        C->cairo_show_text(cr, lab);
    }
    C->cairo_move_to(cr, W / 2 - 30, H - 12);
    C->cairo_show_text(cr, "time (s)");
    C->cairo_move_to(cr, 4, Tm - 10);
    C->cairo_show_text(cr, "energy (J)");
    if (ref_n) { /* reference curve in grey */
        C->cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
        C->cairo_set_line_width(cr, 1.5);
        for (size_t i = 0; i < ref_n; i++)
            (i ? C->cairo_line_to : C->cairo_move_to)(cr, PX(ref_time_s[i]), PY(ref_energy_j[i]));
        C->cairo_stroke(cr);
    }
    /* Frontier as a staircase: the best energy achievable by time t. */
    C->cairo_set_source_rgb(cr, 0.1, 0.3, 0.8);
    C->cairo_set_line_width(cr, 1.5);
    for (size_t i = 0; i < f->n_points; i++) {
        const erg_frontier_point *p = &f->points[i];
        if (i == 0)
            C->cairo_move_to(cr, PX(p->time_s), PY(p->energy_j));
        else {
            C->cairo_line_to(cr, PX(p->time_s), PY(f->points[i - 1].energy_j));
            C->cairo_line_to(cr, PX(p->time_s), PY(p->energy_j));
        }
    }
    C->cairo_line_to(cr, PX(x1), PY(f->points[f->n_points - 1].energy_j));
    C->cairo_stroke(cr);
    for (size_t i = 0; i < f->n_points; i++) {
        C->cairo_arc(cr, PX(f->points[i].time_s), PY(f->points[i].energy_j), 2.0, 0, 2 * M_PI);
        C->cairo_fill(cr);
    }
    if (plan_idx != ERG_FRONTIER_NO_PLAN) {
        const erg_frontier_point *p = &f->points[plan_idx];
        C->cairo_set_source_rgb(cr, 0.85, 0.1, 0.1);
        C->cairo_arc(cr, PX(p->time_s), PY(p->energy_j), 5.0, 0, 2 * M_PI);
        C->cairo_fill(cr);
        snprintf(lab, sizeof lab, "plan %.4g s, %.5g J", p->time_s, p->energy_j);
        C->cairo_move_to(cr, PX(p->time_s) + 8, PY(p->energy_j) - 8);
        C->cairo_show_text(cr, lab);
    }
#undef PX
#undef PY
    return erg__plot_end(&pl, path, diag);
}
