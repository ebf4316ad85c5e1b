#!/bin/sh
# End to end: erg characterize, erg refine and erg check-granularity on a fake RAPL tree whose
# energy depends on the context: element b costs 3 J after a (cold), 2 J otherwise; a costs 1 J.
# The elements advance the fake counter themselves, in place, as hardware does; every asserted
# figure is an energy (counter increments), never a time, so nothing depends on the host's speed.
set -u
erg=${ERG_BIN:?}
fail() { echo "FAIL: $*" >&2; [ -f "$T/out" ] && cat "$T/out" >&2; [ -f "$T/err" ] && cat "$T/err" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/erg-ctx-XXXXXX")
trap 'rm -rf "$T"' EXIT
R=$T/root
PC=$R/sys/class/powercap/intel-rapl:0
mkdir -p "$PC" "$R/proc"
echo package-0 > "$PC/name"; echo 262143328850 > "$PC/max_energy_range_uj"
printf "%020d\n" 1000000 > "$PC/energy_uj"
printf 'cpu  100 0 0 100 0 0 0 0 0 0\n' > "$R/proc/stat"
export ERG_ROOT=$R XDG_CACHE_HOME=$T/cache ERG_STORE=$T/store.db
unset ERG_BACKENDS ERG_NVML_LIB
E=$PC/energy_uj; S=$T/state
# add 0.5 J per step (a counter never jumps), under a lock (mkdir is atomic) so that co-running
# elements never lose an update; then record the state left behind
step='sleep 0.02; until mkdir "$E.lock" 2>/dev/null; do sleep 0.001; done; read v < "$E"; printf "%020d\n" $(expr "$v" + 500000) 1<> "$E"; rmdir "$E.lock"'
cat > "$T/a.sh" <<SH
E=$E
for k in 1 2; do $step; done
echo a > $S
SH
cat > "$T/b.sh" <<SH
E=$E
n=4; [ "\$(cat $S 2>/dev/null)" = a ] && n=6
k=0; while [ \$k -lt \$n ]; do $step; k=\$((k + 1)); done
echo b > $S
SH
A="sh $T/a.sh"; B="sh $T/b.sh"; RESET="echo null > $S"
C="--static-power 0 --backends rapl-sysfs -r 2 -q"
CR="--static-power 0 --backends rapl-sysfs -r 2"
flat() { tr -d ' \n' < "$1"; }

# --- characterize b: null 2 J, after a 3 J, warm (after b) 2 J
"$erg" characterize --name b $C --reset "$RESET" --after a="$A" --warm -o "$T/b.json" -- sh "$T/b.sh" > "$T/out" 2> "$T/err" || fail "characterize b"
f=$(flat "$T/b.json")
echo "$f" | grep -q '"name":"b","device":"cpu","static_power_w":0.0,"time_s":[0-9.e-]*,"dynamic_energy_j":2.0,' || fail "b null context 2 J: $f"
echo "$f" | grep -q '"name":"after:a","mechanism":"cache","after":"a","static_power_w":0.0,"time_s":[0-9.e-]*,"dynamic_energy_j":3.0,' || fail "b after a 3 J"
echo "$f" | grep -q '"name":"warm","mechanism":"cache","after":"b","cache":"warm","static_power_w":0.0,"time_s":[0-9.e-]*,"dynamic_energy_j":2.0,' || fail "b warm 2 J"
echo "$f" | grep -q '"command":"sh[^"]*b.sh"' || fail "command recorded"
echo "$f" | grep -q '"grade":"hw_shunt"' || fail "grade of a live counter"
"$erg" characterize --name a $C --reset "$RESET" -o "$T/a.json" -- sh "$T/a.sh" > "$T/out" 2> "$T/err" || fail "characterize a"
flat "$T/a.json" | grep -q '"dynamic_energy_j":1.0,' || fail "a 1 J"
# a cooldown that is no time_t is refused (it was cast from double), nothing is written
"$erg" characterize --name a $C --cooldown 1e300 -o "$T/x.json" -- true > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "--cooldown 1e300: status 2"
grep -q "cooldown must be at most 86400 s, got '1e300'" "$T/err" || fail "--cooldown 1e300: message"
[ ! -e "$T/x.json" ] || fail "--cooldown 1e300: nothing written"
# erg compose and erg insensitive still read them (null context)
"$erg" insensitive "$T/b.json" "$T/a.json" > /dev/null 2>&1; [ $? -le 1 ] || fail "plain reader"

# --- co-run: both endpoints, dynamic energy split by CPU time, the sum is the window's 3 J
"$erg" characterize --name b $C --reset "$RESET" --with a="$A" --corunner-out "$T/a-co.json" -o "$T/b-co.json" -- sh "$T/b.sh" > "$T/out" 2> "$T/err" || fail "co-run"
python3 - "$T/b-co.json" "$T/a-co.json" <<'PY' || fail "co-run split sums to the window"
import json, sys
b = json.load(open(sys.argv[1])); a = json.load(open(sys.argv[2]))
pb = [p for p in b["contexts"] if p["name"] == "with:a"][0]
pa = [p for p in a["contexts"] if p["name"] == "with:b"][0]
assert pb["corunners"] == ["a"] and pa["corunners"] == ["b"] and pb["mechanism"] == "contention"
# co-running, b finds the state file as the reset left it or as a wrote it: 2 or 3 J, plus a's 1 J
tot = pb["dynamic_energy_j"] + pa["dynamic_energy_j"]
assert abs(tot - 3.0) < 1e-9 or abs(tot - 4.0) < 1e-9, tot
PY
# a co-runner file that already holds 16 other points (the limit the ABI once had, when the 17th
# was dropped with exit 0 and later refused with exit 2) takes the new one: 17 points, the 16
# kept as they were, in order, and with:b as the co-run just measured
python3 - "$T/a-co.json" "$T/a-full.json" <<'PY' || fail "a-full.json"
import json, sys
a = json.load(open(sys.argv[1]))
p = [q for q in a["contexts"] if q["name"] == "with:b"][0]
a["contexts"] = [dict(p, name="with:b%d" % i, corunners=["b%d" % i], time_s=1.0 + i / 3.0) for i in range(16)]
json.dump(a, open(sys.argv[2], "w"))
PY
"$erg" characterize --name b $C --reset "$RESET" --with a="$A" --corunner-out "$T/a-full.json" -o "$T/b-co2.json" -- sh "$T/b.sh" > "$T/out" 2> "$T/err" || fail "a co-runner file with 16 points: status 0"
python3 - "$T/a-full.json" "$T/b-co2.json" <<'PY' || fail "the 17th point is kept"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
c = a["contexts"]
assert len(c) == 17, len(c)
for i in range(16):
    assert c[i]["name"] == "with:b%d" % i and c[i]["corunners"] == ["b%d" % i], c[i]
    assert c[i]["time_s"] == 1.0 + i / 3.0, c[i]
assert c[16]["name"] == "with:b" and c[16]["corunners"] == ["b"] and c[16]["mechanism"] == "contention"
# the co-run's window split by CPU time: the two halves sum to 3 or 4 J as above
pb = [p for p in b["contexts"] if p["name"] == "with:a"][0]
tot = pb["dynamic_energy_j"] + c[16]["dynamic_energy_j"]
assert abs(tot - 3.0) < 1e-9 or abs(tot - 4.0) < 1e-9, tot
PY

# one command line takes at most 63 contexts (input validation, not a signature limit): the 64th
# is a usage error before anything runs
many=$(i=0; while [ $i -lt 64 ]; do printf -- '--warm '; i=$((i + 1)); done)
"$erg" characterize --name b $many -o "$T/many.json" -- true > "$T/out" 2> "$T/err"
[ $? = 2 ] || fail "64 contexts: status 2"
grep -q "at most 63 contexts per command line" "$T/err" || fail "64 contexts: message"
[ ! -e "$T/many.json" ] || fail "64 contexts: nothing written"

# --- the schedule a -> b -> b measured directly: 1 + 3 + 2 = 6 J
cat > "$T/sched.json" <<JSON
{"erg": "schedule/1", "devices": {"cpu": {"static_power_w": 0}},
 "signatures": {"a": "a.json", "b": "b0.json"},
 "nodes": [{"id": "n0", "signature": "a"}, {"id": "n1", "signature": "b"}, {"id": "n2", "signature": "b"}],
 "edges": [["n0", "n1"], ["n1", "n2"]]}
JSON
# b0.json: b at the null context only (its points dropped: nothing characterized yet)
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); s.pop('contexts'); json.dump(s, open(sys.argv[2],'w'))" "$T/b.json" "$T/b0.json"
"$erg" characterize --schedule "$T/sched.json" $C --reset "$RESET" -o "$T/measured.json" > "$T/out" 2> "$T/err" || fail "characterize --schedule"
flat "$T/measured.json" | grep -q '"dynamic_energy_j":6.0,' || fail "schedule measured 6 J"
"$erg" compose "$T/sched.json" --json > "$T/out" 2> "$T/err" || fail "compose"
flat "$T/out" | grep -q '"energy_j":5.0,' || fail "context-independent 5 J"

