/* SPDX-License-Identifier: MIT */
/* On real hardware only (label hw; exit 77 where no counter is usable): every live hardware
 * channel must give a positive figure over a 300 ms CPU burn, graded as it claims. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "erg/measure.h"

int main(void)
{
    erg_meter_options o;
    erg_meter_options_init(&o);
    erg_meter *m;
    erg_diag d;
    if (erg_meter_open(&o, &m, &d) != ERG_OK) {
        printf("skipped: no meter: %s %s\n", d.where, d.detail);
        return 77;
    }
    if (erg_meter_probe_liveness(m, 0.05, &d) != ERG_OK) {
        printf("FAIL: liveness probe: %s %s\n", d.where, d.detail);
        erg_meter_close(m);
        return 1;
    }
    int hw = 0;
    for (size_t i = 0; i < erg_meter_channel_count(m); i++) {
        erg_channel_info c;
        if (erg_meter_channel_info(m, i, &c) != ERG_OK)
            continue; /* i < the channel count: cannot fail */
        printf("%-36s %-12s usable=%d live=%d %s\n", c.id, erg_grade_name(c.grade), c.usable,
               c.live, c.reason);
        hw += c.usable && c.grade != ERG_GRADE_ESTIMATOR;
    }
    if (!hw) {
        printf("skipped: no hardware energy counter is usable here\n");
        erg_meter_close(m);
        return 77;
    }
    erg_monitor *mon;
    if (erg_meter_sampler_start(m, 0.05) != ERG_OK || erg_monitor_open(m, &mon, &d) != ERG_OK ||
        erg_window_begin(mon, "burn", &d) != ERG_OK) {
        printf("FAIL: cannot open a window: %s %s\n", d.where, d.detail);
        erg_meter_close(m);
        return 1;
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile double x = 0;
    do {
        for (int k = 0; k < 100000; k++)
            x += sqrt((double)k);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < 0.3);
    erg_measurement r;
    if (erg_window_end(mon, "burn", 0, &r, &d) != ERG_OK) {
        printf("FAIL: cannot end the window: %s %s\n", d.where, d.detail);
        erg_monitor_close(mon);
        erg_meter_close(m);
        return 1;
    }
    printf("burn checksum %g\n", (double)x);
    int bad = 0, good = 0;
    for (size_t i = 0; i < r.n_channels; i++) {
        const erg_channel_reading *c = &r.channels[i];
        printf("%-36s %-17s %10.4f J %s\n", c->id, erg_reading_state_name(c->state), c->energy_j,
               c->reason);
        if (c->state == ERG_READING_OK && c->grade != ERG_GRADE_ESTIMATOR) {
            good += c->energy_j > 0;
            bad += !(c->energy_j >= 0);
        }
    }
    printf("total %.4f J (%s) over %.3f s\n", r.total_energy_j, erg_grade_name(r.total_grade),
           r.time_s);
    erg_monitor_close(mon);
    erg_meter_close(m);
    return (good > 0 && !bad) ? 0 : 1;
}
