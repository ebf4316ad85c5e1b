# SPDX-License-Identifier: MIT
"""`erg report calls.jsonl [--json] [--plot DIR]`: per-API energy of a program from the records
erg.instrument and erg.run write, and FECoM's two checks (Rajput et al., Section 3.2):

- RQ1 (Eq. 1): the energy of the measured API calls cannot exceed the energy of the whole
  program, E(M_s) ≤ E(P). The sum is taken over the outermost calls only (a call measured inside
  another measured call, "nested", is already in its parent's window), with net energies (gross
  when no baseline was subtracted). The verdict holds when sum_j − project_j ≤ c·sd_j, c = 1.96
  (two-sided 95 %), sd_j = sqrt(Σ sd² of the API records and of the project records), each sd the
  quantisation error the records state (erg._records).
- RQ2 (Section 3.2.2): energy per call against argument size (bytes) per API: the least-squares
  line E = a + b·bytes and Pearson's r over the API's records that have a figure (one point per
  distinct call site and argument shapes); the line and r from 3 distinct sizes (a line through
  two sizes fits them exactly, whatever the noise).

Records without a figure (state below_resolution and others) count in calls and time but add no
energy: the table says how many calls had none. Exit status: 0; 2 bad input (a missing file, a
line that is not a JSON object or lacks a key, or a bad figure, with file, line and the byte column
of the value (of the record when a key is missing); no records; a plot folder that is a file).
"""
import argparse
import json
import math
import os
import sys

from . import _out

KEYS = ("api", "site", "calls", "time_s", "energy_j", "net_energy_j", "grade", "flags",
        "arg_bytes")
PSEUDO = ("<project>", "<instrumentation>")
C95 = 1.959963984540054
GRADES = ("hw_shunt", "model_based", "estimator")


class BadInput(Exception):
    pass


def _finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


_WS = " \t\r\n"


def _col(line, key=None):
    """1-based byte column of the record in line, or of its member key's value (the record's
    when it has no such member): json keeps no positions, so the line is walked again, on the
    error path only."""
    i = len(line) - len(line.lstrip(_WS))
    at = i
    if key is not None and line[i:i + 1] == "{":
        dec = json.JSONDecoder()
        i += 1
        try:
            while True:
                while line[i] in _WS:
                    i += 1
                if line[i] != '"':
                    break
                k, i = json.decoder.scanstring(line, i + 1)
                while line[i] in _WS:
                    i += 1
                if line[i] != ":":
                    break
                i += 1
                while line[i] in _WS:
                    i += 1
                if k == key:
                    at = i
                    break
                i = dec.raw_decode(line, i)[1]
                while line[i] in _WS:
                    i += 1
                if line[i] != ",":
                    break
                i += 1
        except (IndexError, ValueError):
            pass
    return len(line[:at].encode("utf-8")) + 1


