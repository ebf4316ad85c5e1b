/* SPDX-License-Identifier: MIT */
/*
 * Streaming import of Chrome trace-event JSON (PyTorch profiler / Kineto). yajl calls back for
 * every token; a small state machine keeps only the fields of the current event, and only GPU
 * activities are stored, so memory grows with the activities kept, never with the file. zlib's
 * gzread reads plain and gzip files alike.
 *
 * Format: Chrome "Trace Event Format" (Google, 2016), JSON Object and JSON Array forms, phases X
 * (complete), B/E (begin/end, matched per pid/tid as a stack), the rest ignored. Kineto's keys:
 * args.device, args.stream, args["Collective name"], deviceProperties[].{id,name},
 * distributedInfo.rank.
 */
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

enum { READ_CHUNK = 256 * 1024 };

enum ev_field {
    F_NONE = 0,
    F_PH,
    F_CAT,
    F_NAME,
    F_TS,
    F_DUR,
    F_PID,
    F_TID,
    F_ARGS,
    A_DEVICE,
    A_STREAM,
    A_COLL
};

enum top_key { T_NONE = 0, T_EVENTS, T_DEVPROPS, T_DISTINFO, T_ERG };

/* Event class, from its category. */
enum ev_class {
    C_GPU_KERNEL = ERG_TRACE_CAT_KERNEL,
    C_GPU_MEMCPY = ERG_TRACE_CAT_MEMCPY,
    C_GPU_MEMSET = ERG_TRACE_CAT_MEMSET,
    C_HOST = 10,
    C_UNKNOWN = 11,
    C_MARKER = 12 /* a ROCm barrier packet logged as a kernel (roc_op_class) */
};

typedef struct open_begin {
    int64_t ts_ns;
    uint32_t name, device, stream;
    int cls; /* ev_class */
    int coll;
} open_begin;

typedef struct be_stack {
    open_begin *v;
    size_t n, cap;
} be_stack;

typedef struct devprop {
    char id[ERG__KEY_MAX];
    char name[ERG_SIG_NAME_MAX];
} devprop;

typedef struct pctx {
    struct erg_trace *tr;
    erg__jscan *js; /* the fast tokenizer, NULL when yajl reads */
    const char *file;
    unsigned file_index;
    size_t first_dev; /* devices of this file start here */
    size_t last_dev;  /* cache for device lookup */
    int status;       /* set by a callback that cancels the parse */
    char err[256];

    long depth;
    int top_seen;
    int saw_events; /* the object format had a traceEvents member */
    int tail_other; /* array format: the last element read was not an event object */
    enum top_key top_key;
    long events_depth; /* depth inside the events array, -1 when not in it */
    long devprops_depth, distinfo_depth;
    int in_event, in_args;
    enum ev_field ev_field, arg_field;

    /* current event */
    char ph;
    char cat[64];
    size_t cat_len;
    int has_cat;
    int cls;           /* classify() of cat, set with it */
    char last_cat[64]; /* the last category classified, its length (SIZE_MAX: none) and class */
    size_t last_len;
    int last_cls;
    char *name;
    size_t name_len, name_cap;
    int has_name;
    int64_t ts_ns, dur_ns;
    int has_ts, has_dur, bad_ts, bad_dur;
    int str_ts, str_dur; /* the value was not a JSON number (a string, null, ...) */
    uint64_t ev_seen;    /* event objects begun in this file */
    uint64_t drop_ev;    /* 1-based ordinal of the first dropped event, 0: none */
    uint64_t rocprof_ev; /* 1-based ordinal of the first X event without "cat" whose ts or dur
                            is a string (rocprof v1's results.json; read_pass), 0: none */
    char drop_why[160];
    /* ts and dur as written, parsed only for the events that use them (most are host events) */
    char ts_txt[48], dur_txt[48];
    size_t ts_len, dur_len;
    int ts_pending, dur_pending;
    char pid[ERG__KEY_MAX], tid[ERG__KEY_MAX], adev[ERG__KEY_MAX], astream[ERG__KEY_MAX];
    int has_pid, has_tid, has_adev, has_astream, has_coll;

    /* deviceProperties entries and distributedInfo */
    devprop *props;
    size_t n_props, props_cap;
    devprop cur_prop;
    int prop_key; /* 1 id, 2 name */
    int rank, has_rank, rank_key;

    be_stack *stacks; /* indexed by misc id of "pid\x1ftid" */
    size_t n_stacks;
} pctx;

/* ---------------------------------------------------------------------------------------------- */

/* Cancel the parse from a callback: yajl then returns yajl_status_client_canceled. */
static int fail(pctx *c, int status, const char *msg)
{
    c->status = status;
    snprintf(c->err, sizeof c->err, "%s", msg);
    return 0;
}

static void copy_text(char *dst, size_t size, const char *s, size_t len)
{
    if (len >= size)
        len = size - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

/* Copy an id (pid, tid, device, stream) whole, or cancel the parse: an id is never cut (two ids
 * with a common prefix would merge) and may not hold a NUL byte (it would end the C string early,
 * merging "gpu\u00000" and "gpu\u00001"). */
static int copy_key(pctx *c, char *dst, size_t size, const char *s, size_t len, const char *what)
{
    if (len >= size) {
        c->status = ERG_EPARSE;
        snprintf(c->err, sizeof c->err,
                 "a %s id of %zu bytes: ids longer than %zu bytes are refused", what, len,
                 size - 1);
        return 0;
    }
    if (memchr(s, '\0', len)) {
        c->status = ERG_EPARSE;
        snprintf(c->err, sizeof c->err, "a %s id holds a NUL byte (\\u0000)", what);
        return 0;
    }
    memcpy(dst, s, len);
    dst[len] = '\0';
    return 1;
}

/* Timestamps and durations are kept within ±2^62 ns (±146 years), so that every sum and
 * difference of two of them fits an int64_t (a huge ts once overflowed a signed subtraction). */
static int ts_in_range(int64_t ns)
{
    const int64_t lim = INT64_C(1) << 62;
    return ns > -lim && ns < lim ? 0 : -1;
}

/* Parse a decimal number of microseconds into nanoseconds, exactly for the usual forms
 * ("1695835583881571", "4458676983543.183"); other forms go through strtod. */
static int parse_us_to_ns(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    int64_t whole = 0;
    size_t digits = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        if (whole > (INT64_MAX / 1000 - 9) / 10)
            goto slow;
        whole = whole * 10 + (s[i++] - '0');
        digits++;
    }
    int64_t frac = 0;
    int fd = 0;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (fd < 3) {
                frac = frac * 10 + (s[i] - '0');
            } else if (fd == 3 && s[i] >= '5') {
                frac += 1; /* round half up at the nanosecond */
            }
            fd++;
            i++;
        }
    }
    if (i != len || digits == 0)
        goto slow;
    while (fd < 3) {
        frac *= 10;
        fd++;
    }
    *out = (neg ? -1 : 1) * (whole * 1000 + frac);
    return ts_in_range(*out);
slow : {
    char buf[64];
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end) * 1000.0;
    if (*end != '\0' || errno == ERANGE || !isfinite(v) || fabs(v) > 9.0e18)
        return -1;
    *out = llround(v);
    return ts_in_range(*out);
}
}

/* The categories erg knows, with their lengths: an event's category is compared with those of the
 * same length only (classify runs for every event). */
typedef struct known_cat {
    const char *name;
    size_t len;
    int cls;
} known_cat;
#define KC(s, c)                                                                                   \
    {                                                                                              \
        s, sizeof s - 1, c                                                                         \
    }
static const known_cat known_cats[] = {
    /* the commonest in Kineto traces first: the search stops at the first match */
    KC("cpu_op", C_HOST),
    KC("cuda_runtime", C_HOST),
    KC("kernel", C_GPU_KERNEL),
    KC("ac2g", C_HOST),
    KC("gpu_memcpy", C_GPU_MEMCPY),
    KC("gpu_memset", C_GPU_MEMSET),
    KC("python_function", C_HOST),
    KC("user_annotation", C_HOST),
    KC("gpu_user_annotation", C_HOST),
    KC("cuda_driver", C_HOST),
    KC("fwdbwd", C_HOST),
    KC("Trace", C_HOST),
    KC("cuda_sync", C_HOST),
    KC("cpu_instant_event", C_HOST),
    KC("Kernel", C_GPU_KERNEL),
    KC("Memcpy", C_GPU_MEMCPY),
    KC("Memset", C_GPU_MEMSET),
    KC("Operator", C_HOST),
    KC("operator", C_HOST),
    KC("Runtime", C_HOST),
    KC("Driver", C_HOST),
    KC("python", C_HOST),
    KC("overhead", C_HOST),
    KC("Overhead", C_HOST),
    KC("cuda_profiler_range", C_HOST),
    KC("cpu_memory", C_HOST),
    KC("Memory", C_HOST),
    KC("mtia_runtime", C_HOST),
    KC("privateuse1_runtime", C_HOST),
    KC("privateuse1_driver", C_HOST),
};
#undef KC

