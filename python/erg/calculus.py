# SPDX-License-Identifier: MIT
"""Signatures, the three operators and schedules: thin calls over erg/signature.h and
erg/calculus.h (Energy Calculus, arXiv 2607.11087, Sections 3.2-3.3, 4.3, 5.2)."""
import ctypes
import math
from dataclasses import dataclass, field, fields

from . import _lib
from ._core import check, cstr, flag_names, flag_value, grade_name, grade_value, new_diag
from ._lib import lib, text


@dataclass
class Signature:
    """An energy signature (paper Section 4.3): s static power (W), T time (s), d dynamic energy
    (J), σ²_T (s²), σ²_E (J²); E = s·T + d is derived (energy_j). grade: "hw_shunt",
    "model_based" or "estimator"; theta/omega: compact JSON object text or ""; flags: the names
    of the measurement flags behind the figures (erg/flags.h; a composite's are its parts')."""
    static_power_w: float = 0.0
    time_s: float = 0.0
    dynamic_energy_j: float = 0.0
    time_var_s2: float = 0.0
    energy_var_j2: float = 0.0
    grade: str = "hw_shunt"
    runs: int = 0
    name: str = ""
    device: str = ""
    kappa: str = ""
    theta: str = ""
    omega: str = ""
    flags: list = field(default_factory=list)

    @property
    def energy_j(self):
        """E = s·T + d, J (Axiom P1)."""
        return lib.erg_signature_energy_j(ctypes.byref(self._c()))

    def _c(self):
        c = _lib.Signature()
        lib.erg_signature_init(ctypes.byref(c))
        for f in ("static_power_w", "time_s", "dynamic_energy_j", "time_var_s2",
                  "energy_var_j2"):
            setattr(c, f, float(getattr(self, f)))
        c.grade = grade_value(self.grade)
        c.runs = int(self.runs)
        c.flags = flag_value(self.flags)
        for f, size in (("name", _lib.SIG_NAME_MAX), ("device", _lib.SIG_DEVICE_MAX),
                        ("kappa", _lib.SIG_DEVICE_MAX), ("theta", _lib.SIG_META_MAX),
                        ("omega", _lib.SIG_META_MAX)):
            b = getattr(self, f).encode()
            if len(b) >= size:
                raise ValueError("signature %s is %d bytes; at most %d" % (f, len(b), size - 1))
            setattr(c, f, b)
        return c

    @classmethod
    def _from_c(cls, c):
        return cls(c.static_power_w, c.time_s, c.dynamic_energy_j, c.time_var_s2,
                   c.energy_var_j2, grade_name(c.grade), c.runs, text(c.name), text(c.device),
                   text(c.kappa), text(c.theta), text(c.omega), flag_names(c.flags))

    def check(self):
        """Validate (finite, ≥ 0, Axiom M1); raises ErgError naming the field."""
        d = new_diag()
        check(lib.erg_signature_check(ctypes.byref(self._c()), ctypes.byref(d)), d)
        return self

    def to_dict(self):
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["energy_j"] = self.energy_j
        return d


def idle(device, static_power_w, time_s):
    """An idle element (Section 3.3): the device held at its static power for time_s."""
    c = _lib.Signature()
    check(lib.erg_signature_idle(cstr(device), static_power_w, time_s, ctypes.byref(c)))
    return Signature._from_c(c)


def _op(fn, sigs):
    if len(sigs) == 1 and not isinstance(sigs[0], Signature):
        sigs = list(sigs[0])
    arr = (_lib.Signature * len(sigs))(*[s._c() for s in sigs])
    out = _lib.Signature()
    d = new_diag()
    check(fn(arr, len(sigs), ctypes.byref(out), ctypes.byref(d)), d)
    return Signature._from_c(out)


def seq(*sigs):
    """Sequential composition ⊗ (Section 3.3.1) of signatures (arguments or one iterable)."""
    return _op(lib.erg_signature_seq, sigs)


def par(*sigs):
    """Same-device parallel composition ⊕ (Section 3.3.2, Axiom P2)."""
    return _op(lib.erg_signature_par, sigs)


def multi(*sigs):
    """Cross-device parallel composition ⊕multi (Section 3.3.3), idle padding at static power."""
    return _op(lib.erg_signature_multi, sigs)


def read_signature(path):
    """Read a signature/1 file; ErgError (ENOENT, EPARSE with file:line:col, EVERSION)."""
    c = _lib.Signature()
    d = new_diag()
    check(lib.erg_signature_read_file(cstr(str(path)), ctypes.byref(c), ctypes.byref(d)), d)
    return Signature._from_c(c)


