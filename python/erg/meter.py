# SPDX-License-Identifier: MIT
"""Meters and windows: thin calls over erg/meter.h and erg/measure.h.

A Meter opens every backend liberg knows (RAPL sysfs/MSR, NVML, hwmon, the estimator) under
$ERG_ROOT. Windows begin and end by name, nest and overlap (as Zeus's begin_window/end_window do),
and each end returns a Measurement: per-channel energy, grade, state, reason and flags, the total
(never a domain twice) and the time, exactly as erg_window_end fills erg_measurement. A channel
whose window was shorter than its update period has state "below_resolution" and energy NaN: no
figure is made up.
"""
import ctypes
import functools
import math
import sys
import threading
from dataclasses import dataclass, field

from . import _lib
from ._core import check, cstr, domain_name, flag_names, grade_name, new_diag, state_name
from ._lib import lib, text

KINDS = ("counter", "power", "estimate")


@dataclass
class ChannelEnergy:
    """One channel's figure over a window (erg_channel_reading). energy_j is NaN unless state is
    "ok"; flags are names ("wrap_corrected", "below_resolution", ...); in_total: summed into
    the measurement's total."""
    id: str
    domain: str
    device: str
    grade: str
    state: str
    reason: str
    flags: list
    energy_j: float
    in_total: bool


@dataclass
class Measurement:
    """A window's measurement (erg_measurement): time_s (monotonic), cpu_s (CPU time of this
    process and reaped children), channels, total_energy_j (NaN when nothing could be summed),
    total_grade (weakest summed grade), n_total (channels summed). name: the window's name."""
    name: str
    time_s: float
    cpu_s: float
    channels: list
    total_energy_j: float
    total_grade: str
    n_total: int
    total_flags: list = field(default_factory=list)
    total_reason: str = ""

    @property
    def flags(self):
        """Union of the flags of the channels summed into the total and of the total's own
        (ERG_FLAG_INCOMPLETE: a channel the total covers has no figure), names in bit order."""
        bits = getattr(self, "_total_bits", 0)
        for c in self._raw_flags():
            bits |= c
        return flag_names(bits)

    def _raw_flags(self):
        return [getattr(c, "_bits", 0) for c in self.channels if c.in_total]

    @property
    def state(self):
        """"ok" when every summed channel is ok, else the first summed channel's other state;
        "no_data" when nothing was summed."""
        summed = [c for c in self.channels if c.in_total]
        if not summed:
            bad = [c.state for c in self.channels if c.state != "declined"]
            return bad[0] if bad else "no_data"
        for c in summed:
            if c.state != "ok":
                return c.state
        return "ok"

    def to_dict(self):
        def num(v):
            return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v
        return {"name": self.name, "time_s": self.time_s, "cpu_s": self.cpu_s,
                "energy_j": num(self.total_energy_j), "grade": self.total_grade,
                "state": self.state, "flags": self.flags, "n_total": self.n_total,
                "total_reason": self.total_reason,
                "channels": [{"id": c.id, "domain": c.domain, "device": c.device,
                              "grade": c.grade, "state": c.state, "reason": c.reason,
                              "flags": c.flags, "energy_j": num(c.energy_j),
                              "in_total": c.in_total} for c in self.channels]}


def _measurement(name, m):
    chans = []
    for i in range(m.n_channels):
        r = m.channels[i]
        c = ChannelEnergy(text(r.id), domain_name(r.domain), text(r.device), grade_name(r.grade),
                          state_name(r.state), text(r.reason), flag_names(r.flags), r.energy_j,
                          bool(r.in_total))
        c._bits = r.flags
        chans.append(c)
    out = Measurement(name, m.time_s, m.cpu_s, chans, m.total_energy_j,
                      grade_name(m.total_grade), m.n_total, flag_names(m.total_flags),
                      text(m.total_reason))
    out._total_bits = m.total_flags
    return out


