// SPDX-License-Identifier: MIT
//
// bench_trace_simdjson [-r ROUNDS] FILE... : erg's trace reader side by side with simdjson
// (Debian's libsimdjson-dev, on-demand API) on the same bytes. Built only when simdjson is found
// (an optional bench dependency, scripts/deps.sh); bench/bench_trace.sh runs it.
//
// Each file is loaded into memory once (plain or gzip), then ROUNDS rounds alternate, so that the
// machine's load falls on all of them alike:
//   simdjson  parse the buffer with the on-demand API and touch the fields erg reads: per event ph,
//             cat, name (unescaped), ts and dur (numbers), pid and tid (raw text), args.device,
//             args.stream and args["Collective name"]; deviceProperties[].{id,name} and
//             distributedInfo.rank;
//   erg buf   erg_trace_read_buffer on the same buffer (the reader, parse and keep);
//   erg file  erg_trace_read_file on the file (what `erg trace` does: gzread in 256 KiB chunks);
//   simdjson file  the file read into memory (simdjson's padded_string::load; a .gz inflated with
//             gzread) and parsed as above: the same work as erg file, reading included.
// It prints the median thread CPU time of each as MB/s of uncompressed JSON and the ratios erg /
// simdjson of the medians (the goal of issue 13: at most 1.5): erg buffer / simdjson, erg file /
// simdjson (reading the file on erg's side only) and erg file / simdjson file. Small files get
// more rounds (at least ROUNDS, and enough for about 50 MB per reader).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>
#include <zlib.h>

#include "erg/trace.h"

using namespace simdjson;

// Thread CPU time: on a shared, loaded machine the wall clock counts the time other processes hold
// the CPU; the thread's own CPU time (user and system) does not.
static double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool load(const char *path, std::string &out)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return false;
    std::vector<char> buf(1 << 20);
    for (;;) {
        int n = gzread(gz, buf.data(), (unsigned)buf.size());
        if (n < 0) {
            gzclose(gz);
            return false;
        }
        if (n == 0)
            break;
        out.append(buf.data(), (size_t)n);
    }
    gzclose(gz);
    return true;
}

// The file into json: plain files through simdjson's loader, gzip (magic 1f 8b) through load().
static bool load_padded(const char *path, padded_string &json)
{
    unsigned char magic[2] = {0, 0};
    FILE *f = std::fopen(path, "rb");
    if (!f)
        return false;
    size_t n = std::fread(magic, 1, 2, f);
    std::fclose(f);
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        std::string raw;
        if (!load(path, raw))
            return false;
        json = padded_string(raw);
        return true;
    }
    return padded_string::load(path).get(json) == SUCCESS;
}

// What the fields add up to: keeps the compiler from dropping the work, and is printed.
struct touched {
    size_t events = 0, kernels = 0, bytes = 0;
    double ts_sum = 0;
};

static void scalar_text(ondemand::value v, touched &t)
{
    std::string_view s;
    if (v.type() == ondemand::json_type::string)
        s = v.get_string();
    else
        s = v.raw_json_token();
    t.bytes += s.size();
}

static void one_event(ondemand::object ev, touched &t)
{
    t.events++;
    for (auto field : ev) {
        std::string_view k = field.unescaped_key();
        ondemand::value v = field.value();
        if (k == "ph" || k == "name") {
            t.bytes += std::string_view(v.get_string()).size();
        } else if (k == "cat") {
            std::string_view c = v.get_string();
            t.kernels += c == "kernel";
        } else if (k == "ts" || k == "dur") {
            t.ts_sum += double(v.get_double());
        } else if (k == "pid" || k == "tid") {
            scalar_text(v, t);
        } else if (k == "args") {
            if (v.type() != ondemand::json_type::object)
                continue;
            for (auto a : v.get_object()) {
                std::string_view ak = a.unescaped_key();
                if (ak == "device" || ak == "stream")
                    scalar_text(a.value(), t);
                else if (ak == "Collective name")
                    t.bytes += 1;
            }
        }
    }
}

static void events(ondemand::array arr, touched &t)
{
    for (auto e : arr) {
        ondemand::object ev;
        if (e.get_object().get(ev) == SUCCESS)
            one_event(ev, t);
    }
}

