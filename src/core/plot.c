/* SPDX-License-Identifier: MIT */
#include "core/plot.h"

#include "core/file.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct erg__dynlib cairo_lib = ERG__DYNLIB_INIT("libcairo.so.2", "plots", "libcairo2");
static struct erg__cairo cairo_fns;

static int cairo_bind(void *handle, void *table, const char **missing)
{
    struct erg__cairo *t = table;
    ERG__CAIRO_FUNCS(ERG__DYNLIB_BIND)
    return ERG_OK;
}

int erg__plot_format(const char *path)
{
    if (!path)
        return -1;
    if (strcmp(path, "-") == 0)
        return ERG__PLOT_SVG;
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return -1;
    return strcasecmp(dot, ".svg") == 0   ? ERG__PLOT_SVG
           : strcasecmp(dot, ".png") == 0 ? ERG__PLOT_PNG
           : strcasecmp(dot, ".pdf") == 0 ? ERG__PLOT_PDF
                                          : -1;
}

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int len)
{
    struct erg__plot *p = closure;
    if (p->n + len > p->cap) {
        size_t cap = p->cap ? p->cap : 16384;
        while (cap < p->n + len)
            cap *= 2;
        unsigned char *np = realloc(p->buf, cap);
        if (!np) {
            p->err = 1;
            return CAIRO_STATUS_WRITE_ERROR;
        }
        p->buf = np;
        p->cap = cap;
    }
    memcpy(p->buf + p->n, data, len);
    p->n += len;
    return CAIRO_STATUS_SUCCESS;
}

int erg__plot_begin(struct erg__plot *p, enum erg__plot_format fmt, double width_pt,
                    double height_pt, erg_diag *diag)
{
    memset(p, 0, sizeof *p);
    int rc = erg__dynlib_load(&cairo_lib, cairo_bind, &cairo_fns, diag);
    if (rc != ERG_OK)
        return rc;
    const struct erg__cairo *c = &cairo_fns;
    p->c = c;
    p->fmt = fmt;
    p->surf = fmt == ERG__PLOT_PNG ? c->cairo_image_surface_create(CAIRO_FORMAT_ARGB32,
                                                                   (int)width_pt, (int)height_pt)
              : fmt == ERG__PLOT_PDF
                  ? c->cairo_pdf_surface_create_for_stream(sink_write, p, width_pt, height_pt)
                  : c->cairo_svg_surface_create_for_stream(sink_write, p, width_pt, height_pt);
    p->cr = c->cairo_create(p->surf); /* cairo returns inert objects on failure: checked at end */
    c->cairo_set_source_rgb(p->cr, 1, 1, 1);
    c->cairo_paint(p->cr);
    return ERG_OK;
}

int erg__plot_begin_framed(struct erg__plot *p, enum erg__plot_format fmt,
                           const struct erg__plot_frame *fr, erg_diag *diag)
{
    int rc = erg__plot_begin(p, fmt, fr->width, fr->height, diag);
    if (rc != ERG_OK)
        return rc;
    const struct erg__cairo *c = p->c;
    c->cairo_set_source_rgb(p->cr, 0, 0, 0);
    c->cairo_set_line_width(p->cr, 1);
    c->cairo_rectangle(p->cr, fr->left, fr->top, fr->width - fr->left - fr->right,
                       fr->height - fr->top - fr->bottom);
    c->cairo_stroke(p->cr);
    c->cairo_select_font_face(p->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                              CAIRO_FONT_WEIGHT_NORMAL);
    c->cairo_set_font_size(p->cr, 11);
    return ERG_OK;
}

int erg__plot_end(struct erg__plot *p, const char *path, erg_diag *diag)
{
    const struct erg__cairo *c = p->c;
    c->cairo_destroy(p->cr);
    if (p->fmt == ERG__PLOT_PNG) {
        c->cairo_surface_flush(p->surf);
        (void)c->cairo_surface_write_to_png_stream(p->surf, sink_write, p);
    }
    c->cairo_surface_finish(p->surf);
    cairo_status_t st = c->cairo_surface_status(p->surf);
    c->cairo_surface_destroy(p->surf);
    int rc;
    if (p->err)
        rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory while drawing the plot");
    else if (st != CAIRO_STATUS_SUCCESS)
        rc = erg_diag_set(diag, ERG_EIO, path, "cairo could not draw the plot: %s",
                          c->cairo_status_to_string(st));
    else
        rc = erg__write_file_atomic(path, p->buf, p->n, diag);
    free(p->buf);
    memset(p, 0, sizeof *p);
    return rc;
}
