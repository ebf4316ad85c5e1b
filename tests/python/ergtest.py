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


def run(cmd, env=None, cwd=None, timeout=600):
    e = dict(os.environ)
    e["PYTHONPATH"] = PYDIR + (":" + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.update(env or {})
    return subprocess.run(cmd, env=e, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def main():
    unittest.main(verbosity=2)
