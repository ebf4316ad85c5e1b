# SPDX-License-Identifier: MIT
"""`python3 -m erg.run [--out calls.jsonl] [--stable] [-r N] SCRIPT.py [args...]`: energy of every
torch call of a program, with no change to its source.

Attribution: a torch.overrides.TorchFunctionMode sees every torch function and Tensor method the
program calls (torch 1.13 and later), and global module hooks (register_module_forward_pre_hook /
register_module_forward_hook) open a window around every nn.Module forward, so layers get their
own records and the torch calls inside them are marked nested. Each call is a window; calls are
aggregated by (API, call site, argument shapes, nesting) as erg._records explains: no figure is
made up for calls shorter than the meter's update period. The call site is the program's own
line (the first frame outside torch and erg). The instrumentation's own time is the
"<instrumentation>" record.

--stable: FECoM's protocol (Rajput et al., Sections 2.3-2.4) around whole runs: a calibration at
rest (--calibration FILE, else the default calibration file when it exists, else one taken now
for --calibrate-s seconds), then for each of the -r N runs the stability wait (temperatures and
the CV of windowed power against the calibration), the run in a child process, and a cool-down of
--cooldown seconds; net energy = gross − calibrated idle power × time. The records of the runs are
merged per key: means over runs, energy_sd_runs_j the sample sd over runs, "runs": N, and the
stability outcome of each run. Without --stable, -r N repeats the run with none of this.

Exit status: the program's (the first failing run's with -r); 2 bad usage; its own traceback is
printed as Python would, without erg's frames. A program stopped by Ctrl-C (KeyboardInterrupt, or
a child run killed by a signal) gets its records written, then erg.run dies of the same signal,
as the program would (a shell sees 130).
"""
import argparse
import json
import math
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from . import _out

_ERG_DIR = os.path.dirname(os.path.abspath(__file__))


def _api_name(func, cache={}):
    n = cache.get(func)
    if n is not None:
        return n
    q = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    mod = getattr(func, "__module__", None)
    if q.startswith("_VariableFunctionsClass."):
        n = "torch." + q.split(".", 1)[1]
    elif q.startswith("_TensorBase.") or q.startswith("Tensor."):
        n = "torch.Tensor." + q.split(".", 1)[1]
    elif mod == "torch._C._nn":
        n = "torch.nn.functional." + q
    elif mod is None:
        n = q
    elif mod.startswith("torch._C") or mod == "torch._tensor":
        n = "torch." + q
    else:
        n = mod + "." + q
    try:
        cache[func] = n
    except TypeError:
        pass
    return n


class _Site:
    def __init__(self, script):
        import torch
        self.skip = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep, _ERG_DIR + os.sep,
                     os.path.dirname(os.path.abspath(runpy.__file__)) + os.sep + "runpy")
        self.cache = {}

    def __call__(self):
        f = sys._getframe(2)
        while f is not None:
            fn = f.f_code.co_filename
            if not fn.startswith(self.skip):
                key = (fn, f.f_lineno)
                s = self.cache.get(key)
                if s is None:
                    s = self.cache[key] = "%s:%d" % (os.path.basename(fn), f.f_lineno)
                return s
            f = f.f_back
        return "?"


def attach(rec, script, modules=True):
    """Enter the TorchFunctionMode and register the module hooks; returns a function that undoes
    both."""
    import torch
    from torch.overrides import TorchFunctionMode
    site = _Site(script)
    skip = {"__get__", "__set__", "__len__", "dim", "size", "numel", "is_floating_point",
            "requires_grad_", "__repr__", "__format__", "__hash__", "__bool__", "element_size",
            "_record_function_enter", "_record_function_exit"}

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if getattr(func, "__name__", "") in skip:
                return func(*args, **kwargs)
            return rec.call(_api_name(func), site(), func, args, kwargs)

    mode = Mode()
    mode.__enter__()
    handles = []
    if modules:
        from torch.nn.modules import module as M
        stack = []

        def pre(mod, inp):
            cls = type(mod)
            stack.append((id(mod), rec.begin("%s.forward" % _module_name(cls), site(), inp)))

        def post(mod, inp, out):
            while stack:
                i, tok = stack.pop()
                if i == id(mod):
                    rec.end(tok)
                    break
        handles = [M.register_module_forward_pre_hook(pre), M.register_module_forward_hook(post)]

    def detach():
        for h in handles:
            h.remove()
        mode.__exit__(None, None, None)
    return detach


