# SPDX-License-Identifier: MIT
"""The repetition protocol of `erg measure` for a Python callable (erg_protocol_run,
include/erg/measure.h): optional stability wait (FECoM Section 2.3), warm-up runs, measured runs
each in one window, short work repeated inside a window until it lasts min_window_s (then divided
by the repetitions), cool-down between runs, baseline subtraction, a summary with its single-run
floors, CPU-time attribution, and the signature of the work.

    res = erg.protocol(lambda: model(x), runs=10, warmup=2, min_window_s=0.5)
    print(res.summary.net_energy_j, res.runs[0]["repetitions"], res.signature())
"""
import ctypes
import errno
import math
import resource
from dataclasses import dataclass, field

from . import _lib
from ._core import check, cstr, flag_names, grade_name, new_diag
from ._lib import lib, text
from .meter import _summary_from_c

_BASELINE = {"none": 0, "calibrated": 1, "fixed": 2}
ERG_EINTR = -errno.EINTR


@dataclass
class ProtocolResult:
    """What erg_protocol_run gave: stop_status / stop_detail, the per-run records (status,
    repetitions, time_s and energy_j per repetition, grade, CPU times, begin_failed), the
    summary of the successful runs (erg.Summary, None when none), the work's and erg's CPU time
    (mean, sd), attribution (cpu_share, attributed_energy_j), stability (None when not checked),
    baseline and baseline_power_w, warnings, and the exceptions the callable raised (by run)."""
    stop_status: int
    stop_detail: str
    runs_requested: int
    runs_ok: int
    runs: list
    summary: object
    user_cpu_s: tuple
    system_cpu_s: tuple
    erg_cpu_s: tuple
    attribution: dict
    stability: dict
    baseline: str
    baseline_power_w: float
    warnings: list
    errors: list = field(default_factory=list)
    _sig: object = None

    def signature(self):
        """The work's erg.Signature (erg_protocol_signature), or None without a total."""
        return self._sig


def protocol(fn, meter=None, runs=5, warmup=0, cooldown_s=0.0, min_window_s=0.0,
             max_repetitions=None, stable=False, calibration=None, baseline="none",
             baseline_w=0.0, extra_busy_s=0.0, name=None, stability=None):
    """Run fn() under the protocol on meter (default erg.default_meter()). fn is called once per
    repetition; an exception makes that run fail (status 1; kept in .errors); KeyboardInterrupt
    stops the protocol with the runs done. Raises ErgError for bad options (runs 0, stable without
    a calibration, ...)."""
    from . import default_meter
    m = meter or default_meter()
    o = _lib.ProtocolOptions()
    lib.erg_protocol_options_init(ctypes.byref(o))
    o.runs, o.warmup, o.cooldown_s, o.min_window_s = runs, warmup, cooldown_s, min_window_s
    if max_repetitions is not None:
        o.max_repetitions = max_repetitions
    o.stable = int(bool(stable))
    for k, v in (stability or {}).items():
        setattr(o.stability, k, v)
    o.baseline = _BASELINE[baseline]
    o.baseline_w = baseline_w
    if calibration is not None:
        o.calibration = calibration._ptr
    if stable and calibration is None:
        raise ValueError("stable=True needs a calibration (erg.Meter.calibrate or "
                         "erg.Calibration.read)")
    o.extra_busy_s = extra_busy_s
    errors = []

    def run(ud, out):
        m.sync()
        r0 = resource.getrusage(resource.RUSAGE_THREAD)
        status = 0
        try:
            fn()
        except KeyboardInterrupt:
            return ERG_EINTR
        except BaseException as e:  # the run failed; the protocol reports it
            errors.append(e)
            status = 1
        m.sync()
        r1 = resource.getrusage(resource.RUSAGE_THREAD)
        out.contents.status = status
        out.contents.user_cpu_s = r1.ru_utime - r0.ru_utime
        out.contents.system_cpu_s = r1.ru_stime - r0.ru_stime
        out.contents.flags = 0
        return 0

    cb = _lib.RUN_FN(run)
    o.run = cb
    res = ctypes.POINTER(_lib.ProtocolResult)()
    d = new_diag()
    check(lib.erg_protocol_run(m._h, ctypes.byref(o), ctypes.byref(res), ctypes.byref(d)), d)
    try:
        r = res.contents

        def msd(v):
            return (v.mean, v.sd)
        per = []
        for i in range(r.runs_attempted):
            x = r.per_run[i]
            per.append({"status": x.status, "repetitions": x.repetitions, "time_s": x.time_s,
                        "energy_j": x.energy_j, "grade": grade_name(x.grade) if x.has_total
                        else None, "user_cpu_s": x.user_cpu_s, "system_cpu_s": x.system_cpu_s,
                        "erg_cpu_s": x.erg_cpu_s, "machine_cpu_s": x.machine_cpu_s,
                        "begin_failed": bool(x.begin_failed)})
        summ = _summary_from_c(r.summary.contents) if r.summary else None
        stab = ({"stable": bool(r.stability.stable),
                 "estimator_only": bool(r.stability.estimator_only),
                 "waited_s": r.stability.waited_s,
                 "reason": text(r.stability.reason)} if r.stability_checked else None)
        sig = None
        if r.summary:
            from .calculus import Signature
            s = _lib.Signature()
            m1 = ctypes.c_int()
            if lib.erg_protocol_signature(res, cstr(name or getattr(fn, "__name__", "work")),
                                          ctypes.byref(s), ctypes.byref(m1), None) == 0:
                sig = Signature._from_c(s)
        return ProtocolResult(
            r.stop_status, text(r.stop_detail), r.runs_requested, r.runs_ok, per, summ,
            msd(r.user_cpu_s), msd(r.system_cpu_s), msd(r.erg_cpu_s),
            {"cpu_share": r.attribution.cpu_share,
             "attributed_energy_j": r.attribution.attributed_energy_j,
             "grade": grade_name(r.attribution.grade)},
            stab, text(lib.erg_baseline_source_name(r.baseline)), r.baseline_power_w,
            [text(r.warnings[i]) for i in range(r.n_warnings)], errors, sig)
    finally:
        lib.erg_protocol_result_free(res)
