# SPDX-License-Identifier: MIT
"""The erg package's thin calls: meters and windows on fake powercap trees (counters advanced in
place by the measured code, so energies, grades, states and flags are exact), the estimator, the
calculus operators on hand-computed cases, schedules, frontiers and level-1 predictions against the
erg command's own output for the same files."""
import json
import math
import os
import subprocess
import time
import unittest

import ergtest
from ergtest import FakeRoot

import erg


def cli(*args):
    cmd = [os.environ["ERG_BIN"]] + list(args)
    out = subprocess.run(cmd, capture_output=True, text=True,
                         env=ergtest.clean_env(cmd, dict(os.environ)))
    if out.returncode != 0:
        raise AssertionError(out.stderr)
    return json.loads(out.stdout)


class Windows(unittest.TestCase):
    """The measured code advances the fake counters; every interval between two readings implies
    at most about 100 W (a real counter advances continuously: a faster climb is flagged
    unit_suspect by the 1 kW plausibility bound of a package domain)."""
    def setUp(self):
        self.f = FakeRoot(dram_uj=3000000)
        self.m = erg.Meter(root=self.f.root, backends="rapl-sysfs", sampler=False)

    def tearDown(self):
        self.m.close()
        self.f.close()

    def test_channels(self):
        ids = {c["id"]: c for c in self.m.channels}
        self.assertEqual(ids["rapl-sysfs:package-0"]["grade"], "hw_shunt")
        self.assertEqual(ids["rapl-sysfs:package-0"]["kind"], "counter")
        self.assertEqual(ids["rapl-sysfs:package-0/dram"]["domain"], "dram")
        self.assertAlmostEqual(self.m.update_period_s, 1e-3)
        self.assertEqual([b["state"] for b in self.m.backends if b["name"] == "rapl-sysfs"],
                         ["found"])

    def test_nested_and_overlapping(self):
        m, f = self.m, self.f
        m.begin_window("a")
        f.advance(f.pkg, 2.0, steps=2)
        time.sleep(0.03)
        with m.window("b") as b:      # nested in a, then a ends inside b: overlapping
            f.advance(f.pkg, 3.0, steps=3)
            f.advance(f.dram, 0.5)
            time.sleep(0.04)
            a = m.end_window("a")
            f.advance(f.pkg, 1.0)
            time.sleep(0.015)
        self.assertAlmostEqual(a.total_energy_j, 5.5, places=9)
        self.assertAlmostEqual(b.result.total_energy_j, 4.5, places=9)
        ch = {c.id: c for c in a.channels}
        self.assertAlmostEqual(ch["rapl-sysfs:package-0"].energy_j, 5.0, places=9)
        self.assertAlmostEqual(ch["rapl-sysfs:package-0/dram"].energy_j, 0.5, places=9)
        for x in (a, b.result):
            self.assertEqual(x.total_grade, "hw_shunt")
            self.assertEqual(x.state, "ok")
            self.assertEqual(x.flags, [])
            self.assertEqual(x.n_total, 2)
            self.assertGreater(x.time_s, 0.015)

    def test_wrap_is_corrected_and_flagged(self):
        f = self.f
        for p in (f.pkg,):
            with open(os.path.join(os.path.dirname(p), "max_energy_range_uj"), "w") as fh:
                fh.write("99999999999\n")
        self.m.close()
        f.set(f.pkg, 99999000000)
        self.m = erg.Meter(root=f.root, backends="rapl-sysfs", sampler=False)
        with self.m.window("w") as w:
            for v in (99999800000, 600000, 1400000):   # 0.8 J, then 0.8 J across the wrap, 0.8 J
                time.sleep(0.01)
                f.set(f.pkg, v)
                self.m.poll()
        pkg = [c for c in w.result.channels if c.id == "rapl-sysfs:package-0"][0]
        self.assertAlmostEqual(pkg.energy_j, 2.4, places=9)
        self.assertEqual(pkg.flags, ["wrap_corrected"])
        self.assertIn("wrap_corrected", w.result.flags)

    def test_short_window_gets_no_figure(self):
        with self.m.window("short") as w:
            pass
        pkg = [c for c in w.result.channels if c.id == "rapl-sysfs:package-0"][0]
        if w.result.time_s < 1e-3:
            self.assertEqual(pkg.state, "below_resolution")
            self.assertTrue(math.isnan(pkg.energy_j))
            self.assertTrue(math.isnan(w.result.total_energy_j))
        else:  # the machine paused this thread for a millisecond: a real, zero figure
            self.assertEqual(pkg.state, "ok")

    def test_decorators(self):
        f = self.f

        @erg.measure("step", meter=self.m)
        def step(j):
            f.advance(f.pkg, j)
            time.sleep(0.02)
            return j * 2

        self.assertEqual(step(1.5), 3.0)
        self.assertEqual(step(0.25), 0.5)
        self.assertEqual([round(x.total_energy_j, 9) for x in step.measurements], [1.5, 0.25])
        self.assertEqual([x.name for x in step.measurements], ["step", "step"])

        @self.m.window("rec")
        def rec(n):
            f.advance(f.pkg, 1.0)
            time.sleep(0.012)
            return 0 if n == 0 else 1 + rec(n - 1)
        self.assertEqual(rec(2), 2)
        # three nested windows: the innermost saw 1 J, the outermost all 3 J
        self.assertEqual(sorted(round(x.total_energy_j, 9) for x in rec.measurements),
                         [1.0, 2.0, 3.0])

    def test_window_errors_are_the_c_apis(self):
        self.m.begin_window("x")
        with self.assertRaises(erg.ErgError) as e:
            self.m.begin_window("x")
        self.assertEqual(e.exception.name, "ERG_EINVAL")
        self.assertIn("already open", str(e.exception))
        with self.assertRaises(erg.ErgError):
            self.m.end_window("never-opened")
        with self.assertRaises(erg.ErgError):
            self.m.begin_window("n" * 64)
        self.m.cancel_window("x")
        with self.assertRaises(erg.ErgError):
            self.m.end_window("x")

    def test_snapshots_and_summary(self):
        f, m = self.f, self.m
        runs = []
        for j in (5.0, 7.0):
            a = m.snapshot()
            f.advance(f.pkg, j, steps=int(j))
            time.sleep(0.08)
            runs.append(m.diff(a, m.snapshot()))
        s = erg.summarize(runs, baseline="fixed", fixed_w=10.0)
        self.assertEqual(s.runs, 2)
        self.assertAlmostEqual(s.energy_j[0], 6.0, places=9)
        self.assertAlmostEqual(s.energy_j[1], math.sqrt(2.0), places=9)
        t = (runs[0].time_s + runs[1].time_s) / 2
        self.assertAlmostEqual(s.net_energy_j[0], 6.0 - 10.0 * t, places=9)

    def test_bad_root(self):
        with self.assertRaises(erg.ErgError) as e:
            erg.Meter(root="/nonexistent/erg-root", backends="rapl-sysfs")
        self.assertIn(e.exception.name, ("ERG_ENOENT", "ERG_ENODEV"))
        with self.assertRaises(erg.ErgError) as e:
            erg.Meter(backends="bogus")
        self.assertEqual(e.exception.name, "ERG_EINVAL")


