/* SPDX-License-Identifier: MIT */
/* erg serve: this machine's meters as a Prometheus / OpenTelemetry scrape target. */
#include "cli.h"
#include "erg/meter.h"
#include "erg/serve.h"
#include "meter_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

static const char serve_help[] =
    "Usage: erg serve [--listen ADDR:PORT] [--interval S] [--token-file F]\n"
    "                 [--attribute pids|cgroups] [--top N] [--backends LIST] [--once]\n\n"
    "Serve this machine's energy meters over HTTP in the Prometheus text format: cumulative\n"
    "erg_energy_joules_total{channel,domain,device,grade,scope} counters that never decrease\n"
    "(wrap-around corrected, counter resets carried over), erg_power_watts gauges, the node "
    "total,\n"
    "each channel's liveness, state and flags, meter errors and the exporter's own cost. A figure\n"
    "that does not exist is absent, never 0. docs/serve.md maps every metric onto OpenTelemetry's\n"
    "hw.energy / hw.power and onto Kepler's and the DCGM exporter's names.\n\n"
    "  --listen ADDR:PORT   where to listen (default 127.0.0.1:9942; [::1]:PORT for IPv6). Off\n"
    "                       loopback, anyone who can reach the address can read the metrics\n"
    "                       unless --token-file is given: erg says so when it starts\n"
    "  --interval S         seconds between samples (default 1; 0.01..3600)\n"
    "  --token-file F       require 'Authorization: Bearer <token>', the token being F's first\n"
    "                       line (F must not be readable by others)\n"
    "  --attribute pids|cgroups\n"
    "                       also charge CPU-side energy to processes or cgroups by their share\n"
    "                       of busy CPU time (an estimate, graded so, as Scaphandre and Kepler "
    "do)\n"
    "  --top N              attribution keeps the N largest consumers' own series (default 50)\n"
    "  --backends LIST      comma-separated meter backends (default $ERG_BACKENDS, else all)\n"
    "  --once               take two samples an interval apart, print the exposition, exit\n\n"
    "Only GET and HEAD of /metrics and / are served; nothing a request says opens a file or runs\n"
    "a command. SIGINT or SIGTERM stop the server (exit 0).\n"
    "Exit status: 0 stopped by a signal, 2 bad usage (an address in use, a bad token file),\n"
    "3 no usable meter.\n";