def _module_name(cls):
    mod = cls.__module__ or ""
    if mod.startswith("torch.nn.modules."):
        return "torch.nn." + cls.__qualname__
    if mod == "__main__":
        return cls.__qualname__
    return mod + "." + cls.__qualname__


def _print_own_traceback(e, script):
    """The exception as Python prints it, from the script's first frame on, without the frames
    of erg and of torch's override dispatch (which exist only because erg is attached)."""
    target = os.path.abspath(script)
    frames = traceback.extract_tb(e.__traceback__)
    start = 0
    for i, fr in enumerate(frames):
        if os.path.abspath(fr.filename) == target:
            start = i
            break
    own = [fr for fr in frames[start:]
           if not fr.filename.startswith(_ERG_DIR + os.sep)
           and not fr.filename.endswith(os.path.join("torch", "overrides.py"))]
    out = []
    if own:
        out.append("Traceback (most recent call last):\n")
        out.extend(traceback.StackSummary.from_list(own).format())
    out.extend(traceback.format_exception_only(type(e), e))
    sys.stderr.write("".join(out))


def run_once(script, args, out, calibration=None, modules=True, extra=None):
    """Run the script in this process under the recorder; returns its exit status."""
    from . import _records
    from .meter import Calibration
    cal = Calibration.read(calibration) if calibration else None
    rec = _records.Recorder(out, calibration=cal, project=os.path.basename(script),
                            extra=dict({"mode": "runtime"}, **(extra or {})))
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    detach = attach(rec, script, modules)
    status = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            sys.stderr.write("%s\n" % code)
    except BaseException as e:  # the program's own failure: its traceback, status 1
        detach()
        detach = lambda: None
        sys.stdout.flush()
        _print_own_traceback(e, script)
        # Ctrl-C: Python dies of SIGINT after the traceback (a shell sees 130); so does erg.run,
        # once the records are written (main's caller)
        status = -signal.SIGINT if isinstance(e, KeyboardInterrupt) else 1
    finally:
        detach()
        sys.stdout.flush()
        written = rec.write()
    if not written and status == 0:
        status = 2  # the program ran, erg failed: its records are lost
    return status


def _merge(paths, runs_info):
    """Per key over runs: means, energy_sd_runs_j (sample sd), runs."""
    groups = {}
    order = []
    for i, p in enumerate(paths):
        with open(p) as f:
            for line in f:
                r = json.loads(line)
                k = (r["api"], r["site"], r.get("shapes"), r.get("nested"))
                if k not in groups:
                    groups[k] = []
                    order.append(k)
                groups[k].append(r)
    out = []
    for k in order:
        rs = groups[k]
        m = dict(rs[-1])
        n = len(rs)
        for f in ("calls", "time_s"):
            m[f] = sum(r[f] for r in rs) / n
        for f in ("energy_j", "net_energy_j"):
            vals = [r[f] for r in rs]
            if any(v is None for v in vals):
                m[f] = None
                continue
            mu = sum(vals) / n
            m[f] = mu
            if f == "energy_j":
                m["energy_sd_runs_j"] = (math.sqrt(sum((v - mu) ** 2 for v in vals) / (n - 1))
                                         if n > 1 else 0.0)
        m["runs"] = n
        m["stability"] = runs_info
        out.append(m)
    return out