static touched parse_simdjson(ondemand::parser &parser, const padded_string &json)
{
    touched t;
    ondemand::document doc = parser.iterate(json);
    if (doc.type() == ondemand::json_type::array) {
        events(doc.get_array(), t);
        return t;
    }
    for (auto field : doc.get_object()) {
        std::string_view k = field.unescaped_key();
        if (k == "traceEvents") {
            events(field.value().get_array(), t);
        } else if (k == "deviceProperties") {
            for (auto p : field.value().get_array())
                for (auto pf : p.get_object()) {
                    std::string_view pk = pf.unescaped_key();
                    if (pk == "id" || pk == "name")
                        scalar_text(pf.value(), t);
                }
        } else if (k == "distributedInfo") {
            for (auto df : field.value().get_object())
                if (std::string_view(df.unescaped_key()) == "rank")
                    t.ts_sum += double(df.value().get_int64());
        }
    }
    return t;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int rounds = 5, first = 1;
    if (argc > 2 && std::strcmp(argv[1], "-r") == 0) {
        rounds = std::atoi(argv[2]);
        first = 3;
    }
    if (argc <= first || rounds < 1) {
        std::fprintf(stderr, "usage: %s [-r ROUNDS] TRACE.json[.gz]...\n", argv[0]);
        return 2;
    }
    std::printf("simdjson %d.%d.%d, implementation %s\n", SIMDJSON_VERSION_MAJOR,
                SIMDJSON_VERSION_MINOR, SIMDJSON_VERSION_REVISION,
                get_active_implementation()->name().c_str());
    for (int f = first; f < argc; f++) {
        std::string raw;
        if (!load(argv[f], raw)) {
            std::fprintf(stderr, "bench_trace_simdjson: cannot read %s\n", argv[f]);
            return 2;
        }
        padded_string json(raw);
        raw.clear();
        raw.shrink_to_fit();
        double mb = (double)json.size() / 1e6;
        ondemand::parser parser(json.size() + 64);
        std::vector<double> ts, tb, tf, tsf;
        touched tt;
        size_t acts = 0;
        int n_rounds = rounds;
        if (mb > 0 && 50.0 / mb > n_rounds)
            n_rounds = (int)std::min(200.0, 50.0 / mb);
        for (int r = 0; r < n_rounds; r++) {
            double t0 = now_s();
            try {
                tt = parse_simdjson(parser, json);
            } catch (const simdjson_error &e) {
                std::fprintf(stderr, "bench_trace_simdjson: %s: simdjson: %s\n", argv[f], e.what());
                return 2;
            }
            double t1 = now_s();
            erg_diag d;
            erg_trace *tr = erg_trace_new();
            if (!tr || erg_trace_read_buffer(tr, json.data(), json.size(), argv[f], &d) != ERG_OK) {
                std::fprintf(stderr, "bench_trace_simdjson: %s: %s\n", d.where, d.detail);
                return 2;
            }
            double t2 = now_s();
            erg_trace_stats st;
            erg_trace_get_stats(tr, &st);
            acts = st.activities;
            erg_trace_free(tr);
            double t3 = now_s();
            tr = erg_trace_new();
            if (!tr || erg_trace_read_file(tr, argv[f], &d) != ERG_OK) {
                std::fprintf(stderr, "bench_trace_simdjson: %s: %s\n", d.where, d.detail);
                return 2;
            }
            double t4 = now_s();
            erg_trace_free(tr);
            double t5 = now_s();
            try {
                padded_string fj;
                if (!load_padded(argv[f], fj)) {
                    std::fprintf(stderr, "bench_trace_simdjson: cannot read %s\n", argv[f]);
                    return 2;
                }
                touched tf2 = parse_simdjson(parser, fj);
                if (tf2.events != tt.events) {
                    std::fprintf(stderr,
                                 "bench_trace_simdjson: %s: %zu events from the file, %zu "
                                 "from the buffer\n",
                                 argv[f], tf2.events, tt.events);
                    return 2;
                }
            } catch (const simdjson_error &e) {
                std::fprintf(stderr, "bench_trace_simdjson: %s: simdjson: %s\n", argv[f], e.what());
                return 2;
            }
            double t6 = now_s();
            tsf.push_back(t6 - t5);
            ts.push_back(t1 - t0);
            tb.push_back(t2 - t1);
            tf.push_back(t4 - t3);
        }
        double ms = median(ts), mbuf = median(tb), mfile = median(tf), msf = median(tsf);
        std::printf(
            "%s: %.1f MB of JSON, %zu events (%zu kernels), %zu GPU activities kept by erg; "
            "medians of %d rounds\n",
            argv[f], mb, tt.events, tt.kernels, acts, n_rounds);
        std::printf("  simdjson on-demand  %8.1f MB/s (of thread CPU time)\n", mb / ms);
        std::printf("  erg buffer          %8.1f MB/s  ratio to simdjson %.2f\n", mb / mbuf,
                    mbuf / ms);
        std::printf("  erg file (gzread)   %8.1f MB/s  ratio to simdjson %.2f\n", mb / mfile,
                    mfile / ms);
        std::printf("  simdjson file       %8.1f MB/s (read into memory, then parsed)\n", mb / msf);
        std::printf("  erg file / simdjson file  %.2f\n", mfile / msf);
    }
    return 0;
}