class Protocol(unittest.TestCase):
    """erg measure's repetition protocol (erg_protocol_run) for a Python callable, on a fake RAPL
    counter the callable advances: every figure is exact."""

    def setUp(self):
        self.f = FakeRoot()
        self.m = erg.Meter(root=self.f.root, backends="rapl-sysfs", sampler=False)

    def tearDown(self):
        self.m.close()
        self.f.close()

    def test_runs_warmup_and_signature(self):
        f = self.f
        calls = []

        def work():
            calls.append(1)
            f.advance(f.pkg, 1.0)
            time.sleep(0.02)      # 1 J over 20 ms: 50 W
        r = erg.protocol(work, meter=self.m, runs=3, warmup=1)
        self.assertEqual(len(calls), 4)                 # the warm-up run is not measured
        self.assertEqual((r.stop_status, r.runs_requested, r.runs_ok), (0, 3, 3))
        self.assertEqual([x["repetitions"] for x in r.runs], [1, 1, 1])
        for x in r.runs:
            self.assertAlmostEqual(x["energy_j"], 1.0, places=9)
            self.assertEqual(x["grade"], "hw_shunt")
        self.assertAlmostEqual(r.summary.energy_j[0], 1.0, places=9)
        self.assertAlmostEqual(r.summary.energy_j[1], 0.0, places=9)
        self.assertEqual(r.summary.total_ids, ["rapl-sysfs:package-0"])
        self.assertEqual(r.baseline, "none")
        sig = r.signature()
        self.assertEqual(sig.name, "work")
        self.assertAlmostEqual(sig.energy_j, 1.0, places=9)
        self.assertEqual(sig.runs, 3)

    def test_short_work_is_repeated(self):
        f = self.f

        def work():
            f.advance(f.pkg, 0.1)
            time.sleep(0.004)     # 0.1 J over 4 ms: 25 W
        r = erg.protocol(work, meter=self.m, runs=2, min_window_s=0.02)
        for x in r.runs:
            # repeated until the window lasts 20 ms (how often depends on how long the sleeps
            # took on this machine), then divided: energy per repetition is exact
            self.assertGreaterEqual(x["repetitions"] * x["time_s"], 0.02 * (1 - 1e-9))
            self.assertAlmostEqual(x["energy_j"], 0.1, places=9)

    def test_failures_and_bad_options(self):
        f = self.f
        n = []

        def work():
            n.append(1)
            f.advance(f.pkg, 0.5)
            time.sleep(0.01)
            if len(n) == 2:
                raise RuntimeError("second run fails")
        r = erg.protocol(work, meter=self.m, runs=3)
        self.assertEqual(r.runs_ok, 2)
        self.assertEqual([x["status"] for x in r.runs], [0, 1, 0])
        self.assertEqual([str(e) for e in r.errors], ["second run fails"])
        self.assertAlmostEqual(r.summary.energy_j[0], 0.5, places=9)
        with self.assertRaises(erg.ErgError) as e:
            erg.protocol(work, meter=self.m, runs=0)
        self.assertEqual(e.exception.name, "ERG_EINVAL")
        with self.assertRaises(ValueError):
            erg.protocol(work, meter=self.m, stable=True)


