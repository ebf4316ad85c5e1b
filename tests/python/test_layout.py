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
        out = subprocess.run([os.environ["ERG_LAYOUT_BIN"]], capture_output=True, text=True,
                             check=True).stdout
        c = json.loads(out)
        self.assertEqual(set(c), set(_lib.LAYOUTS))
        for name, cls in _lib.LAYOUTS.items():
            with self.subTest(struct=name):
                self.assertEqual(c[name]["size"], __import__("ctypes").sizeof(cls))
                for f, off in c[name]["fields"].items():
                    self.assertEqual(getattr(cls, f).offset, off, "%s.%s" % (name, f))

    def test_library_found_as_documented(self):
        self.assertEqual(os.path.realpath(_lib.path),
                         os.path.realpath(os.environ["ERG_LIBRARY"]))


if __name__ == "__main__":
    ergtest.main()