def load(paths):
    recs = []
    for p in paths:
        try:
            f = open(p, encoding="utf-8")
        except OSError as e:
            raise BadInput("%s: %s" % (p, e.strerror)) from None
        with f:
            for i, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    raise BadInput("%s:%d:%d: not JSON: %s" % (p, i, e.colno, e.msg)) from None
                if not isinstance(r, dict):
                    raise BadInput("%s:%d:%d: a record must be a JSON object"
                                   % (p, i, _col(line)))
                for k in KEYS:
                    if k not in r:
                        raise BadInput("%s:%d:%d: record lacks \"%s\" (keys: %s)"
                                       % (p, i, _col(line), k, ", ".join(KEYS)))
                # json reads NaN, Infinity and 1e309 as floats and true as an int: none is a figure
                for k in ("calls", "time_s", "arg_bytes"):
                    if not _finite(r[k]) or r[k] < 0:
                        raise BadInput("%s:%d:%d: \"%s\" must be a finite number >= 0 (got %s)"
                                       % (p, i, _col(line, k), k, json.dumps(r[k])))
                for k in ("calls", "arg_bytes"):
                    if r[k] != int(r[k]):
                        raise BadInput("%s:%d:%d: \"%s\" must be a whole number (got %s)"
                                       % (p, i, _col(line, k), k, json.dumps(r[k])))
                for k in ("energy_j", "net_energy_j"):
                    if r[k] is not None and not _finite(r[k]):
                        raise BadInput("%s:%d:%d: \"%s\" must be a finite number or null (got %s)"
                                       % (p, i, _col(line, k), k, json.dumps(r[k])))
                # an API's record aggregates the calls it saw: at least one (the pseudo-records
                # "<project>" and "<instrumentation>" may count none)
                if r["api"] not in PSEUDO and r["calls"] < 1:
                    raise BadInput("%s:%d:%d: \"calls\" of an API record must be at least 1 "
                                   "(got %s)" % (p, i, _col(line, "calls"), json.dumps(r["calls"])))
                if r["grade"] is not None and r["grade"] not in GRADES:
                    raise BadInput("%s:%d:%d: \"grade\" must be one of %s or null (got %s)"
                                   % (p, i, _col(line, "grade"), ", ".join(GRADES),
                                      json.dumps(r["grade"])))
                recs.append(r)
    if not recs:
        raise BadInput("%s: no records" % ", ".join(paths))
    return recs


def _weakest(a, b):
    if a not in GRADES:
        return b
    if b not in GRADES:
        return a
    return GRADES[max(GRADES.index(a), GRADES.index(b))]


def _net(r):
    return r["net_energy_j"] if r["net_energy_j"] is not None else None


def summarize(recs):
    apis = {}
    for r in recs:
        if r["api"] in PSEUDO:
            continue
        key = (r["api"], bool(r.get("nested", False)))
        a = apis.get(key)
        if a is None:
            a = apis[key] = {"api": r["api"], "nested": key[1], "calls": 0, "time_s": 0.0,
                             "energy_j": None, "net_energy_j": None, "sd_j": None,
                             "grade": None, "flags": [], "arg_bytes": 0, "sites": [],
                             "calls_without_figure": 0, "channels": {}}
        a["calls"] += r["calls"]
        a["time_s"] += r["time_s"]
        a["arg_bytes"] += r["arg_bytes"] * r["calls"]
        a["grade"] = _weakest(a["grade"], r["grade"])
        for fl in r["flags"]:
            if fl not in a["flags"]:
                a["flags"].append(fl)
        if r["site"] not in a["sites"]:
            a["sites"].append(r["site"])
        if r["energy_j"] is None:
            a["calls_without_figure"] += r["calls"]
            continue
        a["energy_j"] = (a["energy_j"] or 0.0) + r["energy_j"]
        n = _net(r)
        a["net_energy_j"] = (a["net_energy_j"] or 0.0) + (n if n is not None else r["energy_j"])
        a["sd_j"] = math.hypot(a["sd_j"] or 0.0, r.get("sd_j") or 0.0)
        for cid, c in (r.get("channels") or {}).items():
            if c.get("net_energy_j") is not None:
                a["channels"][cid] = a["channels"].get(cid, 0.0) + c["net_energy_j"]
    proj = [r for r in recs if r["api"] == "<project>"]
    inst = [r for r in recs if r["api"] == "<instrumentation>"]
    project_j = None
    project_sd = 0.0
    if proj and all(p["energy_j"] is not None for p in proj):
        project_j = sum(p["net_energy_j"] if p["net_energy_j"] is not None else p["energy_j"]
                        for p in proj)
        project_sd = math.sqrt(sum((p.get("sd_j") or 0.0) ** 2 for p in proj))
    top = [a for a in apis.values() if not a["nested"]]
    sum_j = sum(a["net_energy_j"] for a in top if a["net_energy_j"] is not None)
    sd = math.sqrt(sum((a["sd_j"] or 0.0) ** 2 for a in top) + project_sd ** 2)
    base = project_j if project_j else (sum_j if sum_j else None)
    rows = sorted(apis.values(), key=lambda a: -(a["net_energy_j"] or 0.0))
    for a in rows:
        a["share"] = (a["net_energy_j"] / base if base and a["net_energy_j"] is not None
                      else None)
        a["arg_bytes"] = a["arg_bytes"] / a["calls"] if a["calls"] else 0
    rq1 = {"sum_j": sum_j, "project_j": project_j, "sd_j": sd,
           "holds": (None if project_j is None else bool(sum_j - project_j <= C95 * sd)),
           "c": C95, "outermost_calls": sum(a["calls"] for a in top),
           "api_time_s": sum(a["time_s"] for a in top),
           "project_time_s": sum(p["time_s"] for p in proj) if proj else None,
           "projects": len(proj)}
    overhead = None
    if inst:
        calls = sum(i["calls"] for i in inst)
        t = sum(i["time_s"] for i in inst)
        # the wrappers' mean cost, nested calls included (time_s is only what lies outside every
        # call window); older records without it: time_s / calls
        cost = sum(i.get("overhead_per_call_s", i["time_s"] / i["calls"] if i["calls"] else 0.0)
                   * i["calls"] for i in inst)
        overhead = {"calls": calls, "time_s": t, "per_call_s": cost / calls if calls else 0.0,
                    "share_of_project_time": (t / rq1["project_time_s"]
                                              if rq1["project_time_s"] else None)}
    rq1["scope"] = scope_of(recs)
    return rows, rq1, rq2(recs), overhead