class Estimator(unittest.TestCase):
    def test_constant_power_model(self):
        # P_idle = P_full = 20 W: the estimator's power is 20 W whatever the load (Fan et al. Eq. 1)
        f = FakeRoot()
        try:
            m = erg.Meter(root=f.root, backends="estimator", estimator_idle_w=20.0,
                          estimator_full_w=20.0)
            with m.window("sleep") as w:
                time.sleep(0.05)
            r = w.result
            self.assertEqual(r.total_grade, "estimator")
            self.assertEqual(r.state, "ok")
            self.assertAlmostEqual(r.total_energy_j, 20.0 * r.time_s, delta=20.0 * 1e-6)
            m.close()
        finally:
            f.close()


class Calculus(unittest.TestCase):
    def test_operators_hand_computed(self):
        a = erg.Signature(10.0, 1.0, 5.0, 0.01, 2.0, device="cpu")
        b = erg.Signature(10.0, 2.0, 3.0, 0.04, 5.0, device="cpu")
        s = erg.seq(a, b)          # E = 15 + 23, T = 3, d = 8, σ² add
        self.assertAlmostEqual(s.energy_j, 38.0)
        self.assertAlmostEqual(s.time_s, 3.0)
        self.assertAlmostEqual(s.dynamic_energy_j, 8.0)
        self.assertAlmostEqual(s.energy_var_j2, 7.0)
        self.assertAlmostEqual(s.static_power_w, 10.0)
        p = erg.par(erg.Signature(100.0, 1.0, 10.0), erg.Signature(100.0, 2.0, 20.0))
        self.assertAlmostEqual(p.energy_j, 100.0 * 2.0 + 30.0)
        mu = erg.multi(erg.Signature(50.0, 1.0, 5.0, device="a"),
                       erg.Signature(100.0, 2.0, 10.0, device="b"))
        self.assertAlmostEqual(mu.energy_j, 150.0 * 2.0 + 15.0)
        # the install test's case: two 120 W, 2.77 ms kernels in parallel: 0.3324 J static
        q = erg.par([erg.Signature(120.0, 2.77e-3)] * 2)
        self.assertAlmostEqual(q.static_power_w * q.time_s, 0.3324)
        i = erg.idle("gpu", 40.0, 0.5)
        self.assertAlmostEqual(i.energy_j, 20.0)
        with self.assertRaises(erg.ErgError):
            erg.par(erg.Signature(100.0, 1.0, 1.0), erg.Signature(90.0, 1.0, 1.0))
        with self.assertRaises(erg.ErgError) as e:   # Axiom M1: σ²_E < s²σ²_T
            erg.Signature(10.0, 1.0, 1.0, 1.0, 1.0).check()
        self.assertEqual(e.exception.name, "ERG_EINVAL")

    def test_flags_by_name_and_union(self):
        a = erg.Signature(10.0, 1.0, 5.0, device="cpu", flags=["stale"])
        b = erg.Signature(10.0, 2.0, 3.0, device="cpu", flags=["wrap_corrected", "stale"])
        c = erg.Signature(20.0, 1.0, 1.0, device="gpu")
        self.assertEqual(erg.seq(a, b).flags, ["wrap_corrected", "stale"])
        self.assertEqual(erg.par(a, b).flags, ["wrap_corrected", "stale"])
        self.assertEqual(erg.multi(erg.seq(a, b), c).flags, ["wrap_corrected", "stale"])
        self.assertEqual(erg.multi(c, erg.idle("cpu", 10.0, 1.0)).flags, [])
        with self.assertRaises(ValueError) as e:
            erg.seq(erg.Signature(10.0, 1.0, 5.0, flags=["saturated"]), a)
        self.assertIn("saturated", str(e.exception))

    def test_schedule_file_matches_the_cli(self):
        path = os.path.join(ergtest.SRC, "examples", "attention-layer.json")
        r = erg.Schedule.read(path).compose()
        c = cli("compose", path, "--json")
        # the command prints 12 significant digits
        for k in ("energy_j", "energy_sd_j", "time_s", "bias_bound_j"):
            self.assertAlmostEqual(getattr(r, k), c[k], delta=abs(c[k]) * 1e-10)
        self.assertEqual(r.grade, c["grade"])
        for x, y in zip(r.interval_j, c["interval_j"]):
            self.assertAlmostEqual(x, y, delta=abs(y) * 1e-10)

    def test_schedule_built_and_deviation(self):
        s = erg.Schedule()
        s.add_device("gpu", 100.0)
        s.add_signature(erg.Signature(100.0, 1.0, 10.0, name="k1", device="gpu"))
        s.add_signature(erg.Signature(100.0, 2.0, 20.0, name="k2", device="gpu"))
        s.add_node("a", "k1").add_node("b", "k2").add_edge("a", "b")
        r = s.compose(measured_j=330.0, measured_sd_j=1.0)
        self.assertAlmostEqual(r.energy_j, 100.0 * 3.0 + 30.0)
        self.assertAlmostEqual(r.time_s, 3.0)
        self.assertFalse(r.deviation["detected"])
        self.assertTrue(s.compose(measured_j=400.0, measured_sd_j=1.0).deviation["detected"])
        with self.assertRaises(erg.ErgError):
            s.add_edge("a", "nowhere")

    def test_bad_file_names_where(self):
        with self.assertRaises(erg.ErgError) as e:
            erg.read_signature("/nonexistent/sig.json")
        self.assertEqual(e.exception.name, "ERG_ENOENT")


