# SPDX-License-Identifier: MIT
"""erg report on hand-made records: the per-API table, FECoM's RQ1 verdict on both sides of the
stated uncertainty, RQ2's least-squares line and Pearson r on points computed by hand, the SVG
plots, and bad input (exit 2, file:line)."""
import json
import math
import os
import shutil
import tempfile
import unittest

import ergtest
from ergtest import run

ERG = os.environ["ERG_BIN"]


def rec(api, energy, time_s=1.0, calls=1, nbytes=0, site="s.py:1", nested=False, sd=0.0,
        net=None, grade="hw_shunt", channels=None):
    return {"api": api, "site": site, "calls": calls, "time_s": time_s, "energy_j": energy,
            "net_energy_j": energy if net is None else net, "grade": grade, "flags": [],
            "arg_bytes": nbytes, "nested": nested, "sd_j": sd,
            "channels": channels or {"rapl-sysfs:package-0": {"energy_j": energy,
                                                              "net_energy_j": energy}}}


class Report(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="erg-report-")

    def tearDown(self):
        shutil.rmtree(self.d)

    def write(self, recs, name="calls.jsonl"):
        p = os.path.join(self.d, name)
        with open(p, "w") as f:
            for r in recs:
                f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
        return p

    def report(self, path, *extra):
        r = run([ERG, "report", path, "--json"] + list(extra))
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_rq1_holds_and_fails(self):
        # APIs 6 J (sd 0.3) + 3 J (sd 0.4) = 9 J, sd sqrt(0.09 + 0.16 + 0) = 0.5; a nested call's
        # 2 J is inside its parent and not summed
        base = [rec("torch.mm", 6.0, sd=0.3), rec("torch.relu", 3.0, sd=0.4),
                rec("torch.add", 2.0, nested=True, sd=10.0)]
        # project 8.1 J: 9 − 8.1 = 0.9 ≤ 1.96 × 0.5 = 0.98: holds
        j = self.report(self.write(base + [rec("<project>", 8.1, time_s=3.0)]))
        self.assertAlmostEqual(j["rq1"]["sum_j"], 9.0)
        self.assertAlmostEqual(j["rq1"]["sd_j"], 0.5)
        self.assertAlmostEqual(j["rq1"]["project_j"], 8.1)
        self.assertTrue(j["rq1"]["holds"])
        # project 8.0 J: 1.0 > 0.98: the sum exceeds the project beyond its uncertainty
        j = self.report(self.write(base + [rec("<project>", 8.0, time_s=3.0)]))
        self.assertFalse(j["rq1"]["holds"])
        apis = {(a["api"], a["nested"]): a for a in j["apis"]}
        self.assertAlmostEqual(apis[("torch.mm", False)]["share"], 6.0 / 8.0)
        self.assertEqual(apis[("torch.add", True)]["calls"], 1)
        self.assertEqual([a["api"] for a in j["apis"]], ["torch.mm", "torch.relu", "torch.add"])

    def test_table_sums_keys_and_says_what_has_no_figure(self):
        j = self.report(self.write([
            rec("torch.mm", 1.5, calls=10, time_s=0.5, site="a.py:3"),
            rec("torch.mm", 2.5, calls=30, time_s=1.5, site="a.py:9", net=2.0,
                channels={"rapl-sysfs:package-0": {"energy_j": 2.5, "net_energy_j": 2.0}}),
            rec("torch.mm", None, calls=4, time_s=1e-4, site="a.py:12"),
            rec("<project>", 10.0, time_s=5.0)]))
        a = j["apis"][0]
        self.assertEqual(a["calls"], 44)
        self.assertEqual(a["calls_without_figure"], 4)
        self.assertAlmostEqual(a["energy_j"], 4.0)
        self.assertAlmostEqual(a["net_energy_j"], 3.5)
        self.assertAlmostEqual(a["channels"]["rapl-sysfs:package-0"], 3.5)
        self.assertEqual(a["sites"], ["a.py:3", "a.py:9", "a.py:12"])
        text = run([ERG, "report", os.path.join(self.d, "calls.jsonl")]).stdout
        self.assertIn("torch.mm", text)
        self.assertIn("35.0%", text)
        # the stated error beside each figure: sd of the sum, root sum of squares (0.3, 0.4)
        j = self.report(self.write([
            rec("torch.mm", 1.5, site="a.py:3", sd=0.3), rec("torch.mm", 2.5, site="a.py:9", sd=0.4),
            rec("torch.relu", None, calls=3, time_s=1e-4, sd=None),
            rec("<project>", 10.0, time_s=5.0)], "sd.jsonl"))
        apis = {a["api"]: a for a in j["apis"]}
        self.assertAlmostEqual(apis["torch.mm"]["sd_j"], 0.5)
        self.assertIsNone(apis["torch.relu"]["net_energy_j"])
        self.assertIsNone(apis["torch.relu"]["sd_j"])      # no figure: null, never 0
        lines = run([ERG, "report", os.path.join(self.d, "sd.jsonl")]).stdout.splitlines()
        self.assertEqual(lines[0].split()[:6],
                         ["api", "calls", "no", "fig.", "time_s", "net_energy_j"])
        self.assertEqual(lines[0].split()[6], "sd_j")
        mm = [ln.split() for ln in lines if ln.startswith("torch.mm")][0]
        self.assertEqual(mm[4:6], ["4", "0.5"])
        relu = [ln.split() for ln in lines if ln.startswith("torch.relu")][0]
        self.assertEqual(relu[4:6], ["-", "-"])
        self.assertIn("RQ1 (FECoM Eq. 1): sum of outermost API calls 3.5 J, project 10 J", text)

    def test_instrumentation_time_and_cost_per_call(self):
        # 100 calls, 10 of them outermost: 0.02 s outside every window, 80 us per wrapper
        inst = {"api": "<instrumentation>", "site": "s.py", "calls": 100, "time_s": 0.02,
                "energy_j": None, "net_energy_j": None, "grade": "estimator", "flags": [],
                "arg_bytes": 0, "state": "time_only", "overhead_per_call_s": 8e-5}
        p = self.write([rec("torch.mm", 1.0, time_s=0.5), rec("<project>", 4.0, time_s=2.0),
                        inst], "inst.jsonl")
        o = self.report(p)["instrumentation"]
        self.assertEqual(o["calls"], 100)
        self.assertAlmostEqual(o["time_s"], 0.02)
        self.assertAlmostEqual(o["per_call_s"], 8e-5)      # the record's, not time_s / calls
        self.assertAlmostEqual(o["share_of_project_time"], 0.01)
        text = run([ERG, "report", p]).stdout
        self.assertIn("instrumentation: 100 calls, 80 us per call; 0.02 s outside the calls' "
                      "windows, 1.0% of the project's time", text)

    def test_rq2_fit_by_hand(self):
        # energy per call E = 0.5 + 0.002 × bytes exactly on three sizes, plus one off the line:
        # points (100, 0.7), (200, 0.9), (300, 1.1), (400, 1.5)
        pts = [(100, 0.7), (200, 0.9), (300, 1.1), (400, 1.5)]
        recs = [rec("torch.mm", e * 2, calls=2, nbytes=b, site="s.py:%d" % b) for b, e in pts]
        j = self.report(self.write(recs + [rec("<project>", 100.0)]))
        f = [x for x in j["rq2"] if x["api"] == "torch.mm"][0]
        xs, ys = [b for b, _ in pts], [e for _, e in pts]
        mx, my = sum(xs) / 4, sum(ys) / 4
        sxx = sum((x - mx) ** 2 for x in xs)
        sxy = sum((x - mx) * (y - my) for x, y in pts)
        syy = sum((y - my) ** 2 for y in ys)
        self.assertAlmostEqual(f["slope_j_per_byte"], sxy / sxx)          # 0.0026
        self.assertAlmostEqual(f["slope_j_per_byte"], 0.0026)
        self.assertAlmostEqual(f["intercept_j"], my - 0.0026 * mx)         # 0.4
        self.assertAlmostEqual(f["r"], sxy / math.sqrt(sxx * syy))
        self.assertAlmostEqual(f["r"], 0.9827076298239908)
        plots = os.path.join(self.d, "plots")
        self.report(os.path.join(self.d, "calls.jsonl"), "--plot", plots)
        self.assertEqual(sorted(os.listdir(plots)), ["rq1.svg", "rq2-torch.mm.svg"])
        with open(os.path.join(plots, "rq2-torch.mm.svg")) as fh:
            svg = fh.read()
        self.assertTrue(svg.startswith("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        self.assertEqual(svg.count("<circle"), 4)
        self.assertIn("r = 0.9827", svg)

    def test_rq2_needs_three_sizes(self):
        # two sizes: any line fits them exactly (it used to print "E = -3.823 J + 1.099e-06 J/B
        # x bytes, 2 points" for torch.nn.functional.linear); the points stay in the JSON
        pts = [(100, 0.9), (200, 0.5), (200, 0.7)]
        recs = [rec("torch.mm", e, nbytes=b, site="s.py:%d" % i) for i, (b, e) in enumerate(pts)]
        p = self.write(recs + [rec("<project>", 100.0)])
        r = run([ERG, "report", p])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("RQ2", r.stdout)
        f = [x for x in self.report(p)["rq2"] if x["api"] == "torch.mm"][0]
        self.assertEqual((f["n"], f["slope_j_per_byte"], f["intercept_j"], f["r"]),
                         (3, None, None, None))
        self.assertEqual(f["points"], [[100.0, 0.9], [200.0, 0.5], [200.0, 0.7]])

    def test_rq2_negative_slope_is_written_with_its_sign(self):
        # E per call falls with the size: 1.0 - 0.001 x bytes (points on the line); the text
        # and the plot used to say "E = 1.1 J + -0.001 J/B x bytes"
        pts = [(100, 0.9), (200, 0.8), (300, 0.7)]
        recs = [rec("torch.mm", e, nbytes=b, site="s.py:%d" % b) for b, e in pts]
        p = self.write(recs + [rec("<project>", 100.0)])
        r = run([ERG, "report", p])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("torch.mm: E = 1 J - 0.001 J/B x bytes, 3 points, r = -1", r.stdout)
        self.assertNotIn("+ -", r.stdout)
        plots = os.path.join(self.d, "plots")
        self.report(p, "--plot", plots)
        with open(os.path.join(plots, "rq2-torch.mm.svg")) as fh:
            self.assertIn("E = 1 - 0.001 x bytes; r = -1", fh.read())

    def test_scope_and_baseline_are_stated(self):
        # erg's meters are machine-wide; whether net_energy_j had an idle power subtracted
        # comes from the records ("baseline"), and a mix or an older file without it is named
        def with_baseline(r, b):
            if b is not None:
                r["scope"], r["baseline"] = "machine", b
            return r
        cases = [(["none", "none"], "none", "is the gross energy (no calibration was given"),
                 (["calibrated", "calibrated"], "calibrated", "subtracts the calibrated idle"),
                 (["none", "calibrated"], "mixed", "in some records and nothing in others"),
                 ([None, None], None, "not stated in these records")]
        for bs, want, phrase in cases:
            p = self.write([with_baseline(rec("torch.mm", 1.0), bs[0]),
                            with_baseline(rec("<project>", 2.0), bs[1])])
            self.assertEqual(self.report(p)["rq1"]["scope"], {"scope": "machine", "baseline": want})
            text = run([ERG, "report", p]).stdout
            line = [ln for ln in text.splitlines() if ln.startswith("scope: ")]
            self.assertEqual(len(line), 1, text)
            self.assertIn("machine-wide meters: every process on this host", line[0])
            self.assertIn(phrase, line[0])

    def test_bad_input(self):
        # file:line:col, the byte column of the value (hand-counted on json.dumps of rec: `{"api":
        # "a", "site": "s.py:1", "calls": 1, "time_s": 1.0, "energy_j": 1.0, "net_energy_j": ...`:
        # "s.py:1" at 22-29, the values of calls at 41, time_s at 54, energy_j at 71, net_energy_j
        # at 92); a missing key or a record that is no object: the record's first byte
        cases = [
            (["{\"api\": \"x\"}"], "calls.jsonl:1:1: record lacks \"site\""),
            (["  {\"api\": \"x\"}"], "calls.jsonl:1:3: record lacks \"site\""),
            ([json.dumps(rec("a", 1.0)), "{not json"], "calls.jsonl:2:2: not JSON"),
            (["[1, 2]"], "calls.jsonl:1:1: a record must be a JSON object"),
            ([json.dumps(dict(rec("a", 1.0), calls=-1))],
             "calls.jsonl:1:41: \"calls\" must be a finite number >= 0 (got -1)"),
            ([json.dumps(dict(rec("a", 1.0), energy_j="3"))],
             "calls.jsonl:1:71: \"energy_j\" must be a finite number"),
            # a key holding a multi-byte character before the value: columns count bytes (api
            # "é" is 2 bytes, so calls at 42)
            ([json.dumps(dict(rec("\u00e9", 1.0), calls=-1), ensure_ascii=False)],
             "calls.jsonl:1:42: \"calls\" must be a finite number >= 0 (got -1)"),
            # json reads these as numbers; they used to print inf J and a nan% share, exit 0
            ([json.dumps(rec("a", 1.0)), json.dumps(dict(rec("b", 1.0), net_energy_j=float("inf")))],
             "calls.jsonl:2:92: \"net_energy_j\" must be a finite number or null (got Infinity)"),
            ([json.dumps(dict(rec("a", 1.0), time_s=float("nan")))],
             "calls.jsonl:1:54: \"time_s\" must be a finite number >= 0 (got NaN)"),
            # `{"api": "a", "site": "s", "calls": 1, "time_s": 1, "energy_j": 1e309`: 1e309 at 64
            (['{"api": "a", "site": "s", "calls": 1, "time_s": 1, "energy_j": 1e309, '
              '"net_energy_j": 1, "grade": "estimator", "flags": [], "arg_bytes": 0}'],
             "calls.jsonl:1:64: \"energy_j\" must be a finite number or null (got Infinity)"),
            ([json.dumps(dict(rec("a", 1.0), calls=2.5))],
             "calls.jsonl:1:41: \"calls\" must be a whole number (got 2.5)"),
            ([json.dumps(dict(rec("a", 1.0), calls=True))],
             "calls.jsonl:1:41: \"calls\" must be a finite number >= 0 (got true)"),
            # an API record aggregates at least one call; a grade erg does not know is no grade
            ([json.dumps(rec("a", 1.0)), json.dumps(dict(rec("b", 1.0), calls=0))],
             "calls.jsonl:2:41: \"calls\" of an API record must be at least 1 (got 0)"),
            ([json.dumps(dict(rec("a", 1.0), grade="superb"))],
             "calls.jsonl:1:106: \"grade\" must be one of hw_shunt, model_based, estimator or null "
             "(got \"superb\")"),
            ([""], "no records"),
        ]
        for lines, msg in cases:
            with self.subTest(msg=msg):
                r = run([ERG, "report", self.write(lines)])
                self.assertEqual(r.returncode, 2)
                self.assertIn(msg, r.stderr)
                self.assertTrue(r.stderr.startswith("erg report: "), r.stderr)
                self.assertEqual(r.stdout, "")
        r = run([ERG, "report", os.path.join(self.d, "missing.jsonl")])
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.jsonl: No such file or directory", r.stderr)
        p = self.write([json.dumps(rec("a", 1.0))])
        r = run([ERG, "report", p, "--plot", p])
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a folder", r.stderr)


class RunWithoutTorch(unittest.TestCase):
    def test_a_python_without_torch_is_named(self):
        """python3 -m erg.run under a Python that cannot import torch: one line naming that
        Python and the fix, exit 2, no records and no traceback (was an ImportError traceback)."""
        d = tempfile.mkdtemp(prefix="erg-notorch-")
        try:
            os.mkdir(os.path.join(d, "torch"))
            with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
                f.write("raise ImportError('No module named torch (test stand-in)')\n")
            script = os.path.join(d, "prog.py")
            with open(script, "w") as f:
                f.write("print('never')\n")
            calls = os.path.join(d, "calls.jsonl")
            r = run([ergtest.PYTHON, "-m", "erg.run", "--out", calls, script],
                    env={"PYTHONPATH": d + ":" + ergtest.PYDIR})
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("cannot import torch", r.stderr)
            self.assertIn("python3-torch", r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            self.assertEqual(r.stdout, "")
            self.assertFalse(os.path.exists(calls))
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    ergtest.main()