# --- check-granularity: 6 J measured vs 5 J composed, zero variance: inconsistent
"$erg" check-granularity "$T/measured.json" "$T/sched.json" > "$T/out" 2> "$T/err"; [ $? = 1 ] || fail "granularity inconsistent"
grep -q "INCONSISTENT" "$T/out" || fail "granularity message"

# --- refine: prints the candidates without --characterize, exit 1
"$erg" refine "$T/sched.json" --measured "$T/measured.json" > "$T/out" 2> "$T/err"; [ $? = 1 ] || fail "refine detects"
grep -q "DEVIATION (Eq. 23)" "$T/out" || fail "deviation reported"
grep -q "1. a -> b: 1 occurrence" "$T/out" || fail "a -> b ranked first (b's 2 J explains the whole 1 J)"
grep -q "erg characterize --name b --after a=" "$T/out" || fail "command printed"
# refine/1 and granularity/1 (written by the library): a failed write is exit 2 with the reason,
# whatever the check's own status
"$erg" refine "$T/sched.json" --measured "$T/measured.json" --json > /dev/full 2> "$T/err"; [ $? = 2 ] || fail "refine --json > /dev/full: exit 2"
grep -q "write error" "$T/err" || fail "refine --json > /dev/full: message"
"$erg" check-granularity "$T/measured.json" "$T/sched.json" --json > /dev/full 2> "$T/err"; [ $? = 2 ] || fail "check-granularity --json > /dev/full: exit 2"
grep -q "write error" "$T/err" || fail "check-granularity --json > /dev/full: message"
# --- refine --characterize: the pairs are characterized on the fake meter and the deviation closes
"$erg" refine "$T/sched.json" --measured "$T/measured.json" --characterize --in-place $CR --reset "$RESET" --graph "$T/graph.json" --json > "$T/out" 2> "$T/err" || fail "refine closes"
f=$(flat "$T/out")
echo "$f" | grep -q '"erg":"refine/1"' || fail "refine tag"
echo "$f" | grep -q '"before":{"energy_j":5.0,.*"detected":true' || fail "before 5 J detected"
echo "$f" | grep -q '"after":{"energy_j":6.0,.*"bias_bound_j":0.0,.*"detected":false' || fail "after 6 J, no uncharacterized substitution left"
flat "$T/b0.json" | grep -q '"name":"after:a".*"dynamic_energy_j":3.0' || fail "in place: b0.json has after:a"
flat "$T/graph.json" | grep -q '"from":"a","to":"b","kind":"entry","mechanism":"cache","point":"after:a","delta_energy_j":1.0' || fail "graph a -> b"
"$erg" check-granularity "$T/measured.json" "$T/sched.json" --json > "$T/out" 2> "$T/err" || fail "granularity consistent after refinement"
flat "$T/out" | grep -q '"difference_j":0.0,.*"consistent":true' || fail "granularity json"

