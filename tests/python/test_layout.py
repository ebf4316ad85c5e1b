# SPDX-License-Identifier: MIT
"""Every struct python/erg/_lib.py mirrors has the size and field offsets the C compiler gives
(tests/python/layout.c, built with the library): a header change not mirrored fails here."""
import json
import os
import subprocess
import unittest

import ergtest  # noqa: F401  (sys.path)
from erg import _lib


class Layout(unittest.TestCase):
    def test_sizes_and_offsets(self):
        cmd = [os.environ["ERG_LAYOUT_BIN"]]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                             env=ergtest.clean_env(cmd, dict(os.environ))).stdout
        c = json.loads(out)
        self.assertEqual(set(c), set(_lib.LAYOUTS))
        for name, cls in _lib.LAYOUTS.items():
            with self.subTest(struct=name):
                self.assertEqual(c[name]["size"], __import__("ctypes").sizeof(cls))
                for f, off in c[name]["fields"].items():
                    self.assertEqual(getattr(cls, f).offset, off, "%s.%s" % (name, f))

    def test_profile_torch_mirror(self):
        """src/predict/profile_torch.py mirrors erg_measurement and erg_channel_reading with its
        own ctypes classes (it runs without the erg package): same sizes and offsets as C (a
        mirror 264 bytes short once let erg_meter_diff write past it)."""
        import ctypes
        import importlib.util
        path = os.path.join(os.environ["ERG_TEST_SOURCE_DIR"], "src", "predict",
                            "profile_torch.py")
        spec = importlib.util.spec_from_file_location("profile_torch_mirror", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # torch is imported only when profiling
        cmd = [os.environ["ERG_LAYOUT_BIN"]]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                             env=ergtest.clean_env(cmd, dict(os.environ))).stdout
        c = json.loads(out)
        for name, cls in (("erg_measurement", mod._Measurement),
                          ("erg_channel_reading", mod._ChannelReading)):
            with self.subTest(struct=name):
                self.assertEqual(c[name]["size"], ctypes.sizeof(cls))
                for f, off in c[name]["fields"].items():
                    self.assertEqual(getattr(cls, f).offset, off, "%s.%s" % (name, f))

    def test_pip_install_with_debian_tools(self):
        """pip install --no-build-isolation --no-deps (Debian's pip and setuptools, no index)
        into a folder; the installed package imports and reaches liberg through ERG_LIBRARY."""
        import shutil
        import sys
        import tempfile
        import importlib.util
        if not (importlib.util.find_spec("pip") and importlib.util.find_spec("setuptools")):
            self.skipTest("python3-pip or python3-setuptools is not installed")
        d = tempfile.mkdtemp(prefix="erg-pip-")
        try:
            src = os.path.join(d, "src")
            shutil.copytree(ergtest.PYDIR, src, ignore=shutil.ignore_patterns(
                "__pycache__", "build", "*.egg-info"))
            r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                                "--no-deps", "--no-index", "--quiet", "--target",
                                os.path.join(d, "site"), src], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            env = dict(os.environ, PYTHONPATH=os.path.join(d, "site"))
            r = subprocess.run([sys.executable, "-c", "import erg; print(erg.__file__); "
                                "print(erg.version())"], capture_output=True, text=True,
                               env=env, cwd=d)
            self.assertEqual(r.returncode, 0, r.stderr)
            where, ver = r.stdout.split()
            self.assertTrue(where.startswith(os.path.join(d, "site")), where)
            self.assertRegex(ver, r"^\d+\.\d+\.\d+$")
        finally:
            shutil.rmtree(d)

    def test_library_found_as_documented(self):
        self.assertEqual(os.path.realpath(_lib.path),
                         os.path.realpath(os.environ["ERG_LIBRARY"]))


if __name__ == "__main__":
    ergtest.main()