static int read_token(const char *path, char **out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        fprintf(stderr, "erg serve: %s: cannot open the token file: %s\n", path, strerror(errno));
        return ERG_EXIT_USAGE;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096) {
        close(fd);
        fprintf(stderr, "erg serve: %s: the token file must be a regular file under 4 KiB\n", path);
        return ERG_EXIT_USAGE;
    }
    if (st.st_mode & (S_IRWXO)) {
        close(fd);
        fprintf(stderr,
                "erg serve: %s: the token file is readable by others (mode %03o); "
                "chmod o-rwx it\n",
                path, (unsigned)(st.st_mode & 0777));
        return ERG_EXIT_USAGE;
    }
    char buf[4097];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0)
        n = 0;
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    for (const char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e) {
            fprintf(stderr, "erg serve: %s: the token must be printable ASCII without spaces\n",
                    path);
            return ERG_EXIT_USAGE;
        }
    if (strlen(buf) < 16) {
        fprintf(stderr, "erg serve: %s: the token is empty or shorter than 16 characters\n", path);
        return ERG_EXIT_USAGE;
    }
    *out = strdup(buf);
    return *out ? 0 : ERG_EXIT_USAGE;
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {{"listen", required_argument, NULL, 'l'},
                                             {"interval", required_argument, NULL, 'i'},
                                             {"token-file", required_argument, NULL, 't'},
                                             {"attribute", required_argument, NULL, 'a'},
                                             {"top", required_argument, NULL, 'n'},
                                             {"backends", required_argument, NULL, 'b'},
                                             {"once", no_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *listen_addr = "127.0.0.1:9942", *token_file = NULL, *backends = NULL;
    erg_exporter_options eo;
    erg_exporter_options_init(&eo);
    int once = 0, c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l':
            listen_addr = optarg;
            break;
        case 'i':
            if (erg_cli_double("serve", "--interval", optarg, &eo.interval_s) != 0)
                return ERG_EXIT_USAGE;
            if (!(eo.interval_s >= 0.01 && eo.interval_s <= 3600))
                return erg_cli_usage("serve", "--interval must be between 0.01 and 3600 s");
            break;
        case 't':
            token_file = optarg;
            break;
        case 'a':
            if (!strcmp(optarg, "pids"))
                eo.attribute = ERG_ATTRIBUTE_PIDS;
            else if (!strcmp(optarg, "cgroups"))
                eo.attribute = ERG_ATTRIBUTE_CGROUPS;
            else
                return erg_cli_usage("serve", "--attribute expects pids or cgroups, not '%s'",
                                     optarg);
            break;
        case 'n': {
            unsigned long v;
            if (erg_cli_ulong("serve", "--top", optarg, &v) != 0)
                return ERG_EXIT_USAGE;
            if (v == 0 || v > 100000)
                return erg_cli_usage("serve", "--top must be between 1 and 100000");
            eo.attribute_top = (size_t)v;
            break;
        }
        case 'b':
            backends = optarg;
            break;
        case 'o':
            once = 1;
            break;
        case 'h':
            fputs(serve_help, stdout);
            return ERG_EXIT_OK;
        default:
            return erg_cli_bad_option("serve", argc, argv, ":h", longopts);
        }
    }
    if (optind != argc)
        return erg_cli_usage("serve", "unexpected argument '%s'", argv[optind]);
    char *token = NULL;
    if (token_file) { /* checked with --once too: a bad file is a bad file */
        int rc = read_token(token_file, &token);
        if (rc)
            return rc;
    }
    if (!erg_http_is_address(listen_addr)) {
        free(token);
        return erg_cli_usage("serve",
                             "--listen %s: not a listen address (HOST:PORT with a numeric IPv4 "
                             "address and a port up to 65535, [IPv6]:PORT or localhost:PORT)",
                             listen_addr);
    }
    /* Block the stop signals before any thread starts, so every thread inherits the mask and
     * only sigwait below receives them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    if (!once)
        pthread_sigmask(SIG_BLOCK, &stop, NULL);

    erg_meter *m = NULL;
    int rc = erg_cli_meter_open(backends, &m);
    if (rc) {
        free(token);
        return rc;
    }
    erg_diag d;
    erg_diag_clear(&d);
    erg_exporter *e = NULL;
    int st = erg_exporter_new(m, &eo, &e, &d);
    if (st != ERG_OK) {
        erg_meter_close(m);
        free(token);
        return erg_cli_fail(&d, st);
    }
    if (once) {
        struct timespec ts = {(time_t)eo.interval_s,
                              (long)((eo.interval_s - floor(eo.interval_s)) * 1e9)};
        nanosleep(&ts, NULL);
        char *text = NULL;
        size_t len = 0;
        rc = erg_exporter_sample(e) == ERG_OK && erg_exporter_render(e, NAN, &text, &len) == ERG_OK
                 ? ERG_EXIT_OK
                 : ERG_EXIT_USAGE;
        if (text)
            fwrite(text, 1, len, stdout);
        free(text);
        erg_exporter_free(e);
        erg_meter_close(m);
        return rc;
    }
    /* the meter's own sampler keeps every counter polled faster than it could wrap */
    if (erg_meter_sampler_start(m, eo.interval_s) != ERG_OK) {
        erg_exporter_free(e);
        erg_meter_close(m);
        free(token);
        fprintf(stderr, "erg: cannot start the meter's sampler thread\n");
        return ERG_EXIT_NOMETER;
    }
    erg_http *h = NULL;
    st = erg_http_start(e, listen_addr, token, &h, &d);
    if (st != ERG_OK) {
        erg_exporter_free(e);
        erg_meter_close(m);
        free(token);
        return erg_cli_fail(&d, st == ERG_EBUSY || st == ERG_EACCES ? ERG_EINVAL : st);
    }
    if (!erg_http_is_loopback(listen_addr) && !token)
        fprintf(stderr,
                "erg serve: warning: listening on %s without --token-file: anyone on the "
                "network who can reach this address can read these metrics\n",
                listen_addr);
    if (erg_exporter_start(e) != ERG_OK) {
        erg_http_stop(h);
        erg_exporter_free(e);
        erg_meter_close(m);
        free(token);
        fprintf(stderr, "erg serve: cannot start the sampler thread\n");
        return ERG_EXIT_USAGE;
    }
    char url[160]; /* the address with the port actually bound (port 0 picks one) */
    const char *colon = strrchr(listen_addr, ':');
    snprintf(url, sizeof url, "%.*s:%u", colon ? (int)(colon - listen_addr) : 0, listen_addr,
             erg_http_port(h));
    fprintf(stderr, "erg serve: serving http://%s/metrics (port %u), a sample every %g s%s\n", url,
            erg_http_port(h), eo.interval_s, token ? ", bearer token required" : "");
    fflush(stderr);
    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "erg serve: stopped by %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    erg_http_stop(h);
    erg_exporter_free(e);
    erg_meter_close(m);
    if (token) {
        memset(token, 0, strlen(token));
        free(token);
    }
    return ERG_EXIT_OK;
}

const struct erg_cli_command erg_cli_cmd_serve = {
    "serve", "serve the meters to Prometheus / OpenTelemetry collectors over HTTP", run};
