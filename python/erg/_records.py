# SPDX-License-Identifier: MIT
"""Per-call energy records shared by erg.instrument (patched scripts) and erg.run (runtime mode).

Every measured call is one window: a snapshot before and after it (erg_meter_snapshot_take), and
the window's time, state and flags from the meter (erg_meter_diff of the two snapshots; the time
is the interval the energy covers, on CLOCK_MONOTONIC). Most API calls are far shorter than a meter's update period
(RAPL about 1 ms, the estimator 10 ms, NVML 100 ms): a single such window gets no figure from liberg
(state below_resolution), and none is made up here. Calls are aggregated by (API, call site,
argument shapes, nesting): the energy of the key is the sum over its windows of the energy the
counters accumulated inside them, each window's share read as the difference of two cumulative
readings taken from one reference snapshot (the start of the program), so that no window is asked
for a figure below its resolution. The key gets a figure only when its windows add up to at least one
update period; below that, energy_j is null and state "below_resolution". The quantisation error of
the sum is stated: sd_j = (E/T)·sqrt(T·τ), τ the update period (a counter that moves in steps every τ
seconds, seen by windows of total length T, is off by at most one step per window edge, √(T/τ) of
them adding up as independent errors).

The record of a key: {"api", "site", "calls", "time_s", "energy_j", "net_energy_j", "grade",
"flags", "arg_bytes", "shapes", "nested", "state", "sd_j", "energy_per_call_j",
"aggregation", "channels": {id: {"energy_j", "net_energy_j"}}}; the whole program's:
"api": "<project>"; the instrumentation's own time: "api": "<instrumentation>".
"""
import atexit
import ctypes
import json
import math
import sys
import threading
import time

from . import _lib, _out
from ._core import flag_names, grade_name, state_name
from ._lib import lib

_FLAG_BELOW = 1 << 4


def _nbytes(x, depth=0):
    nb = getattr(x, "nbytes", None)
    if isinstance(nb, int):
        return nb
    el = getattr(x, "element_size", None)
    if el is not None and hasattr(x, "numel"):
        try:
            return int(x.numel()) * int(x.element_size())
        except Exception:
            return 0
    if isinstance(x, (bytes, bytearray)):
        return len(x)
    if depth < 2 and isinstance(x, (list, tuple)):
        return sum(_nbytes(v, depth + 1) for v in x)
    if depth < 2 and isinstance(x, dict):
        return sum(_nbytes(v, depth + 1) for v in x.values())
    return 0


def _shape(x, depth=0):
    s = getattr(x, "shape", None)
    if s is not None and hasattr(x, "dtype"):
        try:
            return "%s%s" % (str(x.dtype).replace("torch.", ""), list(s))
        except Exception:
            return "?"
    if depth < 1 and isinstance(x, (list, tuple)) and x and any(hasattr(v, "shape") for v in x):
        return "[" + ",".join(_shape(v, depth + 1) for v in x) + "]"
    return None


def describe_args(args, kwargs, receiver=None):
    """(arg_bytes, shapes) of a call: bytes of the tensors and arrays among the arguments (and
    the receiver of a method), and their dtypes and shapes as text."""
    vals = list(args) + list((kwargs or {}).values())
    if receiver is not None:
        vals.insert(0, receiver)
    nb = 0
    shapes = []
    for v in vals:
        nb += _nbytes(v)
        s = _shape(v)
        if s is not None:
            shapes.append(s)
    return nb, ";".join(shapes)


class _Key:
    __slots__ = ("api", "site", "shapes", "nested", "calls", "time_s", "arg_bytes", "inc",
                 "inc_ok", "total", "total_ok", "states", "flags", "grade")

    def __init__(self, api, site, shapes, nested, arg_bytes, n):
        self.api, self.site, self.shapes, self.nested = api, site, shapes, nested
        self.calls = 0
        self.time_s = 0.0
        self.arg_bytes = arg_bytes
        self.inc = [0.0] * n
        self.inc_ok = [True] * n
        self.total = 0.0
        self.total_ok = True
        self.states = set()
        self.flags = 0
        self.grade = 0


