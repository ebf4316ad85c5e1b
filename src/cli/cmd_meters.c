/* SPDX-License-Identifier: MIT */
/* erg meters: every backend tried, what it found, each channel with domain, device, grade,
 * liveness and resolution, and why a backend or channel was declined. */
#include "cli.h"
#include "erg/meter.h"
#include "meter_cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char meters_help[] =
    "Usage: erg meters [--json] [--no-probe] [--backends LIST]\n\n"
    "List every energy meter backend erg tries (rapl-sysfs, rapl-msr, nvml, hwmon, estimator), "
    "what\n"
    "each found, and every channel with its domain, device, provenance grade, liveness, "
    "resolution\n"
    "and wrap range, or why it was declined. Liveness is probed by keeping one CPU busy for 50 "
    "ms:\n"
    "a counter that does not move is declined and never gives a hw_shunt figure.\n\n"
    "  --json           {\"erg\": \"meters/1\", \"backends\": [...], \"channels\": [...]}\n"
    "  --no-probe       skip the liveness probe (live is reported as unknown, ?)\n"
    "  --backends LIST  comma-separated backends to try (default $ERG_BACKENDS, else all); an\n"
    "                   unknown name is bad usage, and when those asked for find nothing the\n"
    "                   error says why for each\n\n"
    "Live ? also marks channels the CPU probe cannot judge: the estimator (a model, not a\n"
    "counter), GPU counters (no GPU load is made) and uncore (it may idle at 0 W).\n\n"
    "Environment: ERG_ROOT (prefix of /sys, /proc, /dev), ERG_NVML_LIB (NVML library path),\n"
    "ERG_ESTIMATOR_IDLE_W / ERG_ESTIMATOR_FULL_W (estimator model, default 10 W / 65 W).\n"
    "Exit status: 0 (also when only the estimator is available; the output says so), 2 bad usage,\n"
    "3 no meter at all.\n";

int erg_cli_meter_open(const char *backends, erg_meter **out)
{
    erg_meter_options o;
    erg_meter_options_init(&o);
    o.backends = backends;
    erg_diag d;
    erg_diag_clear(&d);
    int rc = erg_meter_open(&o, out, &d);
    if (rc != ERG_OK)
        return erg_cli_fail(&d, rc == ERG_ENOENT ? ERG_ENODEV : rc);
    return 0;
}

json_t *erg_cli_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *erg_cli_flags_json(unsigned flags)
{
    json_t *a = json_array();
    for (unsigned b = 0; b < ERG_FLAG_COUNT; b++)
        if (flags & (1u << b))
            json_array_append_new(a, json_string(erg_flag_name(b)));
    return a;
}

void erg_cli_flags_text(unsigned flags, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned b = 0; b < ERG_FLAG_COUNT; b++)
        if (flags & (1u << b)) {
            int w = snprintf(buf + n, size - n, "%s%s", n ? "," : "", erg_flag_name(b));
            if (w < 0 || (size_t)w >= size - n)
                break;
            n += (size_t)w;
        }
    if (!n)
        snprintf(buf, size, "-");
}

int erg_cli_print_json(json_t *root)
{
    int rc = erg_cli_json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(root);
    return rc == 0 ? 0 : ERG_EXIT_USAGE;
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"no-probe", no_argument, NULL, 'n'},
                                             {"backends", required_argument, NULL, 'b'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int json = 0, probe = 1, c;
    const char *backends = NULL;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'n':
            probe = 0;
            break;
        case 'b':
            backends = optarg;
            break;
        case 'h':
            fputs(meters_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("meters", argc, argv, ":h", longopts);
        }
    }
    if (optind < argc)
        return erg_cli_usage("meters", "unexpected argument '%s'", argv[optind]);
    erg_meter *m;
    int ex = erg_cli_meter_open(backends, &m);
    if (ex)
        return ex;
    erg_diag d;
    erg_diag_clear(&d);
    if (probe && erg_meter_probe_liveness(m, 0.05, &d) != ERG_OK) /* out of memory */
        fprintf(stderr, "erg: warning: liveness not probed: %s\n", d.detail);
    if (json) {
        int rc = erg_meter_write_json("-", m, &d);
        erg_meter_close(m);
        return rc == ERG_OK ? ERG_EXIT_OK : erg_cli_fail(&d, rc);
    }
    char note[512], lacking[512];
    erg_meter_note(m, note, sizeof note);
    erg_meter_declined_totals(m, lacking, sizeof lacking);
    printf("Backends:\n");
    for (size_t i = 0; i < erg_meter_backend_count(m); i++) {
        erg_backend_info b;
        if (erg_meter_backend_info(m, i, &b) != ERG_OK)
            continue;
        printf("  %-11s %-8s %s\n", b.name, erg_backend_state_name(b.state), b.reason);
    }
    printf("\nChannels:\n  %-34s %-8s %-12s %-12s %-5s %-11s %s\n", "id", "domain", "device",
           "grade", "live", "resolution", "notes");
    for (size_t i = 0; i < erg_meter_channel_count(m); i++) {
        erg_channel_info ci;
        if (erg_meter_channel_info(m, i, &ci) != ERG_OK)
            continue;
        char res[32];
        snprintf(res, sizeof res, "%.3g J", ci.resolution_j);
        const char *live = !ci.usable ? "no" : ci.live < 0 ? "?" : ci.live ? "yes" : "no";
        /* a usable channel with nothing to report says what it covers (its label: the zone,
         * register, GPU, or the scope of a board or ACPI meter rail) */
        printf("  %-34s %-8s %-12s %-12s %-5s %-11s %s%s\n", ci.id, erg_domain_name(ci.domain),
               ci.device, erg_grade_name(ci.grade), live, res,
               ci.usable ? "" : "declined: ", ci.usable && !ci.reason[0] ? ci.label : ci.reason);
    }
    if (note[0])
        printf("\nNote: %s.\n", note);
    if (lacking[0])
        printf("\nNote: %s declined (permission denied): totals over the CPU will be null, "
               "flagged incomplete, until it can be read.\n",
               lacking);
    erg_meter_close(m);
    return ERG_EXIT_OK;
}

const struct erg_cli_command erg_cli_cmd_meters = {
    "meters", "list energy meters, their channels, grades and liveness", run};