class Frontier(unittest.TestCase):
    def test_pareto_min(self):
        idx = erg.pareto_min([2.0, 4.0, 3.0, 5.0], [11.0, 10.0, 9.0, 8.0])
        self.assertEqual(idx.tolist(), [0, 2, 3])

    def test_sequence_frontier_hand_computed(self):
        # s = 1 W; A: (T 1, d 5), (T 2, d 2); B: (T 1, d 4), (T 3, d 1). Plans (T, E = T + Σd):
        # (2, 11), (3, 9), (4, 10), (5, 8): the frontier keeps (2, 11), (3, 9), (5, 8).
        os_ = erg.OperatingSchedule()
        os_.add_device("cpu", 1.0)
        for el, pts in (("A", ((1, 5), (2, 2))), ("B", ((1, 4), (3, 1)))):
            for t, d in pts:
                os_.add_point(el, erg.Signature(1.0, t, d, device="cpu"))
        os_.combine("seq", os_.leaf("A"), os_.leaf("B"))
        fr = os_.frontier()
        self.assertEqual(fr.time_s.tolist(), [2.0, 3.0, 5.0])
        self.assertEqual(fr.energy_j.tolist(), [11.0, 9.0, 8.0])
        self.assertEqual(fr.method, "exact")
        self.assertEqual(fr.choices.tolist(), [[0, 0], [1, 0], [1, 1]])
        self.assertEqual(fr.element_names, ["A", "B"])


class Predict(unittest.TestCase):
    def test_matches_the_cli(self):
        path = os.path.join(ergtest.SRC, "models", "cpu-amd-epyc.json")
        m = erg.OpModel(path)
        p = m.predict("gemm", m=64, n=64, k=64)
        c = cli("predict", "op", "gemm", "--m", "64", "--n", "64", "--k", "64", "--json",
                "--model", path)
        # the command prints 9 significant digits
        self.assertAlmostEqual(p.time_s, c["time_s"], delta=c["time_s"] * 1e-8)
        self.assertAlmostEqual(p.energy_j, c["energy_j"], delta=c["energy_j"] * 1e-8)
        self.assertEqual(p.method, c["method"])
        self.assertEqual(p.grade, c["grade"])
        sig = m.signature("gemm", static_power_w=0.0, m=64, n=64, k=64)
        self.assertAlmostEqual(sig.energy_j, p.energy_j, delta=1e-15)
        with self.assertRaises(ValueError):
            m.predict("conv", m=1)
        with self.assertRaises(erg.ErgError):
            erg.OpModel("/nonexistent/model.json")


if __name__ == "__main__":
    ergtest.main()
