# SPDX-License-Identifier: MIT
"""docs/python.md: its ```python blocks run as they stand (on the estimator, from the repository
root), and every option its ```sh blocks use is one the command's --help lists."""
import os
import re
import shlex
import unittest

import ergtest

DOC = os.path.join(ergtest.SRC, "docs", "python.md")


def blocks(lang):
    with open(DOC) as f:
        return re.findall(r"```%s\n(.*?)```" % lang, f.read(), re.S)


class Docs(unittest.TestCase):
    def test_python_blocks_run(self):
        bs = blocks("python")
        self.assertGreaterEqual(len(bs), 2)
        os.environ["ERG_BACKENDS"] = "estimator"
        cwd = os.getcwd()
        os.chdir(ergtest.SRC)
        try:
            for i, b in enumerate(bs):
                with self.subTest(block=i):
                    exec(compile(b, "%s block %d" % (DOC, i + 1), "exec"), {})
        finally:
            os.chdir(cwd)

    def test_sh_options_exist(self):
        helps = {}
        for b in blocks("sh"):
            for line in b.splitlines():
                words = shlex.split(line.split("#")[0])
                if not words:
                    continue
                if words[0] == "erg":
                    cmd = [os.environ["ERG_BIN"], words[1], "--help"]
                elif words[:3] == ["python3", "-m", "erg.run"]:
                    cmd = [ergtest.PYTHON, "-m", "erg.run", "--help"]
                else:
                    self.fail("unknown command in docs: %s" % line)
                key = " ".join(cmd)
                if key not in helps:
                    r = ergtest.run(cmd)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    helps[key] = r.stdout
                for w in words:
                    if w.endswith(".py") and "erg.run" in key:
                        break           # what follows the script is the script's
                    if w.startswith("-"):
                        self.assertIn(w.split("=")[0], helps[key], line)



class Readme(unittest.TestCase):
    def test_tour_python_lines_run_in_a_fresh_checkout(self):
        """README's tour promises that every line runs in a fresh clone after scripts/main.sh:
        its Python lines, as written, in a shell without PYTHONPATH (README's `erg` is the
        build's binary; the examples and python/ as the checkout has them)."""
        import shutil
        import subprocess
        import tempfile
        with open(os.path.join(ergtest.SRC, "README.md")) as f:
            tour = re.search(r"## A tour.*?```sh\n(.*?)```", f.read(), re.S).group(1)
        lines = [ln.split("  #")[0].strip() for ln in tour.splitlines()
                 if "python3" in ln.split("  #")[0]]
        self.assertEqual(len(lines), 2, lines)
        if not ergtest.have_torch():
            self.skipTest("python3-torch is not installed")
        if os.environ.get("LD_PRELOAD"):
            # a shell line mixes erg (its own ASan runtime) and python3 (the preloaded one)
            self.skipTest("sanitizer build: the plain build runs the README's lines")
        d = tempfile.mkdtemp(prefix="erg-readme-")
        try:
            for sub in ("python", "examples"):
                os.symlink(os.path.join(ergtest.SRC, sub), os.path.join(d, sub))
            bindir = os.path.join(d, "bin")
            os.mkdir(bindir)
            os.symlink(os.environ["ERG_BIN"], os.path.join(bindir, "erg"))
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            # a fresh Debian 12: python3 is Debian's
            env["PATH"] = bindir + ":/usr/bin:/bin"
            env["ERG_BACKENDS"] = "estimator"
            for ln in lines:
                with self.subTest(line=ln):
                    r = subprocess.run(["sh", "-c", ln], cwd=d, env=env, capture_output=True,
                                       text=True, timeout=600)
                    self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    ergtest.main()
