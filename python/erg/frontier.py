# SPDX-License-Identifier: MIT
"""Time-energy frontiers: thin calls over erg/frontier.h (Energy Calculus, Section 6)."""
import ctypes
from dataclasses import dataclass

import numpy as np

from . import _lib
from ._core import check, cstr, new_diag
from ._lib import lib, text

_METHODS = ("exact", "approx", "relaxation")
_DAG = {"auto": 0, "enumerate": 1, "relax": 2}
_EXPR = {"seq": 1, "par": 2, "multi": 3}


def pareto_min(time_s, energy_j):
    """Indices (numpy int array, by time ascending) of the Pareto-minimal (time, energy) pairs
    (paper Section 6.1; erg_pareto_min)."""
    t = np.ascontiguousarray(time_s, dtype=np.float64)
    e = np.ascontiguousarray(energy_j, dtype=np.float64)
    if t.shape != e.shape or t.ndim != 1:
        raise ValueError("time_s and energy_j must be 1-D arrays of one length")
    n = len(t)
    idx = (ctypes.c_size_t * max(n, 1))()
    nout = ctypes.c_size_t()
    dp = ctypes.POINTER(ctypes.c_double)
    check(lib.erg_pareto_min(t.ctypes.data_as(dp), e.ctypes.data_as(dp), n, idx,
                             ctypes.byref(nout)))
    return np.array(idx[:nout.value], dtype=np.int64)


@dataclass
class FrontierResult:
    """A frontier: arrays over its points (s, J), element names, the choice matrix
    (points × elements, index into each element's operating set), and how it was obtained."""
    time_s: np.ndarray
    energy_j: np.ndarray
    static_energy_j: np.ndarray
    dynamic_energy_j: np.ndarray
    bound_j: np.ndarray
    element_names: list
    choices: np.ndarray
    method: str
    epsilon: float
    max_gap_j: float


class OperatingSchedule:
    """Elements with operating sets composed by an expression or a DAG (erg_opsched)."""

    def __init__(self, _handle=None):
        self._h = _handle or lib.erg_opsched_new()
        if not self._h:
            raise MemoryError("erg_opsched_new")

    @classmethod
    def read(cls, path):
        """Read a schedule/1 file with operating sets ("points"); ErgError on bad input."""
        h = ctypes.c_void_p()
        d = new_diag()
        check(lib.erg_opsched_read_file(cstr(str(path)), ctypes.byref(h), ctypes.byref(d)), d)
        return cls(h.value)

    def close(self):
        if getattr(self, "_h", None):
            lib.erg_opsched_free(self._h)
            self._h = None

    __del__ = close

    def _call(self, fn, *args):
        d = new_diag()
        check(fn(self._h, *args, ctypes.byref(d)), d)

    def add_device(self, id, static_power_w):
        self._call(lib.erg_opsched_add_device, cstr(id), static_power_w)
        return self

    def add_point(self, element, sig, omega_device=None):
        """Add a signature (erg.Signature) to element's operating set; omega_device: JSON text."""
        self._call(lib.erg_opsched_add_point, cstr(element), ctypes.byref(sig._c()),
                   cstr(omega_device))
        return self

    def leaf(self, element):
        """Expression id of element's operating set."""
        out = ctypes.c_size_t()
        self._call(lib.erg_opsched_expr_leaf, cstr(element), ctypes.byref(out))
        return out.value

    def combine(self, op, *ids):
        """Expression id of op ("seq", "par", "multi") over earlier ids."""
        arr = (ctypes.c_size_t * len(ids))(*ids)
        out = ctypes.c_size_t()
        self._call(lib.erg_opsched_expr_op, _EXPR[op], arr, len(ids), ctypes.byref(out))
        return out.value

    def add_node(self, id, element):
        self._call(lib.erg_opsched_add_node, cstr(id), cstr(element))
        return self

    def add_edge(self, src, dst):
        self._call(lib.erg_opsched_add_edge, cstr(src), cstr(dst))
        return self

    def frontier(self, epsilon=0.0, dag_method="auto", enum_limit=None, lp_deadlines=None):
        """The time-energy frontier (erg_opsched_frontier)."""
        o = _lib.FrontierOptions()
        lib.erg_frontier_options_init(ctypes.byref(o))
        o.epsilon, o.dag_method = epsilon, _DAG[dag_method]
        if enum_limit is not None:
            o.enum_limit = enum_limit
        if lp_deadlines is not None:
            o.lp_deadlines = lp_deadlines
        f = _lib.Frontier()
        d = new_diag()
        check(lib.erg_opsched_frontier(self._h, ctypes.byref(o), ctypes.byref(f),
                                       ctypes.byref(d)), d)
        try:
            n, m = f.n_points, f.n_elements

            def col(name):
                return np.array([getattr(f.points[i], name) for i in range(n)], dtype=np.float64)
            return FrontierResult(col("time_s"), col("energy_j"), col("static_energy_j"),
                                  col("dynamic_energy_j"), col("bound_j"),
                                  [text(f.element_names[j]) for j in range(m)],
                                  np.array([f.choices[i] for i in range(n * m)],
                                           dtype=np.int64).reshape(n, m),
                                  _METHODS[f.method], f.epsilon, f.max_gap_j)
        finally:
            lib.erg_frontier_free(ctypes.byref(f))