static int classify(const char *cat, size_t len, int has_cat)
{
    if (!has_cat)
        return C_UNKNOWN;
    for (size_t i = 0; i < sizeof known_cats / sizeof known_cats[0]; i++)
        if (known_cats[i].len == len && memcmp(known_cats[i].name, cat, len) == 0)
            return known_cats[i].cls;
    return C_UNKNOWN;
}

static int count_unknown(pctx *c)
{
    struct erg_trace *tr = c->tr;
    const char *name = c->has_cat ? c->cat : "(no category)";
    uint32_t id = erg__strtab_intern(&tr->misc, name, strlen(name));
    if (id == ERG__NOID)
        return fail(c, ERG_ENOMEM, "out of memory");
    for (size_t i = 0; i < tr->n_unknown; i++)
        if (tr->unknown[i].name == id) {
            tr->unknown[i].count++;
            return 1;
        }
    if (tr->n_unknown == tr->unknown_cap) {
        size_t cap = tr->unknown_cap ? tr->unknown_cap * 2 : 8;
        erg__unknown *p = realloc(tr->unknown, cap * sizeof *p);
        if (!p)
            return fail(c, ERG_ENOMEM, "out of memory");
        tr->unknown = p;
        tr->unknown_cap = cap;
    }
    tr->unknown[tr->n_unknown++] = (erg__unknown){id, 1};
    return 1;
}

/* Index in tr->devs of this file's device `key`, adding it when new; ERG__NOID on ENOMEM. */
static uint32_t device_of(pctx *c, const char *key)
{
    struct erg_trace *tr = c->tr;
    if (c->last_dev < tr->n_devs && c->last_dev >= c->first_dev &&
        strcmp(tr->devs[c->last_dev].key, key) == 0)
        return (uint32_t)c->last_dev;
    /* hashed by "<file>\x1e<key>": 10^5 distinct devices took 59 s with a linear search */
    char hk[ERG__KEY_MAX + 24];
    int hl = snprintf(hk, sizeof hk, "%u\x1e%s", c->file_index, key);
    if (hl < 0 || (size_t)hl >= sizeof hk)
        return ERG__NOID;
    uint32_t kid = erg__strtab_intern(&tr->devkeys, hk, (size_t)hl);
    if (kid == ERG__NOID)
        return ERG__NOID;
    if (kid < tr->dev_of_key_cap && tr->dev_of_key[kid] != ERG__NOID) {
        c->last_dev = tr->dev_of_key[kid];
        return tr->dev_of_key[kid];
    }
    if (kid >= tr->dev_of_key_cap) {
        size_t cap = tr->dev_of_key_cap ? tr->dev_of_key_cap * 2 : 16;
        while (cap <= kid)
            cap *= 2;
        uint32_t *p = realloc(tr->dev_of_key, cap * sizeof *p);
        if (!p)
            return ERG__NOID;
        for (size_t i = tr->dev_of_key_cap; i < cap; i++)
            p[i] = ERG__NOID;
        tr->dev_of_key = p;
        tr->dev_of_key_cap = cap;
    }
    if (tr->n_devs == tr->devs_cap) {
        size_t cap = tr->devs_cap ? tr->devs_cap * 2 : 8;
        erg__dev *p = realloc(tr->devs, cap * sizeof *p);
        if (!p)
            return ERG__NOID;
        tr->devs = p;
        tr->devs_cap = cap;
    }
    erg__dev *d = &tr->devs[tr->n_devs];
    memset(d, 0, sizeof *d);
    d->file = c->file_index;
    copy_text(d->key, sizeof d->key, key, strlen(key));
    c->last_dev = tr->n_devs;
    tr->dev_of_key[kid] = (uint32_t)tr->n_devs;
    return (uint32_t)tr->n_devs++;
}

static int add_activity(pctx *c, int64_t start_ns, int64_t dur_ns, uint32_t name, uint32_t dev,
                        uint32_t stream, int cat)
{
    struct erg_trace *tr = c->tr;
    if (tr->n_acts == tr->acts_cap) {
        size_t cap = tr->acts_cap ? tr->acts_cap * 2 : 1024;
        erg__act *p = realloc(tr->acts, cap * sizeof *p);
        if (!p)
            return fail(c, ERG_ENOMEM, "out of memory");
        tr->acts = p;
        tr->acts_cap = cap;
    }
    tr->acts[tr->n_acts++] = (erg__act){start_ns, dur_ns, name, dev, stream, (uint8_t)cat};
    tr->stats.activities++;
    return 1;
}

/* Resolve name, device and stream of the current event (a GPU one). */
static int event_ids(pctx *c, uint32_t *name, uint32_t *dev, uint32_t *stream)
{
    struct erg_trace *tr = c->tr;
    *name =
        erg__strtab_intern(&tr->names, c->has_name ? c->name : "", c->has_name ? c->name_len : 0);
    const char *dkey = c->has_adev ? c->adev : c->has_pid ? c->pid : "0";
    const char *skey = c->has_astream ? c->astream : c->has_tid ? c->tid : "0";
    *dev = device_of(c, dkey);
    *stream = erg__strtab_intern(&tr->misc, skey, strlen(skey));
    if (*name == ERG__NOID || *dev == ERG__NOID || *stream == ERG__NOID)
        return fail(c, ERG_ENOMEM, "out of memory");
    return 1;
}

/* roctracer's HIP ops as Kineto logged them before July 2023 (PyTorch 2.0 and older on ROCm):
 * every async op in category "kernel", named by roctracer_op_string when it has no kernel name:
 * copies "CopyHostToDevice", "CopyDeviceToHost", "CopyDeviceToDevice", fills "FillBuffer",
 * barrier packets "Marker" (kineto RoctracerActivityApi.cpp before c23a1fdb; pytorch/pytorch
 * issue 97167, MI250, ROCm 5.4; HPCToolkit's roctracer translation uses the same names). A copy is
 * a memcpy, a fill a memset, and a barrier waits for others' work and does none: not an activity.
 * Any other class, or a kernel of another name, is left as it is. */
