# SPDX-License-Identifier: MIT
"""erg: energy as a first-class resource, from Python.

A thin layer over liberg (ctypes; no compiled extension). liberg is found through $ERG_LIBRARY,
else beside the package (or in the repository's build folders for a source checkout), else the
system's: see erg._lib.

    import erg
    meter = erg.Meter()
    with meter.window("fit") as w:
        train()
    print(w.result.total_energy_j, w.result.total_grade, w.result.flags)

    @erg.measure("step")
    def step(): ...

Modules: erg.meter (meters, windows, calibration, summaries), erg.protocol (erg measure's
repetition protocol for a callable), erg.calculus (signatures,
operators, schedules), erg.frontier (Pareto sets, operating schedules), erg.predict (HYMELL
level 1), erg.instrument (static instrumentation of PyTorch scripts), erg.run (runtime
attribution), erg.report (per-API reports, FECoM RQ1/RQ2).
"""
import importlib
import threading

# What each name comes from: imported on first use (PEP 562), so that `python3 -m erg.instrument`
# and `erg report`, which need no liberg, never load it.
_FROM = {
    "ErgError": "_core", "version": "_core",
    "ComposeReport": "calculus", "Schedule": "calculus", "Signature": "calculus",
    "idle": "calculus", "multi": "calculus", "par": "calculus", "read_signature": "calculus",
    "seq": "calculus", "write_signature": "calculus",
    "FrontierResult": "frontier", "OperatingSchedule": "frontier", "pareto_min": "frontier",
    "Calibration": "meter", "ChannelEnergy": "meter", "Measurement": "meter", "Meter": "meter",
    "Snapshot": "meter", "Summary": "meter", "Window": "meter", "summarize": "meter",
    "OpModel": "predict", "OpPrediction": "predict",
    "protocol": "protocol", "ProtocolResult": "protocol",
}


def __getattr__(name):
    mod = _FROM.get(name)
    if mod is None:
        raise AttributeError("module 'erg' has no attribute %r" % name)
    value = getattr(importlib.import_module("." + mod, __name__), name)
    globals()[name] = value
    return value


__all__ = ["ErgError", "version", "Meter", "Window", "Measurement", "ChannelEnergy", "Snapshot",
           "Calibration", "Summary", "summarize", "measure", "default_meter", "Signature",
           "idle", "seq", "par", "multi", "read_signature", "write_signature", "Schedule",
           "ComposeReport", "pareto_min", "OperatingSchedule", "FrontierResult", "OpModel",
           "OpPrediction", "protocol", "ProtocolResult"]

_default = None
_default_lock = threading.Lock()


def default_meter():
    """The process's shared Meter, opened on first use with the defaults ($ERG_ROOT,
    $ERG_BACKENDS)."""
    global _default
    with _default_lock:
        if _default is None:
            from .meter import Meter
            _default = Meter()
        return _default


def measure(name=None, meter=None, extra_busy_s=0.0):
    """Decorator: each call of the function is one window called name (default: the
    function's qualified name) on meter (default: default_meter()); the Measurements are
    appended to the wrapper's .measurements list.

        @erg.measure("train_step")
        def train_step(batch): ...
    """
    def deco(fn):
        wname = name or getattr(fn, "__qualname__", "function")[:63]
        state = {}

        def get():
            if "w" not in state:
                from .meter import Window
                state["w"] = Window(meter or default_meter(), wname, extra_busy_s)(fn)
            return state["w"]

        import functools

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            w = get()
            try:
                return w(*a, **kw)
            finally:
                wrapper.measurements = w.measurements
        wrapper.measurements = []
        return wrapper
    if callable(name):
        fn, name = name, None
        return deco(fn)
    return deco
