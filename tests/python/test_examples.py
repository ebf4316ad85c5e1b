# SPDX-License-Identifier: MIT
"""The examples (examples/python: an MLP, a small CNN, a tiny transformer LM trained and sampled)
end to end with Debian's python3-torch on the CPU (each run forked from this interpreter, which
imported torch once; the failure and --stable cases run real processes): patched by `erg instrument` and run under
`python3 -m erg.run`, each must print exactly what the original prints; the records must obey the
meter. On a fake tree whose estimator has P_idle = P_full = 20 W, every figure is 20 W × its
window's time, so each record is checked exactly; on a fake RAPL counter that only the measured
layer advances (1 J per call), the layer's record, the project's and FECoM's RQ1 check are exact
and hw_shunt. Energy on this machine is estimator grade: it has no counters."""
import json
import os
import shutil
import tempfile
import textwrap
import unittest

import ergtest
from ergtest import EXAMPLES, PYTHON, FakeRoot, forkrun, run

ergtest.require_torch()
import torch  # noqa: E402,F401  (once, for every forked run: see ergtest.forkrun)

ERG = os.environ["ERG_BIN"]
CASES = {"mlp": "2", "cnn": "1", "transformer": "20"}


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


class Examples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.mkdtemp(prefix="erg-examples-")
        cls.fake = FakeRoot()
        cls.env = {"ERG_ROOT": cls.fake.root, "ERG_BACKENDS": "estimator",
                   "ERG_ESTIMATOR_IDLE_W": "20", "ERG_ESTIMATOR_FULL_W": "20"}
        cls.out = {}
        for name, arg in CASES.items():
            src = os.path.join(EXAMPLES, name + ".py")
            orig = forkrun([src, arg])
            patched = os.path.join(cls.d, name + "_patched.py")
            ins = run([ERG, "instrument", src, "-o", patched, "-q"])
            calls_p = os.path.join(cls.d, name + ".patched.jsonl")
            p = forkrun([patched, arg], env=dict(cls.env, ERG_CALLS=calls_p), cwd=cls.d)
            calls_r = os.path.join(cls.d, name + ".run.jsonl")
            r = forkrun(["-m", "erg.run", "--out", calls_r, src, arg], env=cls.env, cwd=cls.d)
            cls.out[name] = (orig, ins, p, calls_p, r, calls_r)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.d, ignore_errors=True)
        cls.fake.close()

    def check_records(self, recs, mode):
        self.assertEqual(sum(r["api"] == "<project>" for r in recs), 1)
        inst = [r for r in recs if r["api"] == "<instrumentation>"]
        self.assertEqual(len(inst), 1)
        self.assertGreater(inst[0]["calls"], 10)
        figures = 0
        for r in recs:
            self.assertEqual(r["grade"], "estimator")
            self.assertEqual(r.get("mode"), mode)
            if r["energy_j"] is None:
                if r["api"] != "<instrumentation>":
                    # no figure is made up below the estimator's update period (10 ms)
                    self.assertLess(r["time_s"], 0.01, r)
                    self.assertEqual(r["state"], "below_resolution")
                continue
            figures += 1
            self.assertGreaterEqual(r["time_s"], 0.01)
            self.assertAlmostEqual(r["energy_j"], 20.0 * r["time_s"],
                                   delta=1e-9 * r["energy_j"] + 1e-9, msg=r)
            self.assertEqual(r["net_energy_j"], r["energy_j"])   # no calibration: no baseline
            self.assertEqual(r["state"], "ok")
            self.assertAlmostEqual(r["energy_per_call_j"] * r["calls"], r["energy_j"])
        # time adds up: the outermost calls' windows and the instrumentation's own time outside
        # them are disjoint parts of the project's time (a nested call's wrapper runs inside its
        # parent's window and is in that window's time already)
        project = [r for r in recs if r["api"] == "<project>"][0]
        outer = sum(r["time_s"] for r in recs if r["api"][0] != "<" and not r.get("nested"))
        self.assertLessEqual(outer + inst[0]["time_s"], project["time_s"] + 1e-3,
                             (outer, inst[0]["time_s"], project["time_s"]))
        self.assertGreater(inst[0]["overhead_per_call_s"], 0)
        # the project record always has one (the script runs for seconds); how many API groups
        # reach the meter's update period depends on the host's speed, so it is not asserted
        self.assertGreaterEqual(figures, 1)

    def report(self, path):
        rep = run([ERG, "report", path, "--json"])
        self.assertEqual(rep.returncode, 0, rep.stderr)
        return json.loads(rep.stdout)

    def test_same_output_patched_and_runtime(self):
        for name in CASES:
            orig, ins, p, _, r, _ = self.out[name]
            with self.subTest(example=name):
                self.assertEqual(orig.returncode, 0, orig.stderr)
                self.assertEqual(ins.returncode, 0, ins.stderr)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(p.stdout, orig.stdout)
                self.assertEqual(r.stdout, orig.stdout)
                self.assertTrue(orig.stdout.strip())

    def test_patched_records(self):
        for name in CASES:
            with self.subTest(example=name):
                recs = records(self.out[name][3])
                self.check_records(recs, "patched")
                apis = {r["api"] for r in recs}
                rep = self.report(self.out[name][3])
                self.assertTrue(rep["rq1"]["holds"])
                self.assertLessEqual(rep["rq1"]["sum_j"], rep["rq1"]["project_j"])
                if name == "mlp":
                    # made by nn.Module subclasses, returned by the script's make_model() and
                    # passed into train(model, loader, ...) (FECoM missed the last two)
                    self.assertTrue({"MLP", "MLP.__call__", "torch.optim.SGD",
                                     "torch.optim.SGD.step", "torch.optim.SGD.zero_grad",
                                     "torch.Tensor.backward", "torch.nn.CrossEntropyLoss",
                                     "torch.nn.CrossEntropyLoss.__call__",
                                     "torch.utils.data.DataLoader"} <= apis, apis)
                    calls = {r["api"]: r["calls"] for r in recs if not r.get("nested")}
                    self.assertEqual(calls["torch.optim.SGD.step"], 2 * 8)   # 2 epochs × 8 batches
                if name == "transformer":
                    self.assertTrue({"TinyLM", "TinyLM.__call__", "torch.optim.AdamW.step",
                                     "torch.nn.functional.cross_entropy"} <= apis, apis)

    def test_runtime_records(self):
        for name in CASES:
            with self.subTest(example=name):
                recs = records(self.out[name][5])
                self.check_records(recs, "runtime")
                apis = {(r["api"], r.get("nested")) for r in recs}
                self.assertIn(("torch.Tensor.backward", False), apis)
                self.assertIn(("torch.nn.Linear.forward", True), apis)
                self.assertIn(("torch.nn.functional.linear", True), apis)
                rep = self.report(self.out[name][5])
                self.assertTrue(rep["rq1"]["holds"])
                if name == "mlp":
                    fwd = [r for r in recs if r["api"] == "MLP.forward" and not r["nested"]]
                    self.assertEqual(sum(r["calls"] for r in fwd), 2 * 8 + 1)
                    self.assertEqual({r["shapes"] for r in fwd},
                                     {"float32[64, 20]", "float32[512, 20]"})
                    self.assertEqual({r["arg_bytes"] for r in fwd}, {64 * 20 * 4, 512 * 20 * 4})


