# SPDX-License-Identifier: MIT
"""erg instrument's patcher on its own (no torch needed): the exact text it writes for the call
forms FECoM handles and those it missed, the places it must not touch, and bad input through the
erg command (exit status 2, file:line:col)."""
import ast
import os
import tempfile
import textwrap
import unittest

import ergtest

from erg import instrument

H = "import erg._rt as __erg_rt; __erg_call__ = __erg_rt.call; __erg_rt.start('torch'); "


def patch(src, project=False):
    return instrument.patch(textwrap.dedent(src), "s.py", "torch", project)


class Patcher(unittest.TestCase):
    def test_aliases_methods_objects_and_lines(self):
        out, rep = patch('''\
            """Doc."""
            from __future__ import annotations
            import torch
            import torch.nn as nn
            from torch.nn import functional as F
            x = torch.randn(2,
                            3)  # a comment (with parens)
            y = F.relu(x).sum()
            lin = nn.Linear(3, 1)
            print(lin(x), (lin)(x), len(x))
            ''')
        self.assertEqual(out, textwrap.dedent('''\
            """Doc."""
            from __future__ import annotations
            ''') + H + textwrap.dedent('''\
            import torch
            import torch.nn as nn
            from torch.nn import functional as F
            x = __erg_call__("torch.randn|s.py:6:5", torch.randn, 2,
                            3)  # a comment (with parens)
            y = __erg_call__(".sum|s.py:8:5", __erg_call__("torch.nn.functional.relu|s.py:8:5", F.relu, x).sum)
            lin = __erg_call__("torch.nn.Linear|s.py:9:7", nn.Linear, 3, 1)
            print(__erg_call__("|s.py:10:7", lin, x), __erg_call__("|s.py:10:15", (lin), x), len(x))
            '''))
        self.assertEqual(rep["header_line"], 3)
        self.assertEqual(len(rep["wrapped"]), 6)
        # every line keeps its number: tracebacks point at the script's own lines
        self.assertEqual(len(out.splitlines()), 10)

    def test_subclasses_user_functions_and_parameters(self):
        out, rep = patch('''\
            import torch
            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = torch.nn.Linear(2, 2)
                def forward(self, x):
                    return self.fc(x)
            def make():
                return Net()
            def train(model, data):
                for xb in data:
                    model(xb).backward()
            m = make()
            train(m, [torch.ones(2)])
            ''')
        w = {(r["site"], r["api"]) for r in rep["wrapped"]}
        self.assertIn(("s.py:4:9", "super().__init__"), w)     # a method of the library base
        self.assertIn(("s.py:7:16", "self.fc"), w)             # an attribute set to a library object
        self.assertIn(("s.py:9:12", "Net"), w)                 # a subclass's constructor
        self.assertIn(("s.py:12:9", "model"), w)               # a parameter given library objects
        self.assertIn(("s.py:12:9", "model(xb).backward"), w)  # a method of what it returned
        self.assertNotIn("s.py:13:5", {r["site"] for r in rep["wrapped"]})  # make(): the script's
        self.assertIn('\n        __erg_call__(".backward|s.py:12:9", __erg_call__("|s.py:12:9", '
                      'model, xb).backward)\n', out)
        self.assertIn('\n        __erg_call__(".__init__|s.py:4:9", super().__init__)\n', out)
        self.assertEqual(rep["library_classes"], ["Net"])
        self.assertEqual(rep["library_functions"], ["forward", "make"])

    def test_lambdas_comprehensions_decorators_generators(self):
        out, rep = patch('''\
            import torch
            f = lambda t: torch.relu(t)
            xs = [torch.ones(i) for i in range(3)]
            total = sum(x.sum() for x in xs)
            g = torch.cat(x for x in xs)
            @torch.no_grad()
            def h(x):
                return x * 2
            print(f"{torch.ones(1)}")
            ''')
        self.assertIn('f = lambda t: __erg_call__("torch.relu|s.py:2:15", torch.relu, t)', out)
        self.assertIn('xs = [__erg_call__("torch.ones|s.py:3:7", torch.ones, i) for i in '
                      'range(3)]', out)
        self.assertIn('total = sum(__erg_call__(".sum|s.py:4:13", x.sum) for x in xs)', out)
        # a generator as the sole argument gets the parentheses it needs beside other arguments
        self.assertIn('g = __erg_call__("torch.cat|s.py:5:5", torch.cat, (x for x in xs))', out)
        self.assertIn('@__erg_call__("torch.no_grad|s.py:6:2", torch.no_grad)', out)
        self.assertIn('print(f"{torch.ones(1)}")', out)
        self.assertEqual([(s["site"], s["reason"]) for s in rep["skipped"]],
                         [("s.py:9:10", "inside an f-string")])
        ast.parse(out)

    def test_not_touched(self):
        out, rep = patch('''\
            import torch
            @torch.jit.script
            def k(x: torch.Tensor) -> torch.Tensor:
                return torch.relu(x)
            a: torch.Size = torch.Size([1])
            class C:
                y = torch.zeros(1)
            locals()
            ''')
        self.assertIn("    return torch.relu(x)\n", out)
        self.assertIn("a: torch.Size = __erg_call__(", out)
        self.assertIn("    y = __erg_call__(\"torch.zeros|s.py:7:9\", torch.zeros, 1)", out)
        self.assertIn("\nlocals()\n", out)
        self.assertIn({"site": "s.py:4:12", "api": "torch.relu",
                       "reason": "in a function compiled from its source by torch.jit.script"},
                      rep["skipped"])

    def test_header_before_a_compound_first_statement(self):
        out, rep = patch('''\
            if True:
                import torch
            ''')
        self.assertEqual(out.splitlines()[0], H.rstrip("; "))
        self.assertEqual(rep["lines_shifted"], 1)

    def test_project_only(self):
        out, rep = patch("import torch\ntorch.ones(1)\n", project=True)
        self.assertEqual(out, H.replace("start('torch')", "start('torch', project_only=True)") +
                         "import torch\ntorch.ones(1)\n")
        self.assertEqual(rep["wrapped"], [])

    def test_bad_input_raises(self):
        with self.assertRaises(instrument.BadInput) as e:
            patch("import torch\nx = (1,\n")
        self.assertRegex(str(e.exception), r"^s\.py:2:5: SyntaxError: '\(' was never closed$")
        with self.assertRaises(instrument.BadInput) as e:
            patch("import numpy\nnumpy.ones(1)\n")
        self.assertIn("does not import 'torch'", str(e.exception))