class Recorder:
    """Measures calls and writes their records (JSON lines) at exit.

    out: the records file (appended to); meter: an erg.Meter (default: a new one with its sampler
    running, so that the reference snapshot never gets ambiguous); calibration: an
    erg.Calibration for baseline subtraction (net = gross − idle power × time), else none;
    project: the name of the program (site of the "<project>" record)."""

    def __init__(self, out, meter=None, calibration=None, project="", extra=None):
        from .meter import Meter
        self.out = out
        self.meter = meter or Meter(sampler=True)
        self.cal = calibration
        self.project = project
        self.extra = dict(extra or {})
        chans = self.meter.channels
        self.period_s = self.meter.update_period_s
        self.n = len(chans)
        self.ids = [c["id"] for c in chans]
        self.idle_w = [calibration.idle_w(i) if calibration else 0.0 for i in self.ids]
        self.idle_w = [0.0 if (w is None or math.isnan(w)) else w for w in self.idle_w]
        self.keys = {}
        self.local = threading.local()
        self.lock = threading.Lock()
        self.overhead_s = 0.0       # outside every call window (outermost calls' wrappers)
        self.overhead_all_s = 0.0   # every call's wrapper, nested ones too
        self.wrapped = 0
        self.written = False
        self.written_ok = False
        m = self.meter
        self._ref = m.snapshot()
        self._t_ref = time.perf_counter()
        # every cumulative window (reference to a call's edge) must span at least one update
        # period, or liberg gives it no figure: wait one period (at most 1 s) before any call
        time.sleep(min(self.period_s, 1.0) * 1.05)
        # scratch measurements: their readings are sized by the first erg_meter_diff and reused
        # (no allocation per call); released with the recorder
        self._m = _lib.Measurement()
        self._mab = _lib.Measurement()

    def __del__(self):
        for m in (getattr(self, "_m", None), getattr(self, "_mab", None)):
            if m is not None and m.channels:
                lib.erg_measurement_release(ctypes.byref(m))

    # -- per thread scratch snapshots
    def _snaps(self):
        s = getattr(self.local, "snaps", None)
        if s is None:
            s = self.local.snaps = []
        return s

    def _cumulative(self, snap, out):
        lib.erg_meter_diff(self.meter._h, self._ref._h, snap._h, 0.0, out)
        return [out.channels[j].energy_j if out.channels[j].state == 0 else math.nan
                for j in range(out.n_channels)], (out.total_energy_j, out.total_grade)

    def call(self, api, site, fn, args, kwargs, receiver=None):
        """Call fn(*args, **kwargs) inside a window and account it to (api, site, shapes)."""
        tok = self.begin(api, site, args, kwargs, receiver)
        try:
            return fn(*args, **kwargs)
        finally:
            self.end(tok)

    def begin(self, api, site, args=(), kwargs=None, receiver=None):
        """Open a call window; returns the token end() takes (for hooks that split a call)."""
        t_in = time.perf_counter()
        depth = getattr(self.local, "depth", 0)
        nb, shapes = describe_args(args, kwargs, receiver)
        snaps = self._snaps()
        while len(snaps) < 2 * (depth + 1):
            snaps.append(self.meter.snapshot())
        a = snaps[2 * depth]
        self.local.depth = depth + 1
        # the window's time runs from inside a.take() to inside b.take(): the snapshots are the
        # window's, not the instrumentation's own time (counted once, never twice)
        self._overhead(time.perf_counter() - t_in, depth)
        a.take()
        t0 = time.perf_counter()
        return (api, site, shapes, nb, depth, t0)

    def end(self, tok):
        """Close the call window tok (from begin) and account it."""
        t1 = time.perf_counter()
        api, site, shapes, nb, depth, t0 = tok
        snaps = self._snaps()
        a, b = snaps[2 * depth], snaps[2 * depth + 1]
        b.take()
        t2 = time.perf_counter()
        self.local.depth = depth
        self._account(api, site, shapes, depth > 0, nb, a, b, t1 - t0)
        self.wrapped += 1
        self._overhead(time.perf_counter() - t2, depth)

    def _overhead(self, dt, depth):
        # a nested call's wrapper runs inside its parent's window, whose time includes it
        self.overhead_all_s += dt
        if depth == 0:
            self.overhead_s += dt

    def _account(self, api, site, shapes, nested, nb, a, b, dt):
        m, mab = self._m, self._mab
        with self.lock:
            ca, (ta, _) = self._cumulative(a, m)
            cb, (tb, grade) = self._cumulative(b, m)
            lib.erg_meter_diff(self.meter._h, a._h, b._h, 0.0, mab)
            dt = mab.time_s     # the window's own time: the interval its energy covers
            key = (api, site, shapes, nested)
            k = self.keys.get(key)
            if k is None:
                k = self.keys[key] = _Key(api, site, shapes, nested, nb, self.n)
            k.calls += 1
            k.time_s += dt
            for j in range(min(self.n, len(ca))):
                d = cb[j] - ca[j]
                if math.isnan(d):
                    k.inc_ok[j] = False
                else:
                    k.inc[j] += d
            d = tb - ta
            if math.isnan(d):
                k.total_ok = False
            else:
                k.total += d
            k.grade = max(k.grade, grade)
            fl = mab.total_flags
            for j in range(mab.n_channels):
                ch = mab.channels[j]
                if ch.in_total:
                    fl |= ch.flags
                    k.states.add(ch.state)
            k.flags |= fl & ~_FLAG_BELOW

    # -- records
    def _record(self, api, site, calls, time_s, inc, inc_ok, total, total_ok, grade, flags,
                states, nb, shapes="", nested=False, project=False):
        ok = total_ok and time_s >= self.period_s and math.isfinite(total)
        baseline = sum(w for w, cid in zip(self.idle_w, self.ids)
                       if cid in self._total_ids) * time_s
        rec = {"api": api, "site": site, "calls": calls, "time_s": time_s,
               "energy_j": total if ok else None,
               "net_energy_j": (total - baseline) if ok else None,
               "grade": grade_name(grade), "flags": flag_names(flags), "arg_bytes": nb}
        if not project:
            rec["shapes"] = shapes
            rec["nested"] = nested
        st = sorted(states - {0, 3})
        rec["state"] = ("ok" if ok else
                        state_name(st[0]) if st else
                        "below_resolution" if time_s < self.period_s else "no_data")
        if ok and time_s > 0:
            rec["sd_j"] = abs(total) / time_s * math.sqrt(time_s * self.period_s)
            rec["energy_per_call_j"] = total / calls
        else:
            rec["sd_j"] = None
            rec["energy_per_call_j"] = None
        rec["aggregation"] = ("one window" if calls == 1 else
                              "sum of %d call windows (%.3g s in all; meter update period %.3g s)"
                              % (calls, time_s, self.period_s))
        rec["baseline_w"] = baseline / time_s if time_s > 0 else 0.0
        # the meters are machine-wide: every process on the host and its idle draw are in
        # energy_j; net_energy_j subtracts the calibrated idle power only when one was given
        rec["scope"] = "machine"
        rec["baseline"] = "calibrated" if self.cal else "none"
        ch = {}
        for j, cid in enumerate(self.ids):
            good = inc_ok[j] and time_s >= self.period_s and math.isfinite(inc[j])
            ch[cid] = {"energy_j": inc[j] if good else None,
                       "net_energy_j": inc[j] - self.idle_w[j] * time_s if good else None}
        rec["channels"] = ch
        rec.update(self.extra)
        return rec

    def records(self):
        """Every record so far: the keys, "<project>" (reference snapshot to now) and
        "<instrumentation>" (the wrapper's own time)."""
        now = self.meter.snapshot()
        m = _lib.Measurement()
        try:
            lib.erg_meter_diff(self.meter._h, self._ref._h, now._h, 0.0, m)
            return self._records_from(m)
        finally:
            lib.erg_measurement_release(ctypes.byref(m))

    def _records_from(self, m):
        t = m.time_s
        self._total_ids = {_lib.text(m.channels[j].id) for j in range(m.n_channels)
                           if m.channels[j].in_total}
        out = []
        with self.lock:
            for k in self.keys.values():
                out.append(self._record(k.api, k.site, k.calls, k.time_s, k.inc, k.inc_ok,
                                        k.total, k.total_ok, k.grade, k.flags, k.states,
                                        k.arg_bytes, k.shapes, k.nested))
        inc = [m.channels[j].energy_j for j in range(m.n_channels)]
        ok = [m.channels[j].state == 0 for j in range(m.n_channels)]
        fl = m.total_flags
        states = set()
        for j in range(m.n_channels):
            if m.channels[j].in_total:
                fl |= m.channels[j].flags
                states.add(m.channels[j].state)
        out.append(self._record("<project>", self.project, 1, t, inc, ok, m.total_energy_j,
                                True, m.total_grade, fl, states, 0, project=True))
        out.append({"api": "<instrumentation>", "site": self.project, "calls": self.wrapped,
                    "time_s": self.overhead_s, "energy_j": None, "net_energy_j": None,
                    "grade": grade_name(m.total_grade), "flags": [], "arg_bytes": 0,
                    "state": "time_only", "scope": "machine",
                    "baseline": "calibrated" if self.cal else "none",
                    "overhead_per_call_s": (self.overhead_all_s / self.wrapped
                                            if self.wrapped else 0.0),
                    "aggregation": "time spent in the instrumentation around the outermost of "
                                   "%d calls (included in <project>, outside every call window; "
                                   "the wrappers of nested calls are inside their parent's window)"
                                   % self.wrapped, **self.extra})
        return out

    def write(self):
        """Append the records to self.out once (JSON lines); called at exit. False (and one line
        on stderr) when they could not be written."""
        if self.written:
            return self.written_ok
        self.written = True
        recs = self.records()
        text = "".join(json.dumps(r, allow_nan=False) + "\n" for r in recs)
        self.written_ok = append_records(self.out, text)
        return self.written_ok


def append_records(path, text):
    """Append text to path under erg's output rule (erg._out: a regular file, created when
    missing; a symlink's target, never the link; a FIFO or character device written into);
    False, with one line on stderr, when that cannot be done."""
    try:
        _out.append(path, text)
        return True
    except _out.OutputError as e:
        sys.stderr.write("erg: %s; records not written\n" % e)
    except OSError as e:
        sys.stderr.write("erg: %s: records not written: %s\n" % (path, e.strerror))
    return False


def install(out, **kw):
    """A Recorder whose records are written at interpreter exit (also after an uncaught
    exception: atexit runs after the traceback is printed)."""
    r = Recorder(out, **kw)
    atexit.register(r.write)
    return r

