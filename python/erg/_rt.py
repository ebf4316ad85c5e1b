# SPDX-License-Identifier: MIT
"""Runtime support of scripts patched by `erg instrument`: the wrapper every patched call goes
through, and the recorder whose records are appended to $ERG_CALLS (default erg-calls.jsonl in
the working directory) when the script exits, also when it raises.

A patched call `torch.mm(a, b)` reads `__erg_call__("torch.mm|train.py:12:9", torch.mm, a, b)`:
the callee and its arguments are evaluated in place, in the original order, and only the call
itself runs inside the window. A callee the patcher inferred to belong to the library (a method
of an object it made, an nn.Module subclass, ...) is checked again here: one that turns out not to
is called through with no window.
"""
import os
import sys
import types

from ._records import install

LIBRARY = os.environ.get("ERG_LIBRARY_NAME", "torch")
_rec = None
_sites = {}
_public = {}


def start(library="torch", project_only=False):
    """Install the recorder (once); its "<project>" window starts now."""
    global _rec, LIBRARY
    LIBRARY = library
    if _rec is None:
        out = os.environ.get("ERG_CALLS") or "erg-calls.jsonl"
        name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "<script>"
        _rec = install(out, project=name, extra={"mode": "project" if project_only else "patched"})
    return _rec


def _public_name(cls):
    """Shortest public dotted name of a class: torch.nn.modules.linear.Linear -> torch.nn.Linear."""
    n = _public.get(cls)
    if n is not None:
        return n
    mod = getattr(cls, "__module__", None) or ""
    qn = getattr(cls, "__qualname__", None) or getattr(cls, "__name__", "?")
    if mod in ("__main__", "builtins", ""):
        n = qn
    else:
        parts = mod.split(".")
        n = mod + "." + qn
        for i in range(1, len(parts)):
            m = sys.modules.get(".".join(parts[:i]))
            if m is not None and getattr(m, qn.split(".")[0], None) is cls:
                n = ".".join(parts[:i]) + "." + qn
                break
    _public[cls] = n
    return n


def _in_lib(cls):
    for c in getattr(cls, "__mro__", (cls,)):
        mod = getattr(c, "__module__", "") or ""
        if mod == LIBRARY or mod.startswith(LIBRARY + "."):
            return True
    return False


def _runtime_name(f, attr=""):
    """API name of a callee inferred statically, or None when it is not the library's. attr:
    the method name as written at the call site (".step"), when the callee was an attribute."""
    self = getattr(f, "__self__", None)
    if self is not None and not isinstance(self, types.ModuleType):
        cls = self if isinstance(self, type) else type(self)
        if not _in_lib(cls):
            return None
        return "%s%s" % (_public_name(cls), attr or "." + getattr(f, "__name__", "?"))
    if attr and self is None and not isinstance(f, type) and not _in_lib(type(f)):
        mod = getattr(f, "__module__", "") or ""
        if not (mod == LIBRARY or mod.startswith(LIBRARY + ".")):
            return None
    if isinstance(f, (types.FunctionType, types.BuiltinFunctionType)):
        mod = getattr(f, "__module__", "") or ""
        if mod == LIBRARY or mod.startswith(LIBRARY + "."):
            return "%s.%s" % (mod, f.__qualname__)
        return None
    cls = type(f)
    if isinstance(f, type):
        return _public_name(f) if _in_lib(f) else None
    if _in_lib(cls):
        return "%s.__call__" % _public_name(cls)
    return None


def call(site, f, /, *args, **kwargs):
    """The wrapper of a patched call: site is "API|file:line:col" (API empty when inferred)."""
    s = _sites.get(site)
    if s is None:
        api, _, where = site.partition("|")
        s = _sites[site] = (api, where)
    api, where = s
    if not api or api[0] == ".":
        api = _runtime_name(f, api)
        if api is None:
            return f(*args, **kwargs)
    receiver = getattr(f, "__self__", None)
    if isinstance(receiver, types.ModuleType):
        receiver = None
    return _rec.call(api, where, f, args, kwargs, receiver)