def scope_of(recs):
    """What the figures cover: erg's meters are machine-wide (every record erg.run writes says
    "scope": "machine"; older records without the key were too), and whether net_energy_j had a
    calibrated idle power subtracted ("calibrated"), none ("none": net is the gross energy), a mix
    of both, or is not said (older records: null)."""
    b = {r.get("baseline") for r in recs}
    baseline = (None if b == {None} else next(iter(b)) if len(b) == 1 else "mixed")
    return {"scope": "machine", "baseline": baseline}


def rq2(recs):
    """Per API: points (arg_bytes, energy per call) with a fitted line and Pearson's r."""
    pts = {}
    for r in recs:
        if r["api"] in PSEUDO or r["energy_j"] is None or not r["calls"]:
            continue
        e = (r["net_energy_j"] if r["net_energy_j"] is not None else r["energy_j"]) / r["calls"]
        pts.setdefault(r["api"], []).append((float(r["arg_bytes"]), e))
    out = []
    for api, p in sorted(pts.items()):
        xs = [x for x, _ in p]
        ys = [y for _, y in p]
        n = len(p)
        fit = {"api": api, "points": [[x, y] for x, y in p], "n": n, "slope_j_per_byte": None,
               "intercept_j": None, "r": None}
        # a line through two sizes fits them exactly whatever the noise: from 3 sizes, as r
        if len(set(xs)) >= 3:
            mx, my = sum(xs) / n, sum(ys) / n
            sxx = sum((x - mx) ** 2 for x in xs)
            sxy = sum((x - mx) * (y - my) for x, y in p)
            syy = sum((y - my) ** 2 for y in ys)
            b = sxy / sxx
            fit["slope_j_per_byte"] = b
            fit["intercept_j"] = my - b * mx
            if syy > 0:
                fit["r"] = sxy / math.sqrt(sxx * syy)
        out.append(fit)
    return out