# --- the store keeps the points
"$erg" store put "$T/b.json" > /dev/null 2> "$T/err" || fail "store put"
"$erg" store get b -o "$T/got.json" 2> "$T/err" || fail "store get"
flat "$T/got.json" | grep -q '"name":"after:a"' || fail "store keeps the points"
# a point with 9 co-runners, one name 300 bytes long (a point once held 4 of 127 bytes): the
# store gives the list back whole and in order
python3 - "$T/b.json" "$T/b9.json" <<'PY' || fail "b9.json"
import json, sys
s = json.load(open(sys.argv[1]))
names = ["c%d" % i for i in range(8)] + ["long-" + "x" * 295]
s["contexts"].append({"name": "with:nine", "mechanism": "contention", "corunners": names,
                      "time_s": 1.5, "dynamic_energy_j": 2.0})
json.dump(s, open(sys.argv[2], "w"))
PY
"$erg" store put "$T/b9.json" > /dev/null 2> "$T/err" || fail "store put, 9 co-runners"
"$erg" store get b -o "$T/got9.json" 2> "$T/err" || fail "store get, 9 co-runners"
python3 - "$T/got9.json" <<'PY' || fail "9 co-runners kept whole"
import json, sys
p = [q for q in json.load(open(sys.argv[1]))["contexts"] if q["name"] == "with:nine"][0]
assert p["corunners"] == ["c%d" % i for i in range(8)] + ["long-" + "x" * 295], p["corunners"]
PY
"$erg" store put "$T/b.json" > /dev/null 2> "$T/err" || fail "store put again"

# --- correlations in a schedule: accepted by compose, used by refine
sed 's/"edges"/"correlations": [{"signatures": ["a", "b"], "rho": 0.5}], "edges"/' "$T/sched.json" > "$T/corr.json"
"$erg" compose "$T/corr.json" > /dev/null 2> "$T/err" || fail "compose accepts correlations"
sed 's/"edges"/"correlations": [{"signatures": ["a", "zz"], "rho": 0.5}], "edges"/' "$T/sched.json" > "$T/corr.json"
"$erg" refine "$T/corr.json" --measured "$T/measured.json" > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "unknown signature in a correlation"
grep -q 'correlations\[0\].signatures\[1\]: unknown signature "zz"' "$T/err" || fail "correlation message"