def _auto_sync():
    """torch.cuda.synchronize when torch is imported (never imported here) and has a GPU."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_available():
            return torch.cuda.synchronize
    except Exception:
        return None
    return None


class Window:
    """A named window on a meter: a context manager (`with meter.window("fit") as w:` then
    w.result) and a decorator (each call of the function is one window; the measurements are
    appended to the wrapper's .measurements list). GPU work queued before begin and inside the
    window is finished before each end (the meter's sync hook)."""

    def __init__(self, meter, name, extra_busy_s=0.0):
        self.meter = meter
        self.name = name
        self.extra_busy_s = extra_busy_s
        self.result = None

    def begin(self):
        self.meter.begin_window(self.name)
        return self

    def end(self):
        self.result = self.meter.end_window(self.name, self.extra_busy_s)
        return self.result

    def __enter__(self):
        return self.begin()

    def __exit__(self, et, ev, tb):
        try:
            self.end()
        except Exception:
            if et is None:
                raise
        return False

    def __call__(self, fn):
        meter, name = self.meter, self.name
        depth = threading.local()

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            d = getattr(depth, "n", 0)
            wname = name if d == 0 else "%s#%d" % (name, d + 1)
            depth.n = d + 1
            meter.begin_window(wname)
            try:
                return fn(*a, **kw)
            finally:
                depth.n = d
                m = meter.end_window(wname, self.extra_busy_s)
                m.name = name
                wrapper.measurements.append(m)
        wrapper.measurements = []
        return wrapper


class Meter:
    """An open meter (erg_meter_open) with named windows (erg_monitor, one per thread).

    root: prefix of /sys, /proc, /dev (default $ERG_ROOT, else "/"); backends: "rapl-sysfs,nvml"
    (default $ERG_BACKENDS, else all); nvml_path; estimator_idle_w / estimator_full_w (W);
    sampler: start the sampler thread (None: when a power-only channel needs it);
    sampler_period_s; sync: a callable run before every window begin and end to finish queued
    device work, "auto" (torch.cuda.synchronize when torch is imported and a GPU is present) or
    None. Raises ErgError (ENODEV when no backend gave a channel; EINVAL for a bad option)."""

    def __init__(self, root=None, backends=None, nvml_path=None, estimator_idle_w=None,
                 estimator_full_w=None, sampler=None, sampler_period_s=None, sync="auto"):
        o = _lib.MeterOptions()
        lib.erg_meter_options_init(ctypes.byref(o))
        self._keep = [cstr(root), cstr(backends), cstr(nvml_path)]
        o.root, o.backends, o.nvml_path = self._keep
        if estimator_idle_w is not None:
            o.estimator_idle_w = estimator_idle_w
        if estimator_full_w is not None:
            o.estimator_full_w = estimator_full_w
        if sampler_period_s is not None:
            o.sampler_period_s = sampler_period_s
        h = ctypes.c_void_p()
        d = new_diag()
        check(lib.erg_meter_open(ctypes.byref(o), ctypes.byref(h), ctypes.byref(d)), d)
        self._h = h.value
        self._local = threading.local()
        self._monitors = []
        self._lock = threading.Lock()
        self._sync_opt = sync
        self._sync = None
        if sampler is None:
            sampler = any(c["kind"] == "power" and c["usable"] for c in self.channels)
        if sampler:
            check(lib.erg_meter_sampler_start(self._h, 0.0))

    # -- lifetime
    def close(self):
        """Stop the sampler, close the monitors and the meter. Idempotent."""
        h, self._h = getattr(self, "_h", None), None
        if h:
            for mon in self._monitors:
                lib.erg_monitor_close(mon)
            self._monitors = []
            lib.erg_meter_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # -- description
    @property
    def channels(self):
        """Every channel (erg_channel_info) as a dict: id, backend, domain, device, label,
        grade, kind, resolution_j, wrap_j, min_interval_s, max_power_w, parent, usable, live,
        deduplicated, reason."""
        out = []
        ci = _lib.ChannelInfo()
        for i in range(lib.erg_meter_channel_count(self._h)):
            check(lib.erg_meter_channel_info(self._h, i, ctypes.byref(ci)))
            out.append({"id": text(ci.id), "backend": text(ci.backend),
                        "domain": domain_name(ci.domain), "device": text(ci.device),
                        "label": text(ci.label), "grade": grade_name(ci.grade),
                        "kind": KINDS[ci.kind], "resolution_j": ci.resolution_j,
                        "wrap_j": ci.wrap_j, "min_interval_s": ci.min_interval_s,
                        "max_power_w": ci.max_power_w, "parent": ci.parent,
                        "usable": bool(ci.usable), "live": ci.live,
                        "deduplicated": bool(ci.deduplicated), "reason": text(ci.reason)})
        return out

    @property
    def backends(self):
        """Every backend tried: name, state ("found", "absent", ...), reason, n_channels."""
        out = []
        bi = _lib.BackendInfo()
        for i in range(lib.erg_meter_backend_count(self._h)):
            check(lib.erg_meter_backend_info(self._h, i, ctypes.byref(bi)))
            out.append({"name": text(bi.name),
                        "state": text(lib.erg_backend_state_name(bi.state)),
                        "reason": text(bi.reason), "n_channels": bi.n_channels})
        return out

    @property
    def update_period_s(self):
        """The longest update period (min_interval_s) of the usable channels that are not
        deduplicated: a window shorter than this gets no figure from some channel."""
        ps = [c["min_interval_s"] for c in self.channels
              if c["usable"] and not c["deduplicated"]]
        return max(ps) if ps else 0.0

    def poll(self):
        """Read every channel now (erg_meter_poll), as the sampler does each period."""
        check(lib.erg_meter_poll(self._h))

    def probe_liveness(self, busy_s=0.05):
        """Judge CPU-side counters live or frozen under load (erg_meter_probe_liveness)."""
        d = new_diag()
        check(lib.erg_meter_probe_liveness(self._h, busy_s, ctypes.byref(d)), d)

    # -- windows
    def _monitor(self):
        mon = getattr(self._local, "mon", None)
        if mon is None:
            h = ctypes.c_void_p()
            d = new_diag()
            check(lib.erg_monitor_open(self._h, ctypes.byref(h), ctypes.byref(d)), d)
            mon = self._local.mon = h.value
            with self._lock:
                self._monitors.append(mon)
        return mon

    def sync(self):
        """Finish queued device work (the sync hook); a no-op without one."""
        s = self._sync_opt
        if s == "auto":
            if self._sync is None:
                self._sync = _auto_sync() or False
            s = self._sync
        if s:
            s()

    def begin_window(self, name):
        """Begin the window called name (1..63 bytes; erg_window_begin). ErgError (EINVAL) for
        a bad name, one already open, or more than 64 open windows."""
        self.sync()
        d = new_diag()
        check(lib.erg_window_begin(self._monitor(), cstr(name), ctypes.byref(d)), d)

    def end_window(self, name, extra_busy_s=0.0):
        """End the window called name and return its Measurement (erg_window_end).
        extra_busy_s: busy time the caller knows of outside this process (GPU time, s)."""
        self.sync()
        m = _lib.Measurement()
        d = new_diag()
        check(lib.erg_window_end(self._monitor(), cstr(name), extra_busy_s, ctypes.byref(m),
                                 ctypes.byref(d)), d)
        return _measurement(name, m)

    def cancel_window(self, name):
        """Drop the window called name without a measurement."""
        check(lib.erg_window_cancel(self._monitor(), cstr(name)))

    def window(self, name, extra_busy_s=0.0):
        """A Window (context manager and decorator) called name."""
        return Window(self, name, extra_busy_s)

    # -- snapshots (windows without names or limits, for instrumentation)
    def snapshot(self):
        """Poll and record the accumulated state (erg_meter_snapshot_take)."""
        return Snapshot(self)

    def diff(self, a, b, extra_busy_s=0.0, name=""):
        """The Measurement between snapshots a (earlier) and b (erg_meter_diff)."""
        m = _lib.Measurement()
        check(lib.erg_meter_diff(self._h, a._h, b._h, extra_busy_s, ctypes.byref(m)))
        return _measurement(name, m)

    # -- the protocol pieces
    def calibrate(self, duration_s=10.0, window_s=0.1):
        """Idle power and CV per channel at rest (erg_calibrate; FECoM Section 2.3)."""
        ptr = ctypes.POINTER(_lib.Calibration)()
        d = new_diag()
        check(lib.erg_calibrate(self._h, duration_s, window_s, ctypes.byref(ptr),
                                ctypes.byref(d)), d)
        return Calibration(ptr)

    def wait_stable(self, calibration, cpu_max_c=None, gpu_max_c=None, timeout_s=None,
                    sample_s=None, n_samples=None):
        """Wait until temperatures and power CV are stable (erg_wait_stable; FECoM 2.3).
        Returns (stable: bool, waited_s, reason)."""
        o = _lib.StabilityOptions()
        lib.erg_stability_options_init(ctypes.byref(o))
        for k, v in (("cpu_max_c", cpu_max_c), ("gpu_max_c", gpu_max_c),
                     ("timeout_s", timeout_s), ("sample_s", sample_s),
                     ("n_samples", n_samples)):
            if v is not None:
                setattr(o, k, v)
        r = _lib.StabilityResult()
        d = new_diag()
        check(lib.erg_wait_stable(self._h, calibration._ptr, ctypes.byref(o),
                                  ctypes.byref(r), ctypes.byref(d)), d)
        return bool(r.stable), r.waited_s, text(r.reason)


class Snapshot:
    """A snapshot of a meter's accumulated state (erg_meter_snapshot_new/take)."""

    def __init__(self, meter):
        self._meter = meter
        self._h = lib.erg_meter_snapshot_new(meter._h)
        if not self._h:
            raise MemoryError("erg_meter_snapshot_new")
        check(lib.erg_meter_snapshot_take(meter._h, self._h))

    def take(self):
        check(lib.erg_meter_snapshot_take(self._meter._h, self._h))
        return self

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            lib.erg_meter_snapshot_free(h)


class Calibration:
    """A calibration (erg_calibration; FECoM's stable state): idle_power_w of the summed
    channels, duration_s, window_s, flags (names: "busy", "pinned_at_ceiling", "high_cv") and
    channels (id, idle_power_w, cv, samples, utilisation, flags). Owns its C calibration."""

    def __init__(self, _ptr):
        self._ptr = _ptr

    def __del__(self):
        p, self._ptr = getattr(self, "_ptr", None), None
        if p:
            lib.erg_calibration_free(p)

    @property
    def _c(self):
        return self._ptr.contents

    @classmethod
    def read(cls, path):
        """Read a calibration/1 file; ErgError (ENOENT, EPARSE with the JSON path, EVERSION)."""
        ptr = ctypes.POINTER(_lib.Calibration)()
        d = new_diag()
        check(lib.erg_calibration_read_file(cstr(str(path)), ctypes.byref(ptr),
                                            ctypes.byref(d)), d)
        return cls(ptr)

    @classmethod
    def default_path(cls):
        """$XDG_CACHE_HOME/erg/calibration.json or $HOME/.cache/...; None when neither is set."""
        return _lib.default_path(lib.erg_calibration_default_path)

    def write(self, path):
        d = new_diag()
        check(lib.erg_calibration_write_file(cstr(str(path)), self._ptr, ctypes.byref(d)), d)

    def idle_w(self, channel_id):
        return lib.erg_calibration_idle_w(self._ptr, cstr(channel_id))

    @property
    def idle_power_w(self):
        return self._c.idle_power_w

    @property
    def flags(self):
        return [text(lib.erg_calibration_flag_name(b)) for b in range(3)
                if self._c.flags & (1 << b)]

    @property
    def channels(self):
        out = []
        for i in range(self._c.n_channels):
            ch = self._c.channels[i]
            out.append({"id": text(ch.id), "domain": domain_name(ch.domain),
                        "device": text(ch.device), "idle_power_w": ch.idle_power_w,
                        "cv": ch.cv, "samples": ch.samples, "utilisation": ch.utilisation,
                        "flags": ch.flags})
        return out


_BASELINE = {"none": 0, "calibrated": 1, "fixed": 2}


@dataclass
class Summary:
    """Summary of repeated runs (erg_summarize): runs, time_s / energy_j / baseline_j /
    net_energy_j as (mean, sd), flags and grade of the total, static_power_w, channels (per
    channel the same figures), total_ids (the channels summed), the single-run floors
    energy_floor_j and time_floor_s (0 unknown), and total_reason ("" when there is a total)."""
    runs: int
    time_s: tuple
    energy_j: tuple
    baseline_j: tuple
    net_energy_j: tuple
    flags: list
    grade: str
    static_power_w: float
    channels: list = field(default_factory=list)
    total_ids: list = field(default_factory=list)
    energy_floor_j: float = 0.0
    time_floor_s: float = 0.0
    total_reason: str = ""


def summarize(measurements, baseline="none", calibration=None, fixed_w=0.0):
    """Summarise measurements of one meter (erg_summarize): baseline "none", "calibrated"
    (per-channel idle power × time, calibration required) or "fixed" (fixed_w × time)."""
    ms = list(measurements)
    if not ms:
        raise ValueError("summarize needs at least one measurement")
    arr = (_lib.Measurement * len(ms))()
    for i, m in enumerate(ms):
        arr[i] = _to_c(m)
    ptr = ctypes.POINTER(_lib.Summary)()
    d = new_diag()
    cal = calibration._ptr if calibration is not None else None
    check(lib.erg_summarize(arr, len(ms), _BASELINE[baseline], cal, fixed_w, ctypes.byref(ptr),
                            ctypes.byref(d)), d)
    try:
        return _summary_from_c(ptr.contents)
    finally:
        lib.erg_summary_free(ptr)


def _summary_from_c(s):
    def ms_(v):
        return (v.mean, v.sd)
    chans = []
    for i in range(s.n_channels):
        c = s.channels[i]
        chans.append({"id": text(c.id), "domain": domain_name(c.domain),
                      "device": text(c.device), "grade": grade_name(c.grade),
                      "state": state_name(c.state), "reason": text(c.reason),
                      "flags": flag_names(c.flags), "energy_j": ms_(c.energy_j),
                      "baseline_j": ms_(c.baseline_j), "net_energy_j": ms_(c.net_energy_j),
                      "in_total": bool(c.in_total)})
    return Summary(s.runs, ms_(s.time_s), ms_(s.total_energy_j), ms_(s.total_baseline_j),
                   ms_(s.total_net_energy_j), flag_names(s.total_flags),
                   grade_name(s.total_grade), s.static_power_w, chans,
                   [c["id"] for c in chans if c["in_total"]], s.energy_floor_j, s.time_floor_s,
                   text(s.total_reason))


_DOMAINS = ("package", "core", "uncore", "dram", "psys", "gpu", "system")
_STATES = ("ok", "declined", "not_live", "below_resolution", "ambiguous", "unit_suspect",
           "error", "no_data")


def _to_c(m):
    """A Measurement back into its C struct (for erg_summarize)."""
    c = _lib.Measurement()
    c.time_s, c.cpu_s = m.time_s, m.cpu_s
    c.n_channels = len(m.channels)
    for i, ch in enumerate(m.channels):
        r = c.channels[i]
        r.id, r.device, r.reason = ch.id.encode(), ch.device.encode(), ch.reason.encode()[:255]
        r.domain = _DOMAINS.index(ch.domain)
        r.grade = ("hw_shunt", "model_based", "estimator").index(ch.grade)
        r.state = _STATES.index(ch.state)
        r.flags = getattr(ch, "_bits", 0)
        r.energy_j = ch.energy_j
        r.in_total = int(ch.in_total)
    c.total_energy_j = m.total_energy_j
    c.total_grade = ("hw_shunt", "model_based", "estimator").index(m.total_grade)
    c.n_total = m.n_total
    c.total_flags = getattr(m, "_total_bits", 0)
    c.total_reason = m.total_reason.encode()[:255]
    return c
