/* SPDX-License-Identifier: MIT */
/* Private: a plot canvas over cairo, loaded on demand (core/dynlib.h): the frontier plot and the
 * power-timeline plot of erg measure draw through it; no other erg process maps cairo. */
#ifndef ERG_CORE_PLOT_H
#define ERG_CORE_PLOT_H

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <stddef.h>

#include "core/dynlib.h"
#include "erg/error.h"

/* Every cairo function erg calls. */
#define ERG__CAIRO_FUNCS(X)                                                                        \
    X(cairo_arc)                                                                                   \
    X(cairo_create)                                                                                \
    X(cairo_destroy)                                                                               \
    X(cairo_fill)                                                                                  \
    X(cairo_image_surface_create)                                                                  \
    X(cairo_line_to)                                                                               \
    X(cairo_move_to)                                                                               \
    X(cairo_paint)                                                                                 \
    X(cairo_pdf_surface_create_for_stream)                                                         \
    X(cairo_rectangle)                                                                             \
    X(cairo_select_font_face)                                                                      \
    X(cairo_set_font_size)                                                                         \
    X(cairo_set_line_width)                                                                        \
    X(cairo_set_source_rgb)                                                                        \
    X(cairo_show_text)                                                                             \
    X(cairo_status_to_string)                                                                      \
    X(cairo_stroke)                                                                                \
    X(cairo_surface_destroy)                                                                       \
    X(cairo_surface_finish)                                                                        \
    X(cairo_surface_flush)                                                                         \
    X(cairo_surface_status)                                                                        \
    X(cairo_surface_write_to_png_stream)                                                           \
    X(cairo_svg_surface_create_for_stream)

/* The cairo functions, bound from libcairo.so.2. */
struct erg__cairo {
    ERG__CAIRO_FUNCS(ERG__DYNLIB_FIELD)
};

/* A plot's file format, named by its path's extension. */
enum erg__plot_format { ERG__PLOT_SVG, ERG__PLOT_PNG, ERG__PLOT_PDF };

/* The format path's extension names (.svg, .png, .pdf, any case; "-" is SVG on stdout), or -1. */
int erg__plot_format(const char *path);

/* One plot being drawn: draw with c's functions on cr, between begin and end. */
struct erg__plot {
    const struct erg__cairo *c;
    cairo_surface_t *surf;
    cairo_t *cr;
    enum erg__plot_format fmt;
    unsigned char *buf; /* the encoded file, as cairo writes it */
    size_t n, cap;
    int err;
};

/* Start a width_pt × height_pt plot in format fmt (points; pixels for PNG). Loads cairo on first
 * use: ERG_ENOLIB (diag names libcairo.so.2 and its package) when absent, ERG_ENOMEM. On error
 * nothing needs ending. */
int erg__plot_begin(struct erg__plot *p, enum erg__plot_format fmt, double width_pt,
                    double height_pt, erg_diag *diag);

/* A plot's size and the margins of its frame, in points (pixels for PNG): the data area is the
 * rectangle from (left, top) to (width - right, height - bottom). */
struct erg__plot_frame {
    double width, height, left, right, top, bottom;
};

/* erg__plot_begin at fr's size, then the frame both plots draw: the data area outlined in black
 * (1 pt) and the label font selected (sans-serif, 11 pt), black left as the source colour. Errors
 * and cleanup as erg__plot_begin. */
int erg__plot_begin_framed(struct erg__plot *p, enum erg__plot_format fmt,
                           const struct erg__plot_frame *fr, erg_diag *diag);

/* Finish the plot and write it to path whole or not at all ("-": stdout); frees p either way.
 * ERG_OK, ERG_EIO (cairo failed: its status named; or the write failed), ERG_ENOMEM. */
int erg__plot_end(struct erg__plot *p, const char *path, erg_diag *diag);

#endif