static int roc_op_class(const pctx *c, int cls)
{
    if (cls != C_GPU_KERNEL || !c->has_name)
        return cls;
    static const struct {
        const char *name;
        size_t len;
        int cls;
    } ops[] = {
        {"CopyHostToDevice", 16, C_GPU_MEMCPY},
        {"CopyDeviceToHost", 16, C_GPU_MEMCPY},
        {"CopyDeviceToDevice", 18, C_GPU_MEMCPY},
        {"FillBuffer", 10, C_GPU_MEMSET},
        {"Marker", 6, C_MARKER},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (c->name_len == ops[i].len && memcmp(c->name, ops[i].name, ops[i].len) == 0)
            return ops[i].cls;
    return cls;
}

static int is_collective(pctx *c)
{
    if (c->has_coll)
        return 1;
    return c->has_name && c->name_len >= 4 &&
           (strncasecmp(c->name, "nccl", 4) == 0 || strncasecmp(c->name, "rccl", 4) == 0);
}

static be_stack *stack_of(pctx *c)
{
    char key[2 * ERG__KEY_MAX + 2];
    size_t lp = strlen(c->has_pid ? c->pid : ""), lt = strlen(c->has_tid ? c->tid : "");
    memcpy(key, c->has_pid ? c->pid : "", lp);
    key[lp] = '\x1f';
    memcpy(key + lp + 1, c->has_tid ? c->tid : "", lt);
    uint32_t id = erg__strtab_intern(&c->tr->misc, key, lp + 1 + lt);
    if (id == ERG__NOID)
        return NULL;
    if (id >= c->n_stacks) {
        size_t n = (size_t)id + 16;
        be_stack *p = realloc(c->stacks, n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + c->n_stacks, 0, (n - c->n_stacks) * sizeof *p);
        c->stacks = p;
        c->n_stacks = n;
    }
    return &c->stacks[id];
}

/* Parse the ts and dur kept as text (on_scalar) into nanoseconds. */
static void resolve_times(pctx *c)
{
    if (c->ts_pending) {
        c->ts_pending = 0;
        c->bad_ts = parse_us_to_ns(c->ts_txt, c->ts_len, &c->ts_ns) != 0;
    }
    if (c->dur_pending) {
        c->dur_pending = 0;
        c->bad_dur = parse_us_to_ns(c->dur_txt, c->dur_len, &c->dur_ns) != 0;
    }
}

/* Keep a ts or dur number as text; a long one (more than the buffer holds) is parsed now. */
static void keep_time(const char *s, size_t len, char *txt, size_t size, size_t *txt_len,
                      int *pending, int *bad, int64_t *ns)
{
    if (len < size) {
        memcpy(txt, s, len);
        *txt_len = len;
        *pending = 1;
        *bad = 0;
    } else {
        *pending = 0;
        *bad = parse_us_to_ns(s, len, ns) != 0;
    }
}

/* Count an event dropped for its ts/dur; remember the first one's ordinal and what was wrong
 * (read_pass finds its line afterwards). */
static void drop_event(pctx *c, int need_dur)
{
    c->tr->stats.missing_duration++;
    if (c->drop_ev)
        return;
    c->drop_ev = c->ev_seen;
    const char *why = !c->has_ts               ? "no ts"
                      : c->bad_ts && c->str_ts ? "ts is not a number"
                      : c->bad_ts              ? "ts is out of range"
                      : !need_dur              ? "no ts"
                      : !c->has_dur            ? "no dur"
                      : c->str_dur             ? "dur is not a number"
                                               : "dur is out of range";
    snprintf(c->drop_why, sizeof c->drop_why, "%.48s \"%.64s\": %s", c->has_cat ? c->cat : "event",
             c->has_name ? c->name : "", why);
}

static int end_event(pctx *c)
{
    struct erg_trace *tr = c->tr;
    tr->stats.events++;
    char ph = c->ph;
    if (ph != 'X' && ph != 'B' && ph != 'E') {
        tr->stats.host_events++; /* metadata, instants, flows, counters, ... */
        return 1;
    }
    if (ph == 'E') {
        be_stack *st = stack_of(c);
        if (!st)
            return fail(c, ERG_ENOMEM, "out of memory");
        if (st->n == 0) {
            tr->stats.unmatched_end++;
            return 1;
        }
        open_begin b = st->v[--st->n];
        if (b.cls == C_HOST) {
            tr->stats.host_events++;
            return 1;
        }
        if (b.cls == C_UNKNOWN)
            return 1; /* counted at its B */
        if (b.cls == C_MARKER) {
            tr->stats.markers++;
            return 1;
        }
        resolve_times(c);
        if (!c->has_ts || c->bad_ts) {
            drop_event(c, 0);
            return 1;
        }
        int64_t dur = c->ts_ns - b.ts_ns;
        if (dur < 0) {
            tr->stats.negative_duration++;
            return 1;
        }
        int cat = b.cls == C_GPU_KERNEL && b.coll ? ERG_TRACE_CAT_COLLECTIVE : b.cls;
        return add_activity(c, b.ts_ns, dur, b.name, b.device, b.stream, cat);
    }
    int cls = roc_op_class(c, c->has_cat ? c->cls : C_UNKNOWN);
    if (ph == 'B') {
        be_stack *st = stack_of(c);
        if (!st)
            return fail(c, ERG_ENOMEM, "out of memory");
        if (st->n == st->cap) {
            size_t cap = st->cap ? st->cap * 2 : 8;
            open_begin *p = realloc(st->v, cap * sizeof *p);
            if (!p)
                return fail(c, ERG_ENOMEM, "out of memory");
            st->v = p;
            st->cap = cap;
        }
        open_begin b = {0, ERG__NOID, 0, 0, cls, 0};
        if (cls == C_UNKNOWN) {
            if (!count_unknown(c))
                return 0;
            tr->stats.unknown_events++;
        } else if (cls != C_HOST && cls != C_MARKER) {
            resolve_times(c);
            if (!c->has_ts || c->bad_ts) {
                drop_event(c, 0);
                b.cls = C_UNKNOWN; /* keep the stack balanced; the E is then ignored */
            } else {
                if (!event_ids(c, &b.name, &b.device, &b.stream))
                    return 0;
                b.ts_ns = c->ts_ns;
                b.coll = is_collective(c);
            }
        }
        st->v[st->n++] = b;
        return 1;
    }
    /* ph == 'X' */
    if (!c->has_cat && (c->str_ts || c->str_dur) && !c->rocprof_ev)
        c->rocprof_ev = c->ev_seen;
    if (cls == C_HOST) {
        tr->stats.host_events++;
        return 1;
    }
    if (cls == C_UNKNOWN) {
        tr->stats.unknown_events++;
        return count_unknown(c);
    }
    if (cls == C_MARKER) {
        tr->stats.markers++;
        return 1;
    }
    resolve_times(c);
    if (!c->has_ts || c->bad_ts || !c->has_dur || c->bad_dur) {
        drop_event(c, 1);
        return 1;
    }
    if (c->dur_ns < 0) {
        tr->stats.negative_duration++;
        return 1;
    }
    uint32_t name, dev, stream;
    if (!event_ids(c, &name, &dev, &stream))
        return 0;
    int cat = cls == C_GPU_KERNEL && is_collective(c) ? ERG_TRACE_CAT_COLLECTIVE : cls;
    return add_activity(c, c->ts_ns, c->dur_ns, name, dev, stream, cat);
}

static void begin_event(pctx *c)
{
    c->in_event = 1;
    c->in_args = 0;
    c->ev_field = F_NONE;
    c->arg_field = F_NONE;
    c->ph = 0;
    c->has_cat = c->has_name = c->has_ts = c->has_dur = c->bad_ts = c->bad_dur = 0;
    c->str_ts = c->str_dur = 0;
    c->ev_seen++;
    c->ts_pending = c->dur_pending = 0;
    c->has_pid = c->has_tid = c->has_adev = c->has_astream = c->has_coll = 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* yajl callbacks */

static long ev_level(const pctx *c)
{
    return c->events_depth + 1;
}

/* A complete (X) host event is only counted: once its phase and category are known, the fast
 * tokenizer may skip the rest of it (most of a trace's bytes are host events). An event of any
 * phase but X, B and E (flows, instants, metadata, counters: a third of a Kineto trace's events)
 * is only counted whatever its other fields hold (end_event): it is skipped once its phase is
 * known. A later "ph" key (or "cat", for an X event) makes the tokenizer bail out: yajl reads it.
 */
static void skip_host_event(pctx *c)
{
    if (!c->js)
        return;
    if (c->ph == 'X') {
        if (c->has_cat && c->cls == C_HOST)
            erg__jscan_skip_object(c->js, 1);
    } else if (c->ph && c->ph != 'B' && c->ph != 'E') {
        erg__jscan_skip_object(c->js, 0);
    }
}

/* A scalar value: str/len is its text (strings unquoted, numbers raw); is_num tells which. */
static int on_scalar(pctx *c, const char *s, size_t len, int is_num, int is_str)
{
    if (c->in_event) {
        if (c->depth == ev_level(c)) {
            enum ev_field f = c->ev_field;
            c->ev_field = F_NONE;
            switch (f) {
            case F_PH:
                if (is_str && len >= 1)
                    c->ph = s[0];
                skip_host_event(c);
                break;
            case F_CAT:
                if (is_str && len == c->last_len && memcmp(s, c->last_cat, len) == 0) {
                    /* the category of the event before (c->cat holds it already) */
                    c->cls = c->last_cls;
                    c->cat_len = len;
                    c->has_cat = 1;
                } else if (is_str) {
                    copy_text(c->cat, sizeof c->cat, s, len);
                    size_t cl = strlen(c->cat); /* cut at 63 bytes, or at a NUL byte */
                    /* events repeat their categories: classify a new one only */
                    if (cl != c->last_len || memcmp(c->cat, c->last_cat, cl) != 0) {
                        c->last_cls = classify(c->cat, cl, 1);
                        memcpy(c->last_cat, c->cat, cl + 1);
                        c->last_len = cl;
                    }
                    c->cls = c->last_cls;
                    c->cat_len = cl;
                    c->has_cat = 1;
                }
                skip_host_event(c);
                break;
            case F_NAME:
                if (is_str) {
                    if (len + 1 > c->name_cap) {
                        size_t cap = len + 1 > 256 ? len + 1 : 256;
                        char *p = realloc(c->name, cap);
                        if (!p)
                            return fail(c, ERG_ENOMEM, "out of memory");
                        c->name = p;
                        c->name_cap = cap;
                    }
                    memcpy(c->name, s, len);
                    c->name[len] = '\0';
                    c->name_len = len;
                    c->has_name = 1;
                }
                break;
            case F_TS:
                c->has_ts = 1;
                c->ts_pending = 0;
                c->bad_ts = c->str_ts = !is_num;
                if (is_num)
                    keep_time(s, len, c->ts_txt, sizeof c->ts_txt, &c->ts_len, &c->ts_pending,
                              &c->bad_ts, &c->ts_ns);
                break;
            case F_DUR:
                c->has_dur = 1;
                c->dur_pending = 0;
                c->bad_dur = c->str_dur = !is_num;
                if (is_num)
                    keep_time(s, len, c->dur_txt, sizeof c->dur_txt, &c->dur_len, &c->dur_pending,
                              &c->bad_dur, &c->dur_ns);
                break;
            case F_PID:
                if (is_num || is_str) {
                    if (!copy_key(c, c->pid, sizeof c->pid, s, len, "pid"))
                        return 0;
                    c->has_pid = 1;
                }
                break;
            case F_TID:
                if (is_num || is_str) {
                    if (!copy_key(c, c->tid, sizeof c->tid, s, len, "tid"))
                        return 0;
                    c->has_tid = 1;
                }
                break;
            default:
                break;
            }
        } else if (c->in_args && c->depth == ev_level(c) + 1) {
            enum ev_field f = c->arg_field;
            c->arg_field = F_NONE;
            if (f == A_DEVICE && (is_num || is_str)) {
                if (!copy_key(c, c->adev, sizeof c->adev, s, len, "device"))
                    return 0;
                c->has_adev = 1;
            } else if (f == A_STREAM && (is_num || is_str)) {
                if (!copy_key(c, c->astream, sizeof c->astream, s, len, "stream"))
                    return 0;
                c->has_astream = 1;
            } else if (f == A_COLL) {
                c->has_coll = 1;
            }
        }
        return 1;
    }
    if (c->devprops_depth >= 0 && c->depth == c->devprops_depth + 1) {
        if (c->prop_key == 1 && (is_num || is_str)) {
            if (!copy_key(c, c->cur_prop.id, sizeof c->cur_prop.id, s, len, "deviceProperties"))
                return 0;
        } else if (c->prop_key == 2 && is_str) {
            copy_text(c->cur_prop.name, sizeof c->cur_prop.name, s, len);
        }
        c->prop_key = 0;
        return 1;
    }
    if (c->distinfo_depth >= 0 && c->depth == c->distinfo_depth) {
        if (c->rank_key && is_num) {
            char buf[32];
            copy_text(buf, sizeof buf, s, len);
            char *end;
            long r = strtol(buf, &end, 10);
            if (*end == '\0' && r >= 0 && r < 1000000) {
                c->rank = (int)r;
                c->has_rank = 1;
            }
        }
        c->rank_key = 0;
    }
    if (c->depth == 1 && c->top_seen == 2)
        c->tail_other = 1;
    if (c->depth == 1 && c->top_seen == 1 && c->top_key == T_ERG) {
        /* an erg file (schedule/1, signature/1, rules/1...) given where a trace is expected */
        char tag[64], what[96];
        copy_text(tag, sizeof tag, s, is_str ? len : 0);
        if (is_str)
            snprintf(what, sizeof what, "it is an erg %s file", tag);
        else
            snprintf(what, sizeof what, "it has an \"erg\" tag");
        c->status = ERG_EPARSE; /* as fail(), formatted in place (fits c->err: 236 bytes at most) */
        snprintf(c->err, sizeof c->err,
                 "not a Chrome/Kineto trace (%s%s); erg trace reads the trace-event JSON of "
                 "PyTorch's profiler or another Chrome trace writer",
                 what, strcmp(tag, "schedule/1") == 0 ? ": run erg compose on it" : "");
        return 0;
    }
    return 1;
}

static int cb_null(void *ctx)
{
    return on_scalar(ctx, "", 0, 0, 0);
}
static int cb_bool(void *ctx, int v)
{
    (void)v;
    return on_scalar(ctx, "", 0, 0, 0);
}
static int cb_number(void *ctx, const char *s, size_t len)
{
    return on_scalar(ctx, s, len, 1, 0);
}
static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    return on_scalar(ctx, (const char *)s, len, 0, 1);
}

static int key_is(const unsigned char *k, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return len == n && memcmp(k, lit, n) == 0;
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t len)
{
    pctx *c = ctx;
    if (c->in_event) {
        if (c->depth == ev_level(c)) {
            enum ev_field f = F_NONE;
            switch (len) {
            case 2:
                f = key_is(k, len, "ph") ? F_PH : key_is(k, len, "ts") ? F_TS : F_NONE;
                break;
            case 3:
                f = key_is(k, len, "cat")   ? F_CAT
                    : key_is(k, len, "dur") ? F_DUR
                    : key_is(k, len, "pid") ? F_PID
                    : key_is(k, len, "tid") ? F_TID
                                            : F_NONE;
                break;
            case 4:
                f = key_is(k, len, "name") ? F_NAME : key_is(k, len, "args") ? F_ARGS : F_NONE;
                break;
            default:
                break;
            }
            c->ev_field = f;
            /* a field erg does not read: its value changes nothing (on_scalar, cb_start_map and
             * cb_start_array do nothing for it but keep the depth), so the fast tokenizer may pass
             * over it without callbacks */
            if (f == F_NONE && c->js)
                erg__jscan_skip_value(c->js);
        } else if (c->in_args && c->depth == ev_level(c) + 1) {
            c->arg_field = key_is(k, len, "device")            ? A_DEVICE
                           : key_is(k, len, "stream")          ? A_STREAM
                           : key_is(k, len, "Collective name") ? A_COLL
                                                               : F_NONE;
            if (c->arg_field == F_NONE && c->js)
                erg__jscan_skip_value(c->js);
        }
        return 1;
    }
    if (c->depth == 1 && c->top_seen == 1) {
        c->top_key = key_is(k, len, "traceEvents")        ? T_EVENTS
                     : key_is(k, len, "deviceProperties") ? T_DEVPROPS
                     : key_is(k, len, "distributedInfo")  ? T_DISTINFO
                     : key_is(k, len, "erg")              ? T_ERG
                                                          : T_NONE;
        if (c->top_key == T_EVENTS)
            c->saw_events = 1;
        return 1;
    }
    if (c->devprops_depth >= 0 && c->depth == c->devprops_depth + 1)
        c->prop_key = key_is(k, len, "id") ? 1 : key_is(k, len, "name") ? 2 : 0;
    else if (c->distinfo_depth >= 0 && c->depth == c->distinfo_depth)
        c->rank_key = key_is(k, len, "rank");
    return 1;
}

static int cb_start_map(void *ctx)
{
    pctx *c = ctx;
    if (c->depth == 0) {
        c->top_seen = 1; /* JSON Object Format */
    } else if (c->in_event) {
        if (c->depth == ev_level(c)) {
            if (c->ev_field == F_ARGS)
                c->in_args = 1;
            c->ev_field = F_NONE;
        } else if (c->in_args && c->depth == ev_level(c) + 1) {
            if (c->arg_field == A_COLL)
                c->has_coll = 1;
            c->arg_field = F_NONE;
        }
    } else if (c->events_depth >= 0 && c->depth == c->events_depth) {
        begin_event(c);
    } else if (c->devprops_depth >= 0 && c->depth == c->devprops_depth) {
        memset(&c->cur_prop, 0, sizeof c->cur_prop);
        c->prop_key = 0;
    } else if (c->depth == 1 && c->top_seen == 1 && c->top_key == T_DISTINFO) {
        c->distinfo_depth = 2;
    }
    c->depth++;
    return 1;
}

static int cb_end_map(void *ctx)
{
    pctx *c = ctx;
    c->depth--;
    if (c->in_event) {
        if (c->in_args && c->depth == ev_level(c))
            c->in_args = 0;
        else if (c->depth == c->events_depth) {
            c->in_event = 0;
            c->tail_other = 0;
            return end_event(c);
        }
        return 1;
    }
    if (c->devprops_depth >= 0 && c->depth == c->devprops_depth) {
        if (c->cur_prop.id[0]) {
            if (c->n_props == c->props_cap) {
                size_t cap = c->props_cap ? c->props_cap * 2 : 8;
                devprop *p = realloc(c->props, cap * sizeof *p);
                if (!p)
                    return fail(c, ERG_ENOMEM, "out of memory");
                c->props = p;
                c->props_cap = cap;
            }
            c->props[c->n_props++] = c->cur_prop;
        }
    } else if (c->distinfo_depth >= 0 && c->depth == c->distinfo_depth - 1) {
        c->distinfo_depth = -1;
    }
    if (c->depth == 1)
        c->top_key = T_NONE;
    return 1;
}

static int cb_start_array(void *ctx)
{
    pctx *c = ctx;
    if (c->depth == 0) {
        c->top_seen = 2; /* JSON Array Format: the events themselves */
        c->events_depth = 1;
    } else if (c->in_event) {
        if (c->depth == ev_level(c))
            c->ev_field = F_NONE;
        else if (c->in_args && c->depth == ev_level(c) + 1) {
            if (c->arg_field == A_COLL)
                c->has_coll = 1;
            c->arg_field = F_NONE;
        }
    } else if (c->depth == 1 && c->top_seen == 1) {
        if (c->top_key == T_EVENTS)
            c->events_depth = 2;
        else if (c->top_key == T_DEVPROPS)
            c->devprops_depth = 2;
    }
    c->depth++;
    return 1;
}

static int cb_end_array(void *ctx)
{
    pctx *c = ctx;
    c->depth--;
    if (c->depth == 1 && c->top_seen == 2)
        c->tail_other = 1; /* an array as an element of the events array */
    if (!c->in_event) {
        if (c->events_depth >= 0 && c->depth == c->events_depth - 1)
            c->events_depth = -1;
        else if (c->devprops_depth >= 0 && c->depth == c->devprops_depth - 1)
            c->devprops_depth = -1;
        if (c->depth == 1)
            c->top_key = T_NONE;
    }
    return 1;
}

static const yajl_callbacks callbacks = {
    cb_null,      cb_bool,    NULL,       NULL,           cb_number,    cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

/* ---------------------------------------------------------------------------------------------- */

/* zlib's gzerror text without the "path: " it puts first (the diag already names the file). */
static const char *gz_message(gzFile gz, const char *path, int *zerr)
{
    const char *m = gzerror(gz, zerr);
    size_t n = path ? strlen(path) : 0;
    if (m && n && strncmp(m, path, n) == 0 && m[n] == ':' && m[n + 1] == ' ')
        m += n + 2;
    return m ? m : "";
}

/* Line and column (1-based) of byte offset `off` of the uncompressed stream, for messages. */
static void line_col(const char *path, const void *buf, size_t buf_len, uint64_t off,
                     unsigned long *line, unsigned long *col)
{
    *line = 1;
    *col = 1;
    if (!buf && strcmp(path, "-") == 0)
        return; /* stdin cannot be read again: the byte offset in the message has to do */
    if (buf) {
        const char *p = buf;
        for (uint64_t i = 0; i < off && i < buf_len; i++) {
            if (p[i] == '\n') {
                (*line)++;
                *col = 1;
            } else {
                (*col)++;
            }
        }
        return;
    }
    gzFile f = gzopen(path, "rb");
    if (!f)
        return;
    char tmp[65536];
    uint64_t pos = 0;
    while (pos < off) {
        int n = gzread(f, tmp, sizeof tmp);
        if (n <= 0)
            break;
        for (int i = 0; i < n && pos < off; i++, pos++) {
            if (tmp[i] == '\n') {
                (*line)++;
                *col = 1;
            } else {
                (*col)++;
            }
        }
    }
    gzclose(f);
}

/* Context around the byte where yajl stopped, made printable. */
static void context_text(const unsigned char *chunk, size_t len, size_t at, char *out, size_t size)
{
    size_t from = at > 30 ? at - 30 : 0, to = at + 30 < len ? at + 30 : len;
    size_t k = 0;
    for (size_t i = from; i < to && k + 1 < size; i++)
        out[k++] = chunk[i] >= 0x20 && chunk[i] < 0x7f ? (char)chunk[i] : ' ';
    out[k] = '\0';
}

static void set_parse_error(pctx *c, yajl_handle h, const char *path, const void *mem,
                            size_t mem_len, const unsigned char *chunk, size_t chunk_len,
                            uint64_t chunk_off, erg_diag *diag)
{
    size_t at = yajl_get_bytes_consumed(h);
    if (at > chunk_len)
        at = chunk_len;
    if (at > 0)
        at--; /* yajl has consumed the offending byte: point at it */
    uint64_t off = chunk_off + at;
    unsigned char *msg = yajl_get_error(h, 0, chunk, chunk_len);
    char what[160];
    copy_text(what, sizeof what, msg ? (const char *)msg : "parse error",
              strlen(msg ? (const char *)msg : "parse error"));
    if (msg)
        yajl_free_error(h, msg);
    for (char *p = what; *p; p++)
        if (*p == '\n')
            *p = ' ';
    size_t wl = strlen(what);
    while (wl > 0 && what[wl - 1] == ' ')
        what[--wl] = '\0';
    unsigned long line, col;
    line_col(path, mem, mem_len, off, &line, &col);
    char ctx_txt[80] = "";
    if (chunk && chunk_len)
        context_text(chunk, chunk_len, at, ctx_txt, sizeof ctx_txt);
    char where[256];
    if (path && strcmp(path, "-") == 0) /* stdin cannot be read again for the line */
        snprintf(where, sizeof where, "%s", c->file);
    else
        snprintf(where, sizeof where, "%s:%lu:%lu", c->file, line, col);
    erg_diag_set(diag, ERG_EPARSE, where, "malformed JSON at byte %llu: %s near '%s'",
                 (unsigned long long)off, what, ctx_txt);
}

static void ctx_free(pctx *c)
{
    for (size_t i = 0; i < c->n_stacks; i++)
        free(c->stacks[i].v);
    free(c->stacks);
    free(c->props);
    free(c->name);
}

int erg__trace_pick_rank(const struct erg_trace *tr, int has_rank, int rank, const char *file,
                         int *out, erg_diag *diag)
{
    *out = -1; /* defined on every path, also on error */
    if (tr->rank_from_order)
        has_rank = 0; /* the first rank not taken: its position, as all before it were placed so */
    if (!has_rank)
        rank = (int)tr->n_files;
    for (int again = 1; again;) { /* without distributedInfo: the first rank not yet taken */
        again = 0;
        for (size_t f = 0; f < tr->n_files; f++) {
            if (tr->file_rank[f] != rank)
                continue;
            if (has_rank)
                return erg_diag_set(diag, ERG_EINVAL, file,
                                    "rank %d was already read from another file (each file must "
                                    "be one rank; distributedInfo.rank decides; to combine traces "
                                    "of separate jobs, take ranks from the order of the files: "
                                    "--rank-from-order)",
                                    rank);
            rank++;
            again = 1;
        }
    }
    *out = rank;
    return ERG_OK;
}

void erg__dev_set_id(erg__dev *d, int rank)
{
    d->rank = rank;
    const char *k = d->key;
    char *end;
    long v = strtol(k, &end, 10);
    if (*k && *end == '\0' && v >= 0) {
        snprintf(d->id, sizeof d->id, "rank%d/gpu%ld", rank, v);
        return;
    }
    char head[16];
    int hl = snprintf(head, sizeof head, "rank%d/", rank);
    size_t kl = strlen(k);
    if ((size_t)hl + kl < sizeof d->id) {
        memcpy(d->id, head, (size_t)hl);
        memcpy(d->id + hl, k, kl + 1);
        return;
    }
    /* too long for a signature's device field: keep a prefix and a hash of the whole key, so that
     * two keys with a common prefix (GPU UUIDs) stay two devices */
    uint32_t hsh = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < kl; i++) {
        hsh ^= (unsigned char)k[i];
        hsh *= 16777619u;
    }
    size_t keep = sizeof d->id - (size_t)hl - 10; /* "~" + 8 hex + NUL */
    memcpy(d->id, head, (size_t)hl);
    memcpy(d->id + hl, k, keep);
    snprintf(d->id + (size_t)hl + keep, 10, "~%08x", (unsigned)hsh);
}

int erg__trace_add_file(struct erg_trace *tr, int rank, int has_rank, const char *file,
                        erg_diag *diag)
{
    if (tr->n_files == tr->files_cap) {
        size_t cap = tr->files_cap ? tr->files_cap * 2 : 8;
        int *p = realloc(tr->file_rank, cap * sizeof *p);
        if (!p)
            return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
        tr->file_rank = p;
        unsigned char *e = realloc(tr->file_has_rank, cap);
        if (!e)
            return erg_diag_set(diag, ERG_ENOMEM, file, "out of memory");
        tr->file_has_rank = e;
        tr->files_cap = cap;
    }
    if (tr->n_files == 0)
        copy_text(tr->first_file, sizeof tr->first_file, file, strlen(file));
    tr->file_has_rank[tr->n_files] = has_rank ? 1 : 0;
    tr->file_rank[tr->n_files++] = rank;
    return ERG_OK;
}

/* Give this file's devices their rank, id and name; count unclosed B events. */
static int finish_file(pctx *c, erg_diag *diag)
{
    struct erg_trace *tr = c->tr;
    for (size_t i = 0; i < c->n_stacks; i++)
        for (size_t j = 0; j < c->stacks[i].n; j++)
            if (c->stacks[i].v[j].cls != C_HOST)
                tr->stats.unclosed_begin++;
    int rank = -1;
    int st = erg__trace_pick_rank(tr, c->has_rank, c->rank, c->file, &rank, diag);
    if (st != ERG_OK)
        return st;
    /* ROCm (roctracer) traces name GPU i by its HSA agent id, and CPU agents (one per NUMA node)
     * come first: on a two-socket node GPU 0 appears as device 2, while deviceProperties is
     * indexed 0..N-1 (HTA's tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto: four
     * "AMD Radeon Graphics" properties, every kernel and copy on device 2; its process_labels
     * run "GPU 0".."GPU 15" whatever the node, so they tell nothing). The trace does not say how
     * many CPU agents there were: the lowest device id used is taken as GPU 0 (a process's first
     * device), raised if needed so that every id used falls in 0..N-1. A trace that already
     * starts at device 0 (newer Kineto) is left as it is. */
    long offset = 0, max_id = -1;
    int amd = 0;
    for (size_t p = 0; p < c->n_props; p++) {
        char *e;
        long id = strtol(c->props[p].id, &e, 10);
        if (c->props[p].id[0] && *e == '\0' && id > max_id && id < 1000000)
            max_id = id;
        amd |= strstr(c->props[p].name, "AMD") != NULL ||
               strstr(c->props[p].name, "Radeon") != NULL ||
               strstr(c->props[p].name, "Instinct") != NULL;
    }
    if (amd && max_id >= 0) {
        long lo = -1, hi = -1;
        for (size_t i = c->first_dev; i < tr->n_devs; i++) {
            char *end;
            long v = strtol(tr->devs[i].key, &end, 10);
            if (!tr->devs[i].key[0] || *end != '\0' || v < 0 || v >= 1000000)
                continue;
            lo = lo < 0 || v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        if (lo > 0) {
            offset = lo;
            if (hi - offset > max_id)
                offset = hi - max_id;
        } else if (hi > max_id) {
            offset = hi - max_id;
        }
    }
    for (size_t i = c->first_dev; i < tr->n_devs; i++) {
        erg__dev *d = &tr->devs[i];
        char *end;
        long v = strtol(d->key, &end, 10);
        if (offset > 0 && d->key[0] && *end == '\0' && v >= offset)
            snprintf(d->key, sizeof d->key, "%ld", v - offset); /* the GPU's index */
        erg__dev_set_id(d, rank);
        for (size_t p = 0; p < c->n_props; p++)
            if (strcmp(c->props[p].id, d->key) == 0)
                copy_text(d->name, sizeof d->name, c->props[p].name, strlen(c->props[p].name));
    }
    return erg__trace_add_file(tr, rank, c->has_rank, c->file, diag);
}

/* Sort key: (device, stream, file order), then count descents and overlaps per stream. */
typedef struct idx_act {
    uint32_t device, stream;
    size_t pos;
    int64_t start, end;
} idx_act;

static int cmp_idx(const void *a, const void *b)
{
    const idx_act *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_start_end(const void *a, const void *b)
{
    const idx_act *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Stable counting sort of v[0..n) into out by the device (by_device) or the stream, each below
 * range; -1 when out of memory. */
static int count_sort(const idx_act *v, idx_act *out, size_t n, size_t range, int by_device)
{
    size_t *at = calloc(range + 1, sizeof *at);
    if (!at)
        return -1;
    for (size_t i = 0; i < n; i++)
        at[(by_device ? v[i].device : v[i].stream) + 1]++;
    for (size_t k = 1; k <= range; k++)
        at[k] += at[k - 1];
    for (size_t i = 0; i < n; i++)
        out[at[by_device ? v[i].device : v[i].stream]++] = v[i];
    free(at);
    return 0;
}

/* The activities of one file in (device, stream, file order): two stable counting sorts (stream,
 * then device) when the ids are few beside the activities, as they are in traces; qsort
 * otherwise. */
static void sort_by_stream(idx_act *v, idx_act *tmp, size_t n)
{
    uint32_t max_dev = 0, max_stream = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].device > max_dev)
            max_dev = v[i].device;
        if (v[i].stream > max_stream)
            max_stream = v[i].stream;
    }
    size_t bound = 4 * n + 4096;
    if (!tmp || max_dev >= bound || max_stream >= bound ||
        count_sort(v, tmp, n, (size_t)max_stream + 1, 0) != 0 ||
        count_sort(tmp, v, n, (size_t)max_dev + 1, 1) != 0)
        qsort(v, n, sizeof *v, cmp_idx); /* v is unchanged when a counting sort failed */
}

void erg__trace_check_streams(struct erg_trace *tr, size_t first)
{
    size_t n = tr->n_acts - first;
    if (n < 2)
        return;
    idx_act *v = malloc(n * sizeof *v);
    if (!v)
        return; /* informational counts only */
    for (size_t i = 0; i < n; i++) {
        const erg__act *a = &tr->acts[first + i];
        v[i] = (idx_act){a->device, a->stream, i, a->start_ns, a->start_ns + a->dur_ns};
    }
    idx_act *tmp = malloc(n * sizeof *tmp);
    sort_by_stream(v, tmp, n);
    free(tmp);
    /* each stream in file order: count the activities that start before the one before them;
     * then in (start, end) order (sorted here only when the file order is not that already),
     * count those that start before the end of the ones before them */
    for (size_t g = 0; g < n;) {
        size_t h = g + 1;
        int sorted = 1;
        for (; h < n && v[h].device == v[g].device && v[h].stream == v[g].stream; h++) {
            if (v[h].start < v[h - 1].start) {
                tr->stats.out_of_order++;
                sorted = 0;
            } else if (v[h].start == v[h - 1].start && v[h].end < v[h - 1].end) {
                sorted = 0;
            }
        }
        if (!sorted)
            qsort(v + g, h - g, sizeof *v, cmp_start_end);
        int64_t end = v[g].end;
        for (size_t i = g + 1; i < h; i++) {
            if (v[i].start < end)
                tr->stats.stream_overlaps++;
            if (v[i].end > end)
                end = v[i].end;
        }
        g = h;
    }
    free(v);
}

/* A pass over the bytes before yajl sees them, bounding the length of every string and number
 * (ERG__TOKEN_MAX) so that a hostile token fails at once instead of being buffered and re-scanned
 * chunk after chunk. It also counts lines, for the message. */
typedef struct tokscan {
    int in_str, esc;
    uint64_t run;  /* bytes of the current token so far */
    uint64_t line; /* 1-based */
} tokscan;

/* Returns the index in chunk of the byte that makes a token too long, or n when all is well. */
static size_t tokscan_feed(tokscan *t, const unsigned char *chunk, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = chunk[i];
        if (ch == '\n')
            t->line++;
        if (t->in_str) {
            if (t->esc)
                t->esc = 0;
            else if (ch == '\\')
                t->esc = 1;
            else if (ch == '"') {
                t->in_str = 0;
                t->run = 0;
                continue;
            }
            if (++t->run > ERG__TOKEN_MAX)
                return i;
            continue;
        }
        switch (ch) {
        case '"':
            t->in_str = 1;
            t->run = 0;
            break;
        case ' ':
        case '\t':
        case '\n':
        case '\r':
        case ',':
        case ':':
        case '[':
        case ']':
        case '{':
        case '}':
            t->run = 0;
            break;
        default:
            if (++t->run > ERG__TOKEN_MAX)
                return i;
        }
    }
    return n;
}