class Failures(unittest.TestCase):
    """A script that raises keeps its own traceback and exit status, and the records so far."""

    def test_raising_script(self):
        d = tempfile.mkdtemp(prefix="erg-raise-")
        try:
            src = os.path.join(d, "boom.py")
            with open(src, "w") as f:
                f.write(textwrap.dedent('''\
                    import torch
                    x = torch.ones(3)
                    print("before", x.sum().item())
                    y = torch.zeros(2) + x
                    print("not reached")
                    '''))
            orig = run([PYTHON, src], cwd=d)
            self.assertEqual(orig.returncode, 1)
            patched = os.path.join(d, "boom_patched.py")
            self.assertEqual(run([ERG, "instrument", src, "-o", patched, "-q"]).returncode, 0)
            for mode, cmd in (("patched", [patched]), ("runtime", ["-m", "erg.run", src])):
                with self.subTest(mode=mode):
                    calls = os.path.join(d, mode + ".jsonl")
                    r = forkrun(cmd, env={"ERG_CALLS": calls, "ERG_BACKENDS": "estimator"},
                                cwd=d)
                    self.assertEqual(r.returncode, 1)
                    self.assertEqual(r.stdout, orig.stdout)
                    self.assertEqual(r.stderr.splitlines()[-1], orig.stderr.splitlines()[-1])
                    self.assertIn('line 4, in <module>', r.stderr)
                    recs = records(calls)
                    apis = {x["api"] for x in recs}
                    self.assertIn("<project>", apis)
                    self.assertIn("torch.zeros", apis)
                    self.assertIn("torch.Tensor.sum", apis)
            # erg.run, a real process: its stderr is exactly the original's
            r = run([PYTHON, "-m", "erg.run", src], env={"ERG_CALLS": os.path.join(d, "x.jsonl"),
                                                          "ERG_BACKENDS": "estimator"}, cwd=d)
            self.assertEqual(r.stderr.replace(src, "boom.py"),
                             orig.stderr.replace(src, "boom.py"))
        finally:
            shutil.rmtree(d)