# --- bad input: exit 2 with a clear message
"$erg" refine "$T/sched.json" > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "refine without --measured"
grep -q "give the measured energy with --measured FILE" "$T/err" || fail "--measured message"
"$erg" refine "$T/sched.json" --measured "$T/measured.json" --characterize > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "characterize without output"
grep -q "give --in-place or --write-signatures DIR" "$T/err" || fail "output message"
cat > "$T/expr.json" <<JSON
{"erg": "schedule/1", "devices": {"cpu": {"static_power_w": 0}}, "signatures": {"a": "a.json"}, "expr": {"seq": ["a", "a"]}}
JSON
"$erg" refine "$T/expr.json" --measured "$T/measured.json" > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "refine of an expression"
grep -q "needs the DAG form" "$T/err" || fail "expression message"
"$erg" characterize --name x $C --after nocommand -o "$T/x.json" -- true > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "--after without ="
grep -q "expects NAME=CMD" "$T/err" || fail "NAME=CMD message"
"$erg" characterize --name x $C --time reported -o "$T/x.json" -- true > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "no report"
grep -q "reported no time" "$T/err" || fail "report message"
[ ! -e "$T/x.json" ] || fail "nothing written on failure"
"$erg" characterize --name x -o "$T/x.json" --backends rapl-sysfs -- true > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "no static power"
grep -q "the static power s is unknown" "$T/err" || fail "static power message"
sed 's/"mechanism":"cache"/"mechanism":"magic"/' "$T/b.json" > /dev/null
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); s['contexts'][0]['mechanism']='magic'; json.dump(s, open(sys.argv[2],'w'))" "$T/b.json" "$T/bad.json"
"$erg" store put "$T/bad.json" > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "bad point"
grep -q 'signature.contexts\[0\].mechanism: expected "thermal", "cache", "power_delivery" or "contention" (got "magic")' "$T/err" || fail "bad point message"
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); s['contexts'][0]['corunners']=['a', 7]; json.dump(s, open(sys.argv[2],'w'))" "$T/b.json" "$T/bad.json"
"$erg" store put "$T/bad.json" > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "a co-runner that is not a name"
grep -q 'signature.contexts\[0\].corunners\[1\]: expected a non-empty name' "$T/err" || fail "co-runner message"
# --- the pair verdict of Section 4.1.3 (hand-computed: B after A: 0.2·10 + 0.5 = 2.5 J > 1.96·0.5;
#     A with B: 0.3 J > 1.96·0.1 = 0.196 J)
cat > "$T/pa.json" <<'J'
{"erg":"signature/1","name":"A","static_power_w":10,"time_s":1,"dynamic_energy_j":2,"energy_var_j2":0.01,
 "contexts":[{"name":"after:B","mechanism":"cache","after":"B","time_s":1,"dynamic_energy_j":2.05,"energy_var_j2":0.01},
             {"name":"with:B","mechanism":"contention","corunners":["B"],"time_s":1,"dynamic_energy_j":2.3,"energy_var_j2":0.01}]}
J
cat > "$T/pb.json" <<'J'
{"erg":"signature/1","name":"B","static_power_w":10,"time_s":1,"dynamic_energy_j":5,"energy_var_j2":0.25,
 "contexts":[{"name":"after:A","mechanism":"cache","after":"A","time_s":1.2,"dynamic_energy_j":5.5,"energy_var_j2":0.25}]}
J
"$erg" insensitive --pair "$T/pa.json" "$T/pb.json" --json > "$T/out" 2> "$T/err"; [ $? = 1 ] || fail "pair sensitive"
f=$(flat "$T/out")
echo "$f" | grep -q '"history_a":{"points_tested":1,"insensitive":true,"lhs_j":0.05,' || fail "A after B 0.05 J"
echo "$f" | grep -q '"history_b":{"points_tested":1,"insensitive":false,"lhs_j":2.5,"tolerance_j":0.97998' || fail "B after A 2.5 J"
echo "$f" | grep -q '"interference_a":{"points_tested":1,"insensitive":false,"lhs_j":0.3,' || fail "A with B 0.3 J"
echo "$f" | grep -q '"interference_b":{"points_tested":0,"insensitive":null' || fail "B with A not characterized"
echo "$f" | grep -q '"history":false,"interference":false,"mutual":false' || fail "verdicts"
"$erg" insensitive --pair "$T/pa.json" > "$T/out" 2> "$T/err"; [ $? = 2 ] || fail "pair of one"
grep -q -- "--pair expects two signature files" "$T/err" || fail "pair usage"
echo ok