def write_signature(path, sig):
    """Write a signature/1 file, whole or not at all ("-" is stdout)."""
    d = new_diag()
    check(lib.erg_signature_write_file(cstr(str(path)), ctypes.byref(sig._c()),
                                       ctypes.byref(d)), d)


@dataclass
class ComposeReport:
    """What erg reports for a schedule (paper Section 5.2); energies J, times s."""
    total: Signature
    energy_j: float
    energy_sd_j: float
    time_s: float
    time_sd_s: float
    static_energy_j: float
    dynamic_energy_j: float
    confidence: float
    interval_j: tuple
    bias_bound_j: float
    grade: str
    n_elements: int
    devices: list = field(default_factory=list)
    monte_carlo: dict = None
    deviation: dict = None
    flags: list = field(default_factory=list)


class Schedule:
    """A schedule (expression tree or DAG of signatures on devices; erg/calculus.h)."""

    def __init__(self, _handle=None):
        self._h = _handle or lib.erg_schedule_new()
        if not self._h:
            raise MemoryError("erg_schedule_new")

    @classmethod
    def read(cls, path):
        """Read a schedule/1 file (signature paths relative to its folder)."""
        h = ctypes.c_void_p()
        d = new_diag()
        check(lib.erg_schedule_read_file(cstr(str(path)), ctypes.byref(h), ctypes.byref(d)), d)
        return cls(h.value)

    def close(self):
        if self._h:
            lib.erg_schedule_free(self._h)
            self._h = None

    __del__ = close

    def _call(self, fn, *args):
        d = new_diag()
        check(fn(self._h, *args, ctypes.byref(d)), d)
        return self

    def add_device(self, id, static_power_w, idle_power_w=math.nan):
        return self._call(lib.erg_schedule_add_device, cstr(id), static_power_w, idle_power_w)

    def add_signature(self, sig):
        return self._call(lib.erg_schedule_add_signature, ctypes.byref(sig._c()))

    def add_node(self, id, signature, device=None, start_s=math.nan):
        return self._call(lib.erg_schedule_add_node, cstr(id), cstr(signature), cstr(device),
                          start_s)

    def add_edge(self, src, dst):
        return self._call(lib.erg_schedule_add_edge, cstr(src), cstr(dst))

    def write(self, path):
        d = new_diag()
        check(lib.erg_schedule_write_file(cstr(str(path)), self._h, ctypes.byref(d)), d)
        return self

    def compose(self, confidence=0.95, warm_start=False, mc_samples=0, mc_seed=1,
                measured_j=None, measured_sd_j=0.0):
        """Compose (erg_schedule_compose); with measured_j also the deviation test (Eq. 23)."""
        o = _lib.ComposeOptions()
        lib.erg_compose_options_init(ctypes.byref(o))
        o.confidence, o.warm_start = confidence, int(bool(warm_start))
        o.mc_samples, o.mc_seed = mc_samples, mc_seed
        r = _lib.Report()
        d = new_diag()
        check(lib.erg_schedule_compose(self._h, ctypes.byref(o), ctypes.byref(r),
                                       ctypes.byref(d)), d)
        try:
            if measured_j is not None:
                check(lib.erg_report_deviation(ctypes.byref(r), measured_j, measured_sd_j,
                                               ctypes.byref(d)), d)
            devs = [{"id": text(r.devices[i].id), "static_energy_j": r.devices[i].static_energy_j,
                     "dynamic_energy_j": r.devices[i].dynamic_energy_j,
                     "busy_s": r.devices[i].busy_s, "idle_s": r.devices[i].idle_s}
                    for i in range(r.n_devices)]
            mc = ({"energy_j": r.mc_energy_j, "energy_sd_j": r.mc_energy_sd_j,
                   "time_s": r.mc_time_s, "time_sd_s": r.mc_time_sd_s,
                   "samples": r.mc_samples} if r.has_mc else None)
            dev = ({"measured_j": r.measured_j, "measured_sd_j": r.measured_sd_j,
                    "z": r.deviation_z, "detected": bool(r.deviation_detected)}
                   if r.has_deviation else None)
            return ComposeReport(Signature._from_c(r.total), r.energy_j, r.energy_sd_j, r.time_s,
                                 r.time_sd_s, r.static_energy_j, r.dynamic_energy_j,
                                 r.confidence, (r.interval_j[0], r.interval_j[1]),
                                 r.bias_bound_j, grade_name(r.grade), r.n_elements, devs, mc, dev,
                                 flag_names(r.flags))
        finally:
            lib.erg_report_free(ctypes.byref(r))