def _fmt(v, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.4g%s" % (v, unit)
    return "%s%s" % (v, unit)


def text_report(rows, rq1, fits, overhead, out):
    chans = sorted({c for a in rows for c in a["channels"]})
    head = (["api", "calls", "no fig.", "time_s", "net_energy_j", "sd_j"] + chans
            + ["share", "grade"])
    lines = [head]
    for a in rows:
        lines.append([a["api"] + (" (nested)" if a["nested"] else ""), str(a["calls"]),
                      str(a["calls_without_figure"]), _fmt(a["time_s"]),
                      _fmt(a["net_energy_j"]), _fmt(a["sd_j"])]
                     + [_fmt(a["channels"].get(c)) for c in chans]
                     + [("%.1f%%" % (100 * a["share"])) if a["share"] is not None else "-",
                        a["grade"] or "-"])
    w = [max(len(r[i]) for r in lines) for i in range(len(head))]
    for r in lines:
        out.write("  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i])
                            for i, c in enumerate(r)).rstrip() + "\n")
    out.write("\nRQ1 (FECoM Eq. 1): sum of outermost API calls %s J, project %s J, sd %s J: %s\n"
              % (_fmt(rq1["sum_j"]), _fmt(rq1["project_j"]), _fmt(rq1["sd_j"]),
                 {True: "holds (the sum does not exceed the project beyond 1.96 sd)",
                  False: "FAILS (the sum exceeds the project beyond 1.96 sd)",
                  None: "no project figure"}[rq1["holds"]]))
    if rq1["project_time_s"]:
        out.write("  the outermost calls cover %.1f%% of the project's time\n"
                  % (100 * rq1["api_time_s"] / rq1["project_time_s"]))
    if overhead:
        out.write("instrumentation: %d calls, %.3g us per call; %.4g s outside the calls' "
                  "windows%s\n"
                  % (overhead["calls"], 1e6 * overhead["per_call_s"], overhead["time_s"],
                     "" if overhead["share_of_project_time"] is None else
                     ", %.1f%% of the project's time" % (100 * overhead["share_of_project_time"])))
    sc = rq1["scope"]
    out.write("scope: machine-wide meters: every process on this host and its idle draw are in "
              "energy_j; net_energy_j %s\n"
              % {"calibrated": "subtracts the calibrated idle power x time",
                 "none": "is the gross energy (no calibration was given: erg.run --stable or "
                         "--calibration FILE gives net figures)",
                 "mixed": "subtracts a calibrated idle power in some records and nothing in "
                          "others",
                 None: "subtracts what the records' writer chose (not stated in these "
                       "records)"}[sc["baseline"]])
    shown = [f for f in fits if f["slope_j_per_byte"] is not None]
    if shown:
        out.write("\nRQ2: energy per call against argument size\n")
        for f in shown:
            b = f["slope_j_per_byte"]
            out.write("  %s: E = %.4g J %s %.4g J/B x bytes, %d points, r = %s\n"
                      % (f["api"], f["intercept_j"], "-" if b < 0 else "+", abs(b), f["n"],
                         _fmt(f["r"])))


def _esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _write(path, text):
    try:
        _out.write_whole(path, text, ".erg-report-")
    except _out.OutputError as e:
        raise BadInput("%s; not written" % e) from None


def svg_rq1(rows, rq1):
    top = [a for a in rows if not a["nested"] and a["net_energy_j"] is not None][:12]
    W, H, L, B = 720, 420, 70, 300
    vals = [rq1["project_j"] or 0.0, rq1["sum_j"] + C95 * rq1["sd_j"]] + \
        [a["net_energy_j"] for a in top]
    vmax = max([v for v in vals if v is not None] + [1e-12])
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
         'font-size="11">' % (W, H),
         '<text x="%d" y="18" font-size="14">RQ1: project energy and the sum of its API calls '
         '(net, J)</text>' % L]
    bars = [("project", rq1["project_j"], "#555")] + \
        [("sum of APIs", rq1["sum_j"], "#1f77b4")] + \
        [(a["api"], a["net_energy_j"], "#9ecae1") for a in top]
    bw = (W - L - 20) / max(len(bars), 1)
    for i, (name, v, col) in enumerate(bars):
        x = L + i * bw
        h = 0 if v is None else max(v, 0) / vmax * (B - 40)
        s.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                 % (x + 4, B - h, bw - 8, h, col))
        s.append('<text x="%.1f" y="%d" transform="rotate(40 %.1f %d)">%s</text>'
                 % (x + 6, B + 12, x + 6, B + 12, _esc(name[:40])))
        if name == "sum of APIs":
            e = C95 * rq1["sd_j"] / vmax * (B - 40)
            cx = x + bw / 2
            s.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>'
                     % (cx, B - h - e, cx, B - h + e))
    s.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, B, W - 20, B))
    s.append('<text x="4" y="%d">%.3g J</text>' % (44, vmax))
    s.append('<text x="%d" y="%d">verdict: %s</text>'
             % (L, H - 8, {True: "holds", False: "fails", None: "no project figure"}
                [rq1["holds"]]))
    s.append("</svg>\n")
    return "\n".join(s)