class Outputs(unittest.TestCase):
    """An output erg.run cannot write is said in one line, exit 2: before the program runs when
    its folder is missing, and after it (records lost, the program's output kept) when the write
    itself fails; never a traceback of erg's."""

    def test_unwritable_outputs(self):
        d = tempfile.mkdtemp(prefix="erg-out-")
        try:
            src = os.path.join(d, "ok.py")
            with open(src, "w") as f:
                f.write("import torch\nprint('sum', torch.ones(2).sum().item())\n")
            env = {"ERG_BACKENDS": "estimator"}
            for extra in ([], ["-r", "2"]):
                with self.subTest(case="missing folder", extra=extra):
                    out = os.path.join(d, "no-such-folder", "c.jsonl")
                    r = run([PYTHON, "-m", "erg.run", "--out", out] + extra + [src], env=env,
                            cwd=d)
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertEqual(r.stdout, "")          # nothing run
                    self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
                    self.assertIn("no-such-folder", r.stderr)
                    self.assertNotIn("Traceback", r.stderr)
                if os.path.exists("/proc/version"):         # a file whose writes fail (EIO/EACCES)
                    with self.subTest(case="write fails", extra=extra):
                        r = run([PYTHON, "-m", "erg.run", "--out", "/proc/version"] + extra
                                + [src], env=env, cwd=d)
                        self.assertEqual(r.returncode, 2, r.stderr)
                        self.assertEqual(r.stdout, "sum 2.0\n" * (2 if extra else 1))
                        self.assertNotIn("Traceback", r.stderr)
                        self.assertIn("/proc/version: records not written", r.stderr)
        finally:
            shutil.rmtree(d)


class Interrupted(unittest.TestCase):
    """Ctrl-C: the records so far are written and erg.run dies of SIGINT as the program does
    without it (a shell sees 130 and stops its loop), with -r N too."""

    def test_ctrl_c(self):
        import signal
        import subprocess
        d = tempfile.mkdtemp(prefix="erg-int-")
        try:
            src = os.path.join(d, "ctrlc.py")
            with open(src, "w") as f:
                f.write(textwrap.dedent('''\
                    import os, signal, time
                    import torch
                    x = torch.ones(3)
                    print("before", x.sum().item(), flush=True)
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(30)
                    '''))
            env = dict(os.environ, PYTHONPATH=ergtest.PYDIR, ERG_BACKENDS="estimator")

            def go(cmd):
                return subprocess.run(cmd, env=env, cwd=d, capture_output=True, text=True,
                                      timeout=300, preexec_fn=lambda: signal.signal(
                                          signal.SIGINT, signal.SIG_DFL))
            orig = go([PYTHON, src])
            self.assertEqual(orig.returncode, -signal.SIGINT, orig.stderr)
            for extra in ([], ["-r", "2"]):
                with self.subTest(extra=extra):
                    calls = os.path.join(d, "c%d.jsonl" % len(extra))
                    r = go([PYTHON, "-m", "erg.run", "--out", calls] + extra + [src])
                    self.assertEqual(r.returncode, -signal.SIGINT, r.stderr)
                    self.assertEqual(r.stdout, orig.stdout)
                    self.assertEqual(r.stderr.splitlines()[-1], "KeyboardInterrupt")
                    apis = {x["api"] for x in records(calls)}
                    self.assertIn("<project>", apis)
                    self.assertIn("torch.ones", apis)
        finally:
            shutil.rmtree(d)


BURNER = '''\
import os
import time
import torch

P = os.environ["FAKE_COUNTER"]


def bump(uj):
    """The fake RAPL counter advances by uj, rewritten in place as hardware does."""
    with open(P, "r+") as f:
        v = int(f.read())
        f.seek(0)
        f.write("%020d\\n" % (v + uj))


bump(1)   # a live counter never stands still


class Burner(torch.nn.Module):
    def forward(self, x):
        bump(1000000)       # 1 J ...
        time.sleep(0.02)    # ... over 20 ms: 50 W
        return x * 2


m = Burner()
for i in range(3):
    print(m(torch.ones(2)).sum().item())
'''


