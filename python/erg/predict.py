# SPDX-License-Identifier: MIT
"""HYMELL level 1 (erg/predict.h): per-op time and energy from a fitted op model (model/1)."""
import ctypes
from dataclasses import dataclass

from . import _lib
from ._core import check, cstr, grade_name, new_diag
from ._lib import lib, text
from .calculus import Signature


@dataclass
class OpPrediction:
    """One prediction (erg_op_prediction): time_s (s), energy_j (J, NaN when the model has no
    energy), regime, the bounded/extrapolated marks, method ("fit" or "roofline"), the physical
    floor (s), power_w (W), why (when extrapolated) and grade."""
    time_s: float
    energy_j: float
    regime: int
    fallback: bool
    extrapolated: bool
    time_bounded: bool
    energy_bounded: bool
    method: str
    floor_time_s: float
    power_w: float
    why: str
    grade: str


def _dims(op, dtype, m, n, k, tokens, d_model):
    d = _lib.OpDims()
    v = ctypes.c_int()
    if lib.erg_op_parse(cstr(op), ctypes.byref(v)) != 0:
        raise ValueError("unknown op %r (rmsnorm, softmax, gemm)" % (op,))
    d.op = v.value
    if lib.erg_dtype_parse(cstr(dtype), ctypes.byref(v)) != 0:
        raise ValueError("unknown dtype %r (fp32, bf16, fp16)" % (dtype,))
    d.dtype = v.value
    d.m, d.n, d.k, d.tokens, d.d_model = m, n, k, tokens, d_model
    return d


class OpModel:
    """A fitted level-1 op model (model/1 file, `erg fit ops`)."""

    def __init__(self, path=None):
        """Load path, or the default model path of this machine's kind when None."""
        if path is None:
            kind = ctypes.create_string_buffer(128)
            lib.erg_target_identity(kind, len(kind), None, 0)
            path = _lib.default_path(lib.erg_op_model_default_path, kind.value)
            if path is None:
                raise FileNotFoundError("no default op model path for %s" % text(kind.value))
        h = ctypes.c_void_p()
        d = new_diag()
        check(lib.erg_op_model_load(cstr(str(path)), ctypes.byref(h), ctypes.byref(d)), d)
        self._h = h.value
        self.path = str(path)

    def close(self):
        if getattr(self, "_h", None):
            lib.erg_op_model_free(self._h)
            self._h = None

    __del__ = close

    @property
    def target(self):
        return text(lib.erg_op_model_target(self._h))

    @property
    def grade(self):
        return grade_name(lib.erg_op_model_grade(self._h))

    def predict(self, op, dtype="fp32", m=0, n=0, k=0, tokens=0, d_model=0):
        """Predict one configuration (erg_op_model_predict); ErgError for ENOTSUP etc."""
        dims = _dims(op, dtype, m, n, k, tokens, d_model)
        p = _lib.OpPrediction()
        d = new_diag()
        check(lib.erg_op_model_predict(self._h, ctypes.byref(dims), ctypes.byref(p),
                                       ctypes.byref(d)), d)
        return OpPrediction(p.time_s, p.energy_j, p.regime, bool(p.fallback),
                            bool(p.extrapolated), bool(p.time_bounded), bool(p.energy_bounded),
                            ("fit", "roofline")[p.method], p.floor_time_s, p.power_w, text(p.why),
                            grade_name(p.grade))

    def signature(self, op, static_power_w=0.0, dtype="fp32", m=0, n=0, k=0, tokens=0,
                  d_model=0):
        """The prediction as an erg.Signature (erg_op_model_signature), composable with seq/par."""
        dims = _dims(op, dtype, m, n, k, tokens, d_model)
        s = _lib.Signature()
        d = new_diag()
        check(lib.erg_op_model_signature(self._h, ctypes.byref(dims), static_power_w,
                                         ctypes.byref(s), ctypes.byref(d)), d)
        return Signature._from_c(s)