/* Finding the n-th event object again (1-based, in the order begin_event met them): a yajl pass
 * that follows only the nesting, run once per file that dropped an event. */
typedef struct locator {
    long depth, events_depth;
    int top; /* 0 none yet, 1 object, 2 array */
    int key_events;
    uint64_t seen, want;
} locator;

static int loc_scalar(void *ctx)
{
    locator *l = ctx;
    if (l->depth == 1)
        l->key_events = 0;
    return 1;
}
static int loc_null(void *ctx)
{
    return loc_scalar(ctx);
}
static int loc_bool(void *ctx, int v)
{
    (void)v;
    return loc_scalar(ctx);
}
static int loc_number(void *ctx, const char *s, size_t len)
{
    (void)s, (void)len;
    return loc_scalar(ctx);
}
static int loc_string(void *ctx, const unsigned char *s, size_t len)
{
    (void)s, (void)len;
    return loc_scalar(ctx);
}
static int loc_key(void *ctx, const unsigned char *k, size_t len)
{
    locator *l = ctx;
    if (l->depth == 1 && l->top == 1)
        l->key_events = len == 11 && memcmp(k, "traceEvents", 11) == 0;
    return 1;
}
static int loc_start_map(void *ctx)
{
    locator *l = ctx;
    if (l->depth == 0)
        l->top = 1;
    else if (l->depth == l->events_depth && ++l->seen == l->want)
        return 0; /* found: yajl stops with the brace consumed */
    l->depth++;
    return 1;
}
static int loc_start_array(void *ctx)
{
    locator *l = ctx;
    if (l->depth == 0) {
        l->top = 2;
        l->events_depth = 1;
    } else if (l->depth == 1 && l->top == 1 && l->key_events) {
        l->events_depth = 2;
    }
    l->depth++;
    return 1;
}
static int loc_end(void *ctx)
{
    locator *l = ctx;
    l->depth--;
    if (l->depth == 1)
        l->key_events = 0;
    if (l->events_depth > l->depth)
        l->events_depth = -1;
    return 1;
}

