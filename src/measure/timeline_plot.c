/* SPDX-License-Identifier: MIT */
/* The power timeline of erg measure as a plot (cairo, loaded on demand through core/plot.h). */
#include "core/plot.h"
#include "measure/measure_internal.h"

#include <math.h>
#include <stdio.h>

/* The power timeline as a plot: one line per channel that gave figures, time on x. */
int erg_protocol_plot_timeline(const erg_protocol_result *r, const char *path, erg_diag *d)
{
    int fmt = erg__plot_format(path);
    if (!r || fmt < 0)
        return erg_diag_set(d, ERG_EINVAL, path,
                            "the plot's format is named by its extension: .svg, .png or .pdf");
    size_t nr, nc;
    const double *t, *pw;
    const size_t *run;
    if (erg_protocol_timeline(r, &nr, &nc, &t, &run, &pw) != ERG_OK || nr == 0)
        return erg_diag_set(d, ERG_EINVAL, path,
                            "no timeline sample to plot (runs too short "
                            "for --period?)");
    const double W = 720, H = 420, L = 70, R = 200, Tm = 30, B = 50;
    double x1 = t[nr - 1] > 0 ? t[nr - 1] : 1.0, y1 = 0;
    for (size_t i = 0; i < nr * nc; i++)
        if (isfinite(pw[i]) && pw[i] > y1)
            y1 = pw[i];
    if (!(y1 > 0))
        y1 = 1.0;
    y1 *= 1.05;
    const struct erg__plot_frame fr = {W, H, L, R, Tm, B};
    struct erg__plot pl;
    int rc = erg__plot_begin_framed(&pl, (enum erg__plot_format)fmt, &fr, d);
    if (rc != ERG_OK)
        return rc;
    const struct erg__cairo *C = pl.c;
    cairo_t *cr = pl.cr;
    char lab[96];
    for (int i = 0; i <= 5; i++) {
        double x = L + (W - L - R) * i / 5.0, y = H - B - (H - Tm - B) * i / 5.0;
        snprintf(lab, sizeof lab, "%.3g", x1 * i / 5.0);
        C->cairo_move_to(cr, x - 10, H - B + 16);
        C->cairo_show_text(cr, lab);
        snprintf(lab, sizeof lab, "%.4g", y1 * i / 5.0);
        C->cairo_move_to(cr, 6, y + 4);
        C->cairo_show_text(cr, lab);
    }
    C->cairo_move_to(cr, (W - R) / 2, H - 12);
    C->cairo_show_text(cr, "time (s)");
    C->cairo_move_to(cr, 6, Tm - 10);
    C->cairo_show_text(cr, "power (W), machine-wide");
    static const double pal[][3] = {{0.1, 0.3, 0.8}, {0.85, 0.1, 0.1}, {0.1, 0.6, 0.2},
                                    {0.6, 0.2, 0.7}, {0.9, 0.5, 0.0},  {0.3, 0.3, 0.3}};
    int shown = 0;
    for (size_t j = 0; j < nc; j++) {
        int any = 0;
        for (size_t i = 0; i < nr; i++)
            any |= isfinite(pw[i * nc + j]);
        if (!any)
            continue;
        const double *rgb = pal[shown % 6];
        C->cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        C->cairo_set_line_width(cr, 1.5);
        int pen = 0;
        for (size_t i = 0; i < nr; i++) {
            double v = pw[i * nc + j];
            if (!isfinite(v)) {
                pen = 0;
                continue;
            }
            double x = L + t[i] / x1 * (W - L - R), y = H - B - v / y1 * (H - Tm - B);
            (pen ? C->cairo_line_to : C->cairo_move_to)(cr, x, y);
            pen = 1;
        }
        C->cairo_stroke(cr);
        C->cairo_rectangle(cr, W - R + 10, Tm + 16 * shown, 10, 10);
        C->cairo_fill(cr);
        C->cairo_set_source_rgb(cr, 0, 0, 0);
        C->cairo_move_to(cr, W - R + 24, Tm + 16 * shown + 9);
        C->cairo_show_text(cr, erg_protocol_timeline_channel(r, j));
        shown++;
    }
    (void)run;
    return erg__plot_end(&pl, path, d);
}