def _help_formatter():
    from ._cli import help_formatter
    return help_formatter()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m erg.run", formatter_class=_help_formatter(),
                                 description="Energy of every torch call of a program.")
    ap.add_argument("--out", default=None, help="records file, appended to (default $ERG_CALLS, "
                    "else erg-calls.jsonl)")
    ap.add_argument("--stable", action="store_true", help="FECoM's protocol: calibration, "
                    "stability wait before each run, baseline subtraction, cool-down")
    ap.add_argument("-r", "--runs", type=int, default=1, help="repetitions (default 1)")
    ap.add_argument("--cooldown", type=float, default=1.0, help="seconds of rest after each run "
                    "with --stable (default 1)")
    ap.add_argument("--calibration", help="calibration/1 file for --stable (default: the "
                    "default file when it exists, else a calibration taken now)")
    ap.add_argument("--calibrate-s", type=float, default=10.0, help="length of a calibration "
                    "taken now, s (default 10)")
    ap.add_argument("--stable-timeout", type=float, default=120.0,
                    help="give up waiting for stability after, s (default 120)")
    ap.add_argument("--no-modules", action="store_true", help="no module hooks")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    out = a.out or os.environ.get("ERG_CALLS") or "erg-calls.jsonl"
    if not os.path.isfile(a.script):
        sys.stderr.write("erg.run: %s: no such file\n" % a.script)
        return 2
    if a.runs < 1:
        sys.stderr.write("erg.run: -r must be at least 1\n")
        return 2
    try:
        import torch  # noqa: F401  (the calls recorded are torch's)
    except ImportError as e:
        sys.stderr.write("erg.run: this Python (%s) cannot import torch (%s): install Debian's "
                         "python3-torch and run /usr/bin/python3 -m erg.run, or set "
                         "$ERG_PYTHON for erg instrument\n" % (sys.executable, e))
        return 2
    try:
        real, _ = _out.target(out)
    except _out.OutputError as e:
        sys.stderr.write("erg.run: %s; nothing run\n" % e)
        return 2
    folder = os.path.dirname(os.path.abspath(real))
    if not os.path.isdir(folder):
        sys.stderr.write("erg.run: %s: no folder %s; nothing run\n" % (out, folder))
        return 2
    if a.runs == 1 and not a.stable:
        return run_once(a.script, a.args, out, a.calibration, not a.no_modules)

    from .meter import Calibration, Meter
    cal_path = a.calibration
    meter = Meter()
    if a.stable and not cal_path:
        d = Calibration.default_path()
        if d and os.path.exists(d):
            cal_path = d
        else:
            cal = meter.calibrate(a.calibrate_s, min(0.1, a.calibrate_s / 4))
            fd, cal_path = tempfile.mkstemp(prefix="erg-cal-", suffix=".json")
            os.close(fd)
            cal.write(cal_path)
    cal = Calibration.read(cal_path) if cal_path else None
    tmpdir = tempfile.mkdtemp(prefix="erg-run-")
    paths, info, status = [], [], 0
    try:
        for i in range(a.runs):
            st = {"run": i + 1}
            if a.stable:
                ok, waited, why = meter.wait_stable(cal, timeout_s=a.stable_timeout)
                st.update({"stable": ok, "waited_s": waited, "reason": why})
            p = os.path.join(tmpdir, "run%d.jsonl" % i)
            cmd = [sys.executable, "-m", "erg.run", "--child", "--out", p]
            if cal_path:
                cmd += ["--calibration", cal_path]
            if a.no_modules:
                cmd.append("--no-modules")
            # Ctrl-C reaches the child (same process group): this process waits for it, writes
            # the records of the runs so far and then dies of the child's signal
            old = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                rc = subprocess.call(cmd + [a.script] + a.args,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, old))
            finally:
                signal.signal(signal.SIGINT, old)
            st["exit_status"] = rc
            info.append(st)
            if os.path.exists(p):
                paths.append(p)
            if rc != 0:
                status = rc
                break
            if a.stable and i + 1 < a.runs:
                time.sleep(a.cooldown)
        merged = _merge(paths, info) if paths else []
        from ._records import append_records
        if not append_records(out, "".join(json.dumps(r, allow_nan=False) + "\n"
                                           for r in merged)) and status == 0:
            status = 2
    finally:
        for p in paths:
            os.unlink(p)
        os.rmdir(tmpdir) if not os.listdir(tmpdir) else None
        meter.close()
    return status


def _exit(status):
    """Exit with status; a negative one is the signal the program died of: die of it too."""
    if status < 0:
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        status = 128 - status
    sys.exit(status)


if __name__ == "__main__":
    _exit(main())