class Hardware(unittest.TestCase):
    """A hw_shunt counter (fake RAPL) that only the measured layer advances."""

    def test_layer_energy_and_rq1_exact(self):
        d = tempfile.mkdtemp(prefix="erg-hw-")
        f = FakeRoot()
        try:
            src = os.path.join(d, "burner.py")
            with open(src, "w") as fh:
                fh.write(BURNER)
            patched = os.path.join(d, "burner_patched.py")
            self.assertEqual(run([ERG, "instrument", src, "-o", patched, "-q"]).returncode, 0)
            env = {"ERG_ROOT": f.root, "ERG_BACKENDS": "rapl-sysfs", "FAKE_COUNTER": f.pkg}
            for mode, cmd, api in (("patched", [patched], "Burner.__call__"),
                                   ("runtime", ["-m", "erg.run", src], "Burner.forward")):
                with self.subTest(mode=mode):
                    calls = os.path.join(d, mode + ".jsonl")
                    r = forkrun(cmd, env=dict(env, ERG_CALLS=calls), cwd=d)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual(r.stdout, "4.0\n4.0\n4.0\n")
                    recs = records(calls)
                    b = [x for x in recs if x["api"] == api]
                    self.assertEqual(len(b), 1, recs)
                    b = b[0]
                    self.assertEqual(b["calls"], 3)
                    self.assertAlmostEqual(b["energy_j"], 3.0, places=9)
                    self.assertEqual(b["grade"], "hw_shunt")
                    self.assertEqual(b["flags"], [])
                    self.assertEqual(b["state"], "ok")
                    self.assertAlmostEqual(b["channels"]["rapl-sysfs:package-0"]["energy_j"], 3.0,
                                           places=9)
                    proj = [x for x in recs if x["api"] == "<project>"][0]
                    self.assertAlmostEqual(proj["energy_j"], 3.000001, places=9)
                    self.assertEqual(proj["grade"], "hw_shunt")
                    rep = json.loads(run([ERG, "report", calls, "--json"]).stdout)
                    self.assertAlmostEqual(rep["rq1"]["sum_j"], 3.0, places=9)
                    self.assertAlmostEqual(rep["rq1"]["project_j"], 3.000001, places=9)
                    self.assertTrue(rep["rq1"]["holds"])
                    # machine-wide meters, no calibration: net is the gross energy, and said so
                    self.assertEqual(proj["scope"], "machine")
                    self.assertEqual(proj["baseline"], "none")
                    self.assertEqual(rep["rq1"]["scope"], {"scope": "machine", "baseline": "none"})
                    f.set(f.pkg, 1000000)
        finally:
            shutil.rmtree(d)
            f.close()


class Stable(unittest.TestCase):
    def test_stable_repetitions(self):
        d = tempfile.mkdtemp(prefix="erg-stable-")
        f = FakeRoot()
        try:
            src = os.path.join(d, "tiny.py")
            with open(src, "w") as fh:
                fh.write("import time\nimport torch\nx = torch.ones(4)\ntime.sleep(0.05)\n"
                         "print(torch.mm(x[None], x[:, None]).item())\n")
            out = os.path.join(d, "calls.jsonl")
            cal = os.path.join(d, "cal.json")
            with open(cal, "w") as fh:   # at rest: 20 W, power CV 5 % (FECoM's stable state)
                fh.write('{"erg": "calibration/1", "duration_s": 1, "window_s": 0.02, '
                         '"idle_power_w": 20.0, "channels": [{"id": "estimator:cpu", '
                         '"idle_power_w": 20.0, "cv": 0.05}]}\n')
            env = {"ERG_ROOT": f.root, "ERG_BACKENDS": "estimator", "ERG_ESTIMATOR_IDLE_W": "20",
                   "ERG_ESTIMATOR_FULL_W": "20", "XDG_CACHE_HOME": d}
            r = run([PYTHON, "-m", "erg.run", "--stable", "-r", "2", "--cooldown", "0.1",
                     "--calibration", cal, "--stable-timeout", "30", "--out", out, src],
                    env=env, cwd=d)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "4.0\n4.0\n")
            recs = records(out)
            proj = [x for x in recs if x["api"] == "<project>"][0]
            self.assertEqual(proj["runs"], 2)
            self.assertEqual([s["stable"] for s in proj["stability"]], [True, True])
            self.assertEqual([s["exit_status"] for s in proj["stability"]], [0, 0])
            # constant 20 W, calibrated at 20 W: the baseline is all of it, net energy 0
            self.assertAlmostEqual(proj["baseline_w"], 20.0, places=6)
            self.assertEqual((proj["scope"], proj["baseline"]), ("machine", "calibrated"))
            self.assertAlmostEqual(proj["net_energy_j"], 0.0, delta=1e-6 * proj["energy_j"])
            self.assertGreaterEqual(proj["energy_sd_runs_j"], 0.0)
            bad = run([PYTHON, "-m", "erg.run", "-r", "0", src], env=env, cwd=d)
            self.assertEqual(bad.returncode, 2)
            bad = run([PYTHON, "-m", "erg.run", os.path.join(d, "missing.py")], env=env, cwd=d)
            self.assertEqual(bad.returncode, 2)
        finally:
            shutil.rmtree(d)
            f.close()


if __name__ == "__main__":
    ergtest.main()
