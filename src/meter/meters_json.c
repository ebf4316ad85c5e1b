/* SPDX-License-Identifier: MIT */
/* The meters/1 document (what `erg meters --json` prints) and the two facts about a meter that its
 * readers must be told: whether any figure comes from hardware, and which channels a CPU total
 * needs were declined. The library writes it (issue 13: every format erg writes is the
 * library's), so that the CLI only parses and prints and a C or Python caller gets the same
 * document. */
#include "core/json.h"
#include "erg/meter.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int erg_meter_has_hardware(const erg_meter *m)
{
    for (size_t i = 0; m && i < erg_meter_channel_count(m); i++) {
        erg_channel_info c;
        if (erg_meter_channel_info(m, i, &c) == ERG_OK && c.usable &&
            c.grade != ERG_GRADE_ESTIMATOR)
            return 1;
    }
    return 0;
}

/* snprintf's rule over an accumulated length: append text at n when it fits, count it anyway. */
static size_t append(char *buf, size_t size, size_t n, const char *text)
{
    if (n < size)
        snprintf(buf + n, size - n, "%s", text);
    return n + strlen(text);
}

size_t erg_meter_note(const erg_meter *m, char *buf, size_t size)
{
    int est = 0;
    for (size_t i = 0; m && i < erg_meter_channel_count(m); i++) {
        erg_channel_info ch;
        if (erg_meter_channel_info(m, i, &ch) == ERG_OK)
            est |= ch.usable && ch.kind == ERG_KIND_ESTIMATE;
    }
    /* say where figures come from only as far as it is true: the estimator may be excluded */
    const char *note =
        erg_meter_has_hardware(m) ? ""
        : est ? "no hardware energy counter is usable here: figures come from the estimator (CPU "
                "utilisation model) and are estimates"
              : "no channel is usable here and the estimator is not among the backends tried: "
                "no figure can be measured";
    if (size)
        buf[0] = '\0';
    return append(buf, size, 0, note);
}

size_t erg_meter_declined_totals(const erg_meter *m, char *buf, size_t size)
{
    size_t n = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; m && i < erg_meter_channel_count(m); i++) {
        erg_channel_info ch;
        if (erg_meter_channel_info(m, i, &ch) != ERG_OK || ch.usable || ch.deduplicated ||
            ch.kind == ERG_KIND_ESTIMATE ||
            !(ch.domain == ERG_DOMAIN_PACKAGE || ch.domain == ERG_DOMAIN_DRAM) ||
            strncmp(ch.reason, "permission denied", 17) != 0)
            continue;
        if (n)
            n = append(buf, size, n, ", ");
        n = append(buf, size, n, ch.id);
    }
    return n;
}

static const char *kind_name(erg_channel_kind k)
{
    return k == ERG_KIND_COUNTER ? "counter" : k == ERG_KIND_POWER ? "power" : "estimate";
}

/* A string member; jansson refuses a NULL value, so a failure is a lack of memory (or text that
 * is not UTF-8, which erg's ids never are). */
static int set_str(json_t *o, const char *key, const char *v)
{
    return json_object_set_new(o, key, json_string(v));
}

static int channel_json(const erg_meter *m, const erg_channel_info *ci, json_t *ca)
{
    json_t *o = json_object();
    int bad = !o;
    bad = bad || set_str(o, "id", ci->id) || set_str(o, "backend", ci->backend) ||
          set_str(o, "domain", erg_domain_name(ci->domain)) || set_str(o, "device", ci->device) ||
          set_str(o, "label", ci->label) || set_str(o, "grade", erg_grade_name(ci->grade)) ||
          set_str(o, "kind", kind_name(ci->kind)) ||
          json_object_set_new(o, "usable", json_boolean(ci->usable)) ||
          json_object_set_new(o, "live", ci->live < 0 ? json_null() : json_boolean(ci->live)) ||
          erg__json_set_number(o, "resolution_j", ci->resolution_j) ||
          erg__json_set_number(o, "wrap_j", ci->wrap_j) || /* null: unknown */
          erg__json_set_number(o, "min_interval_s", ci->min_interval_s) ||
          json_object_set_new(o, "deduplicated", json_boolean(ci->deduplicated));
    erg_channel_info p;
    if (!bad && ci->parent >= 0 && erg_meter_channel_info(m, (size_t)ci->parent, &p) == ERG_OK)
        bad = set_str(o, "parent", p.id);
    else if (!bad)
        bad = json_object_set_new(o, "parent", json_null());
    bad = bad || set_str(o, "reason", ci->reason);
    if (bad) {
        json_decref(o);
        return -1;
    }
    return json_array_append_new(ca, o);
}

int erg_meter_write_json(const char *path, const erg_meter *m, erg_diag *diag)
{
    if (!path || !m)
        return erg_diag_set(diag, ERG_EINVAL, NULL, "erg_meter_write_json: NULL argument");
    json_t *root = json_object(), *ba = json_array(), *ca = json_array();
    int bad = !root || !ba || !ca;
    bad = bad || set_str(root, "erg", "meters/1");
    for (size_t i = 0; !bad && i < erg_meter_backend_count(m); i++) {
        erg_backend_info b;
        if (erg_meter_backend_info(m, i, &b) != ERG_OK)
            continue; /* i < the backend count: cannot fail */
        json_t *o = json_pack("{s:s, s:s, s:s}", "name", b.name, "state",
                              erg_backend_state_name(b.state), "reason", b.reason);
        bad = json_array_append_new(ba, o) != 0;
    }
    for (size_t i = 0; !bad && i < erg_meter_channel_count(m); i++) {
        erg_channel_info ci;
        if (erg_meter_channel_info(m, i, &ci) == ERG_OK)
            bad = channel_json(m, &ci, ca) != 0;
    }
    bad = bad || json_object_set(root, "backends", ba) || json_object_set(root, "channels", ca) ||
          json_object_set_new(root, "hardware", json_boolean(erg_meter_has_hardware(m)));
    char note[512], lacking[1024];
    if (!bad && erg_meter_note(m, note, sizeof note) > 0)
        bad = set_str(root, "note", note);
    size_t nl = erg_meter_declined_totals(m, lacking, sizeof lacking);
    if (!bad && nl >= sizeof lacking) /* ids are short: only a meter of dozens of sockets */
        snprintf(lacking + sizeof lacking - 5, 5, "...");
    if (!bad && nl > 0)
        bad = json_object_set_new(
            root, "incomplete",
            json_pack("{s:s, s:s}", "declined", lacking, "note",
                      "totals over the CPU will be null (flag incomplete) while these are "
                      "declined; see each channel's reason"));
    json_decref(ba);
    json_decref(ca);
    int rc;
    if (bad)
        rc = erg_diag_set(diag, ERG_ENOMEM, path, "out of memory");
    else
        rc = erg__json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10), diag);
    json_decref(root);
    return rc;
}
