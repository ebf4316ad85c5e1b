/* SPDX-License-Identifier: MIT */
/* Private to the erg command: the characterization protocols of erg characterize (defined in
 * cmd_characterize.c), shared with erg refine --characterize. Elements are shell commands. */
#ifndef ERG_CLI_CHARACTERIZE_H
#define ERG_CLI_CHARACTERIZE_H

#include "erg/calculus.h"
#include "erg/measure.h"
#include "erg/meter.h"

struct erg_cli_char {
    unsigned long runs, warmup;
    double cooldown_s;
    int time_cpu;         /* 1: T is the element's CPU time (user + system), not wall time */
    int time_reported;    /* 1: T is what the element reports in $ERG_ELEMENT_REPORT ("time_s=T"),
                             and its CPU time for the cpu-model is that T too */
    char report[2][1024]; /* per-child report files (element, co-runner) */
    int cpu_model;        /* 1: energy = s·T + (P_full − P_idle)/n_cpu × CPU time (estimator) */
    double static_w;      /* s, W */
    double dyn_w_per_cpu; /* cpu_model: dynamic power of one busy CPU, W */
    const char *reset;    /* null-context protocol run before every measured run, or NULL */
    erg_meter *meter;     /* meter mode: the meter (sampler started); may be NULL in cpu_model */
    erg_monitor *mon;
    erg_grade grade; /* grade of the figures */
    unsigned flags;  /* union of the measurements' total flags (erg/flags.h) */
    int verbose;
};

/* Set up from options: opens the meter (unless cpu_model and none is needed), starts the sampler.
 * backends may be NULL. Returns 0 or an exit status after printing the reason. */
int erg_cli_char_open(struct erg_cli_char *c, const char *backends);
void erg_cli_char_close(struct erg_cli_char *c);

/* Measure cmd c->runs times: before each run the reset protocol, then prelude (unmeasured; NULL:
 * none), then cmd, with corun started at the same time when not NULL. Fills *pe (the element's
 * values; context fields are left to the caller) and, with corun, *pc (the co-runner's). Returns
 * 0 or an exit status after printing the reason. */
int erg_cli_char_point(struct erg_cli_char *c, const char *cmd, const char *prelude,
                       const char *corun, erg_context_point *pe, erg_context_point *pc);

#endif