static const yajl_callbacks loc_callbacks = {
    loc_null, loc_bool,        NULL,    NULL, loc_number, loc_string, loc_start_map, loc_key,
    loc_end,  loc_start_array, loc_end,
};

/* Byte offset of the n-th event's "{" in a gz stream (path) or a buffer (mem); UINT64_MAX when
 * it cannot be found again (stdin, a file that changed, out of memory). */
static uint64_t locate_event(const char *path, const void *mem, size_t mem_len, uint64_t n)
{
    if (!mem && (!path || strcmp(path, "-") == 0))
        return UINT64_MAX;
    locator l = {0, -1, 0, 0, 0, n};
    yajl_handle h = yajl_alloc(&loc_callbacks, NULL, &l);
    if (!h)
        return UINT64_MAX;
    uint64_t at = UINT64_MAX;
    if (mem) {
        if (yajl_parse(h, mem, mem_len) == yajl_status_client_canceled)
            at = yajl_get_bytes_consumed(h) - 1;
    } else {
        gzFile f = gzopen(path, "rb");
        unsigned char *tmp = malloc(65536);
        uint64_t off = 0;
        int got;
        while (f && tmp && (got = gzread(f, tmp, 65536)) > 0) {
            yajl_status ys = yajl_parse(h, tmp, (size_t)got);
            if (ys == yajl_status_client_canceled) {
                at = off + yajl_get_bytes_consumed(h) - 1;
                break;
            }
            if (ys != yajl_status_ok)
                break;
            off += (uint64_t)got;
        }
        if (f)
            gzclose(f);
        free(tmp);
    }
    yajl_free(h);
    return at;
}