def svg_rq2(fit):
    W, H, L, B, R, T = 480, 340, 80, 290, 20, 40
    xs = [p[0] for p in fit["points"]]
    ys = [p[1] for p in fit["points"]]
    x0, x1 = min(xs + [0.0]), max(xs + [1.0])
    y0, y1 = min(ys + [0.0]), max(ys + [1e-12])

    def px(x):
        return L + (x - x0) / ((x1 - x0) or 1) * (W - L - R)

    def py(y):
        return B - (y - y0) / ((y1 - y0) or 1) * (B - T)
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
         'font-size="11">' % (W, H),
         '<text x="%d" y="18" font-size="13">RQ2: %s</text>' % (L, _esc(fit["api"][:60])),
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, B, W - R, B),
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, B, L, T),
         '<text x="%d" y="%d">argument size (bytes), %.3g to %.3g</text>' % (L, H - 24, x0, x1),
         '<text x="4" y="%d">J per call</text>' % (T - 4),
         '<text x="4" y="%d">%.3g</text>' % (T + 10, y1)]
    for x, y in fit["points"]:
        s.append('<circle cx="%.1f" cy="%.1f" r="3" fill="#1f77b4"/>' % (px(x), py(y)))
    if fit["slope_j_per_byte"] is not None:
        a, b = fit["intercept_j"], fit["slope_j_per_byte"]
        s.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728"/>'
                 % (px(x0), py(a + b * x0), px(x1), py(a + b * x1)))
        s.append('<text x="%d" y="%d">E = %.3g %s %.3g x bytes; r = %s</text>'
                 % (L, H - 8, a, "-" if b < 0 else "+", abs(b), _fmt(fit["r"])))
    s.append("</svg>\n")
    return "\n".join(s)


def _slug(s):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in s)[:80]


def _help_formatter():
    from ._cli import help_formatter
    return help_formatter()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="erg report", formatter_class=_help_formatter(),
                                 description="Per-API energy of a program from erg's call "
                                 "records, with FECoM's RQ1 and RQ2 checks.")
    ap.add_argument("files", nargs="+", metavar="calls.jsonl")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--plot", metavar="DIR", help="write rq1.svg and rq2-<api>.svg there")
    a = ap.parse_args(argv)
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        recs = load(a.files)
        rows, rq1, fits, overhead = summarize(recs)
        if a.plot:
            if os.path.lexists(a.plot) and not os.path.isdir(a.plot):
                raise BadInput("%s: not a folder" % a.plot)
            os.makedirs(a.plot, exist_ok=True)
            _write(os.path.join(a.plot, "rq1.svg"), svg_rq1(rows, rq1))
            for f in fits:
                if f["slope_j_per_byte"] is not None:
                    _write(os.path.join(a.plot, "rq2-%s.svg" % _slug(f["api"])), svg_rq2(f))
    except BadInput as e:
        sys.stderr.write("erg report: %s\n" % e)
        return 2
    if a.json:
        json.dump({"erg": "calls-report/1", "apis": rows, "rq1": rq1, "rq2": fits,
                   "instrumentation": overhead}, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        text_report(rows, rq1, fits, overhead, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
