# SPDX-License-Identifier: MIT
"""Errors and names shared by the modules of the erg package."""
import ctypes

from . import _lib
from ._lib import lib, text


class ErgError(Exception):
    """A liberg call failed. status: the negative ERG_* code; name: "ERG_EPARSE"; where and
    detail: erg_diag's fields (file:line:col or a sysfs path; what is wrong and the remedy)."""

    def __init__(self, status, where="", detail=""):
        self.status = status
        self.name = text(lib.erg_status_name(status))
        self.where = where
        self.detail = detail or text(lib.erg_strerror(status))
        msg = "%s: %s" % (where, self.detail) if where else self.detail
        super().__init__("%s (%s)" % (msg, self.name))


def check(rc, diag=None):
    """Raise ErgError for a non-zero status, with the diagnostic's where and detail."""
    if rc != 0:
        if diag is not None:
            raise ErgError(rc, text(diag.where), text(diag.detail))
        raise ErgError(rc)
    return rc


def new_diag():
    return _lib.Diag()


def grade_name(g):
    return text(lib.erg_grade_name(g))


GRADES = ("hw_shunt", "model_based", "estimator")


def grade_value(name):
    if isinstance(name, int):
        return name
    try:
        return GRADES.index(name)
    except ValueError:
        raise ValueError("unknown grade %r (one of %s)" % (name, ", ".join(GRADES))) from None


def flag_names(flags):
    """Names of the set bits of an ERG_FLAG_* word, in bit order (erg_flag_name)."""
    out = []
    for bit in range(32):
        if flags & (1 << bit):
            n = lib.erg_flag_name(bit)
            out.append(text(n) if n else "bit%d" % bit)
    return out


def flag_value(names):
    """The ERG_FLAG_* word of a list of flag names (erg_flag_parse); ValueError for an unknown
    name."""
    word = 0
    for n in names:
        bit = ctypes.c_uint(0)
        if lib.erg_flag_parse(str(n).encode(), ctypes.byref(bit)) != 0:
            known = [text(lib.erg_flag_name(i)) for i in range(32) if lib.erg_flag_name(i)]
            raise ValueError("unknown flag %r (one of %s)" % (n, ", ".join(known)))
        word |= bit.value
    return word


def state_name(s):
    return text(lib.erg_reading_state_name(s))


def domain_name(d):
    return text(lib.erg_domain_name(d))


def cstr(s):
    return None if s is None else (s.encode() if isinstance(s, str) else s)


def version():
    """liberg's version string ("0.1.0")."""
    return text(lib.erg_version())


def byref(x):
    return ctypes.byref(x)

