# SPDX-License-Identifier: MIT
"""Shared by the Python tests: fake host trees under ERG_ROOT (counters rewritten in place at a
fixed width, as a counter file changes: no truncation), the skip status, paths."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SKIP = 77
SRC = os.environ.get("ERG_TEST_SOURCE_DIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.path.join(SRC, "python")
EXAMPLES = os.path.join(SRC, "examples", "python")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
if PYDIR not in sys.path:
    sys.path.insert(0, PYDIR)


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def require_torch():
    if not have_torch():
        print("skipped: python3-torch is not installed")
        sys.exit(SKIP)


class FakeRoot:
    """A temporary ERG_ROOT with a powercap package zone (and optionally dram) and a frozen
    /proc/stat; counters in µJ."""

    def __init__(self, package_uj=1000000, dram_uj=None, max_uj=262143328850, busy=100,
                 idle=100):
        self.root = tempfile.mkdtemp(prefix="erg-pytest-")
        pc = os.path.join(self.root, "sys/class/powercap")
        self.pkg = self._zone(pc, "intel-rapl:0", "package-0", package_uj, max_uj)
        self.dram = (self._zone(pc, "intel-rapl:0:0", "dram", dram_uj, max_uj)
                     if dram_uj is not None else None)
        os.makedirs(os.path.join(self.root, "proc"))
        with open(os.path.join(self.root, "proc/stat"), "w") as f:
            f.write("cpu  %d 0 0 %d 0 0 0 0 0 0\n" % (busy, idle))

    @staticmethod
    def _zone(pc, zone, name, uj, max_uj):
        d = os.path.join(pc, zone)
        os.makedirs(d)
        with open(os.path.join(d, "name"), "w") as f:
            f.write(name + "\n")
        with open(os.path.join(d, "max_energy_range_uj"), "w") as f:
            f.write("%d\n" % max_uj)
        path = os.path.join(d, "energy_uj")
        with open(path, "w") as f:
            f.write("%020d\n" % uj)
        return path

    @staticmethod
    def read(path):
        with open(path) as f:
            return int(f.read())

    @staticmethod
    def set(path, uj):
        """Rewrite the counter in place (same width, no truncation)."""
        fd = os.open(path, os.O_WRONLY)
        try:
            os.pwrite(fd, b"%020d\n" % uj, 0)
        finally:
            os.close(fd)

    def advance(self, path, joules, steps=1):
        """Advance by joules in steps of at most 1 J (no interval implies more than 1 kW)."""
        per = int(round(joules * 1e6)) // steps
        for _ in range(steps):
            self.set(path, self.read(path) + per)

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def clean_env(cmd, e):
    """Under the sanitizers only python3 gets the preloaded ASan runtime: the erg command and C
    test programs carry their own and refuse a second one."""
    if cmd and os.path.basename(cmd[0]) not in ("python3", os.path.basename(sys.executable)):
        e.pop("LD_PRELOAD", None)
    return e


def run(cmd, env=None, cwd=None, timeout=600):
    e = dict(os.environ)
    e["PYTHONPATH"] = PYDIR + (":" + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.update(env or {})
    return subprocess.run(cmd, env=clean_env(cmd, e), cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def main():
    unittest.main(verbosity=2)


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def forkrun(argv, env=None, cwd=None):
    """Run a script (argv = [script, args...]) or a module (["-m", module, args...]) as
    `python3 ...` would, in a child forked from this interpreter: torch, once imported here, is
    not imported again (that takes seconds on a loaded 2-core machine). The child runs the
    program's atexit functions (erg's records are written there) and exits with its status; an
    uncaught exception prints its traceback (with the child's runpy frames) and gives 1."""
    import atexit
    import runpy
    import traceback
    sys.stdout.flush()
    sys.stderr.flush()
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            os.environ.update(env or {})
            os.environ["PYTHONPATH"] = PYDIR
            if cwd:
                os.chdir(cwd)
            status = 0
            try:
                if argv[0] == "-m":
                    sys.argv = list(argv[1:])
                    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
                else:
                    sys.argv = list(argv)
                    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
                    runpy.run_path(argv[0], run_name="__main__")
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:
                traceback.print_exc()
                status = 1
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)
    _, st = os.waitpid(pid, 0)
    with out, err:
        out.seek(0)
        err.seek(0)
        return Result(os.waitstatus_to_exitcode(st), out.read().decode(), err.read().decode())