/* Name the first dropped event of the file just read (c) in tr, once per trace. */
static void note_dropped(struct erg_trace *tr, const pctx *c, const char *path, const void *mem,
                         size_t mem_len, const char *name)
{
    if (!c->drop_ev || tr->drop_where[0])
        return;
    uint64_t off = locate_event(path, mem, mem_len, c->drop_ev);
    if (off == UINT64_MAX) {
        snprintf(tr->drop_where, sizeof tr->drop_where, "%.200s, event %llu", name,
                 (unsigned long long)c->drop_ev);
    } else {
        unsigned long line, col;
        line_col(path, mem, mem_len, off, &line, &col);
        snprintf(tr->drop_where, sizeof tr->drop_where, "%.200s:%lu:%lu", name, line, col);
    }
    snprintf(tr->drop_why, sizeof tr->drop_why, "%s", c->drop_why);
}

/* One pass over a gz stream (path) or a memory buffer (mem), with the fast tokenizer (jscan.c) or
 * with yajl. The fast pass sets *bailed when it met something it leaves to yajl: the file is then
 * read again with yajl, from the start (nothing of the fast pass is kept). */
static int read_pass(struct erg_trace *tr, const char *path, const void *mem, size_t mem_len,
                     const char *name, int fast, int *bailed, erg_diag *diag)
{
    pctx c;
    memset(&c, 0, sizeof c);
    c.tr = tr;
    c.file = name;
    c.file_index = (unsigned)tr->n_files;
    c.first_dev = tr->n_devs;
    c.last_dev = (size_t)-1;
    c.events_depth = c.devprops_depth = c.distinfo_depth = -1;
    c.last_len = SIZE_MAX;
    *bailed = 0;

    size_t acts0 = tr->n_acts, devs0 = tr->n_devs, unk0 = tr->n_unknown;
    erg_trace_stats stats0 = tr->stats;
    size_t *unk_counts0 = NULL;
    if (unk0) {
        unk_counts0 = malloc(unk0 * sizeof *unk_counts0);
        if (!unk_counts0)
            return erg_diag_set(diag, ERG_ENOMEM, name, "out of memory");
        for (size_t i = 0; i < unk0; i++)
            unk_counts0[i] = tr->unknown[i].count;
    }

    gzFile gz = NULL;
    unsigned char *buf = NULL;
    size_t buf_cap = 0, carry = 0; /* fast pass: an unfinished token kept from the last chunk */
    yajl_handle h = NULL;
    erg__jscan *js = NULL;
    int st = ERG_OK;
    uint64_t total = 0;
    tokscan scan = {0, 0, 0, 1};

    int fd =
        -1; /* fast pass, a plain regular file: read(2) straight into buf, without zlib's copy */
    if (path && fast && strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat sb;
        unsigned char magic[2];
        if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
                        (pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b))) {
            close(fd); /* gzip, or not a regular file: zlib reads it */
            fd = -1;
        }
    }
    if (path) {
        if (fd >= 0)
            gz = NULL;
        else if (strcmp(path, "-") == 0)
            gz = gzdopen(dup(0), "rb");
        else
            gz = gzopen(path, "rb");
        if (fd < 0 && !gz) {
            int e = errno;
            char msg[128] = "out of memory";
            if (e)
                strerror_r(e, msg, sizeof msg); /* reentrant: files may be read in threads */
            st = erg_diag_set(diag, e == ENOENT ? ERG_ENOENT : ERG_EIO, name, "cannot open: %s",
                              msg);
            goto out;
        }
        if (gz)
            gzbuffer(gz, 128 * 1024);
        buf_cap = fast ? 2 * READ_CHUNK : READ_CHUNK;
        buf = malloc(buf_cap);
        if (!buf) {
            st = erg_diag_set(diag, ERG_ENOMEM, name, "out of memory");
            goto out;
        }
    }
    if (fast)
        c.js = js = erg__jscan_new(&callbacks, &c);
    else
        h = yajl_alloc(&callbacks, NULL, &c);
    if (fast ? !js : !h) {
        st = erg_diag_set(diag, ERG_ENOMEM, name, "out of memory");
        goto out;
    }
    for (;;) {
        const unsigned char *chunk;
        size_t n;
        if (path) {
            if (fast && buf_cap - carry < READ_CHUNK) { /* a long token spans chunks */
                unsigned char *p = realloc(buf, carry + READ_CHUNK);
                if (!p) {
                    *bailed = 1;
                    goto out;
                }
                buf = p;
                buf_cap = carry + READ_CHUNK;
            }
            int r;
            if (fd >= 0) {
                ssize_t got;
                do
                    got = read(fd, buf + carry, READ_CHUNK);
                while (got < 0 && errno == EINTR);
                if (got < 0) {
                    char msg[128] = "";
                    strerror_r(errno, msg, sizeof msg);
                    st = erg_diag_set(diag, ERG_EIO, name, "read error after %llu bytes: %s",
                                      (unsigned long long)total, msg);
                    goto out;
                }
                r = (int)got; /* at most READ_CHUNK */
            } else {
                r = gzread(gz, buf + carry, READ_CHUNK);
            }
            if (r < 0) {
                int e = errno, zerr;
                const char *m = gz_message(gz, path, &zerr);
                char msg[128] = "";
                if (zerr == Z_ERRNO)
                    strerror_r(e, msg, sizeof msg);
                st = erg_diag_set(diag, zerr == Z_ERRNO ? ERG_EIO : ERG_EPARSE, name,
                                  "%s after %llu bytes: %s",
                                  zerr == Z_ERRNO ? "read error" : "corrupt gzip stream",
                                  (unsigned long long)total, zerr == Z_ERRNO ? msg : m);
                goto out;
            }
            if (r == 0 && fd >= 0)
                break;
            if (r == 0) {
                int zerr;
                const char *m = gz_message(gz, path, &zerr);
                if (zerr != Z_OK && zerr != Z_STREAM_END) {
                    st = erg_diag_set(diag, ERG_EPARSE, name,
                                      "truncated gzip stream after %llu bytes: %s",
                                      (unsigned long long)total, m);
                    goto out;
                }
                break;
            }
            chunk = buf;
            n = carry + (size_t)r;
            total += (uint64_t)r;
        } else {
            if (total >= mem_len)
                break;
            chunk = mem;
            n = mem_len;
            total = mem_len;
        }
        if (fast) {
            size_t used;
            if (erg__jscan_feed(js, chunk, n, !path, &used) != ERG__JSCAN_OK) {
                *bailed = 1;
                goto out;
            }
            carry = n - used;
            if (carry && path)
                memmove(buf, buf + used, carry);
            continue;
        }
        size_t bad = tokscan_feed(&scan, chunk, n);
        if (bad < n) {
            st = erg_diag_set(diag, ERG_EPARSE, name,
                              "line %llu, byte %llu: a JSON %s longer than %u bytes (a kernel "
                              "name is a few kB at most: this is not a trace erg reads)",
                              (unsigned long long)scan.line, (unsigned long long)(total - n + bad),
                              scan.in_str ? "string" : "number or literal", ERG__TOKEN_MAX);
            goto out;
        }
        yajl_status ys = yajl_parse(h, chunk, n);
        if (ys == yajl_status_client_canceled) {
            st = erg_diag_set(diag, c.status, name, "%s", c.err);
            goto out;
        }
        if (ys == yajl_status_error) {
            set_parse_error(&c, h, path, mem, mem_len, chunk, n, total - n, diag);
            st = ERG_EPARSE;
            goto out;
        }
    }
    if (total == 0) {
        st = erg_diag_set(diag, ERG_EPARSE, name, "empty file: no JSON trace in it");
        goto out;
    }
    if (fast) {
        size_t used;
        if ((path && erg__jscan_feed(js, buf, carry, 1, &used) != ERG__JSCAN_OK) ||
            !erg__jscan_complete(js)) {
            *bailed = 1; /* a document that ends early: yajl decides (an open array may do) */
            goto out;
        }
    } else {
        yajl_status ys = yajl_complete_parse(h);
        if (ys == yajl_status_client_canceled) {
            st = erg_diag_set(diag, c.status, name, "%s", c.err);
            goto out;
        }
        /* The JSON Array Format may omit its closing "]" (a tracer that was killed): accept an
         * end between two events, as the Trace Event Format document allows. */
        int open_array_ok = c.top_seen == 2 && c.depth == 1 && !c.in_event && !c.tail_other;
        if (ys != yajl_status_ok && !open_array_ok) {
            unsigned long line, col;
            line_col(path, mem, mem_len, total, &line, &col);
            char where[256];
            if (path && strcmp(path, "-") == 0)
                snprintf(where, sizeof where, "%s", name);
            else
                snprintf(where, sizeof where, "%s:%lu:%lu", name, line, col);
            st = erg_diag_set(diag, ERG_EPARSE, where,
                              "JSON ends early at byte %llu (truncated file?)",
                              (unsigned long long)total);
            goto out;
        }
    }
    if (!c.top_seen) {
        st = erg_diag_set(diag, ERG_EPARSE, name,
                          "not a trace: expected a JSON object with traceEvents or an array of "
                          "events");
        goto out;
    }
    if (c.top_seen == 1 && !c.saw_events) {
        st = erg_diag_set(diag, ERG_EPARSE, name,
                          "not a Chrome/Kineto trace: a JSON object without traceEvents");
        goto out;
    }
    if (c.rocprof_ev && tr->n_acts == acts0) {
        /* rocprof (v1)'s results.json (rocprofiler's bin/tblextr.py and sqlitedb.py): trace-event
         * JSON whose complete events have no "cat" and give ts, dur, pid and tid as strings,
         * with GPU i on a pid that process_name metadata names "GPU<i>". None of it is an
         * activity erg reads: refused by name, not reported as a trace without GPU activity. */
        uint64_t off = locate_event(path, mem, mem_len, c.rocprof_ev);
        char where[256];
        if (off == UINT64_MAX) {
            snprintf(where, sizeof where, "%.200s, event %llu", name,
                     (unsigned long long)c.rocprof_ev);
        } else {
            unsigned long line, col;
            line_col(path, mem, mem_len, off, &line, &col);
            snprintf(where, sizeof where, "%.200s:%lu:%lu", name, line, col);
        }
        st = erg_diag_set(diag, ERG_EPARSE, where,
                          "a rocprof (v1) results.json, which erg trace does not read: its "
                          "events have no \"cat\" and give ts and dur as strings; trace the run "
                          "with PyTorch's profiler (torch.profiler, Kineto, on ROCm too) and give "
                          "erg that JSON");
        goto out;
    }
    st = finish_file(&c, diag);
    if (st != ERG_OK)
        goto out;
    tr->stats.files++;
    tr->stats.json_bytes += total;
    tr->fast_files += fast ? 1 : 0;
    erg__trace_check_streams(tr, acts0);
    note_dropped(tr, &c, path, mem, mem_len, name);