class Command(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="erg-instr-")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.d)

    def w(self, name, text):
        p = os.path.join(self.d, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def erg(self, *args):
        return ergtest.run([os.environ["ERG_BIN"], "instrument"] + list(args), cwd=self.d)

    def test_bad_inputs_exit_2(self):
        bad = self.w("bad.py", "import torch\nx = (1,\n")
        r = self.erg(bad, "-o", os.path.join(self.d, "out.py"))
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "erg instrument: %s:2:5: SyntaxError: '(' was never closed\n"
                         % bad)
        self.assertFalse(os.path.exists(os.path.join(self.d, "out.py")))
        r = self.erg(self.w("np.py", "import numpy\n"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("does not import 'torch'", r.stderr)
        r = self.erg(os.path.join(self.d, "missing.py"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.py: No such file or directory", r.stderr)
        good = self.w("good.py", "import torch\ntorch.ones(1)\n")
        r = self.erg(good, "-o", good)
        self.assertEqual(r.returncode, 2)
        self.assertIn("the output is the input", r.stderr)
        link = os.path.join(self.d, "link.py")
        os.symlink(os.path.join(self.d, "target.py"), link)
        r = self.erg(good, "-o", link)
        self.assertEqual(r.returncode, 2)
        self.assertTrue(os.path.islink(link))
        self.assertFalse(os.path.exists(os.path.join(self.d, "target.py")))
        r = self.erg(good, "--library")
        self.assertEqual(r.returncode, 2)

    def test_writes_whole_file(self):
        good = self.w("good.py", "import torch\ntorch.ones(1)\n")
        out = os.path.join(self.d, "p.py")
        r = self.erg(good, "-o", out, "--report", os.path.join(self.d, "rep.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "erg instrument: %s: 1 calls wrapped, 0 skipped\n" % good)
        with open(out) as f:
            self.assertEqual(f.read(), H + 'import torch\n__erg_call__("torch.ones|good.py:2:1", '
                             'torch.ones, 1)\n')
        self.assertEqual(sorted(os.listdir(self.d)), ["good.py", "p.py", "rep.json"])


if __name__ == "__main__":
    ergtest.main()