out:
    if (st != ERG_OK || *bailed) { /* nothing of this file is kept */
        tr->n_acts = acts0;
        tr->n_devs = devs0;
        for (size_t i = 0; i < tr->dev_of_key_cap; i++) /* forget the keys of the dropped devices */
            if (tr->dev_of_key[i] != ERG__NOID && tr->dev_of_key[i] >= devs0)
                tr->dev_of_key[i] = ERG__NOID;
        tr->stats = stats0;
        tr->n_unknown = unk0;
        for (size_t i = 0; i < unk0; i++)
            tr->unknown[i].count = unk_counts0[i];
    }
    free(unk_counts0);
    if (h)
        yajl_free(h);
    erg__jscan_free(js);
    if (fd >= 0)
        close(fd);
    if (gz)
        gzclose(gz);
    free(buf);
    ctx_free(&c);
    return st;
}

/* Read from a gz stream (path) or a memory buffer (mem): with the fast tokenizer, and with yajl
 * when it bails out; stdin cannot be read twice, so it is read with yajl. */
static int read_common(struct erg_trace *tr, const char *path, const void *mem, size_t mem_len,
                       const char *name, erg_diag *diag)
{
    if (!tr)
        return erg_diag_set(diag, ERG_EINVAL, name, "no trace");
    int bailed = 0;
    if (!tr->yajl_only && !(path && strcmp(path, "-") == 0)) {
        int st = read_pass(tr, path, mem, mem_len, name, 1, &bailed, diag);
        if (!bailed)
            return st;
        errno = 0;
    }
    return read_pass(tr, path, mem, mem_len, name, 0, &bailed, diag);
}

void erg__trace_set_yajl_only(struct erg_trace *tr, int on)
{
    if (tr)
        tr->yajl_only = on ? 1 : 0;
}

int erg_trace_read_file(erg_trace *trace, const char *path, erg_diag *diag)
{
    if (!path)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "no path");
    errno = 0;
    return read_common(trace, path, NULL, 0, strcmp(path, "-") == 0 ? "<stdin>" : path, diag);
}

int erg_trace_read_buffer(erg_trace *trace, const void *buf, size_t len, const char *name,
                          erg_diag *diag)
{
    if (!buf && len)
        return erg_diag_set(diag, ERG_EINVAL, name, "no buffer");
    return read_common(trace, NULL, buf ? buf : "", len, name ? name : "(buffer)", diag);
}
