#!/bin/sh
# SPDX-License-Identifier: MIT
# erg frontier end to end: outputs, plans, plot, and bad input (exit 2, one clear line, nothing
# half-written).
set -u
: "${ERG_BIN:?ERG_BIN not set}"
T=$(mktemp -d /tmp/erg_frontier_cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$T/par.json" <<'JSON'
{"erg": "schedule/1", "devices": {"gpu0": {"static_power_w": 10}},
 "signatures": {
   "long": {"device": "gpu0", "points": [
      {"time_s": 1.0, "dynamic_energy_j": 50}, {"time_s": 2.0, "dynamic_energy_j": 30}]},
   "short": {"device": "gpu0", "points": [
      {"time_s": 0.2, "dynamic_energy_j": 10}, {"time_s": 0.4, "dynamic_energy_j": 6},
      {"time_s": 0.9, "dynamic_energy_j": 5}]}},
 "expr": {"par": ["long", "short"]}}
JSON

out=$("$ERG_BIN" frontier "$T/par.json") || fail "table exit $?"
echo "$out" | grep -q "long=1 short=2" || fail "table lacks the choice: $out"

out=$("$ERG_BIN" frontier "$T/par.json" --json --deadline 1.5) || fail "json exit $?"
echo "$out" | grep -q '"erg": "frontier/1"' || fail "json tag"
echo "$out" | grep -q '"plan"' || fail "json plan"

out=$("$ERG_BIN" frontier "$T/par.json" --csv --budget 60 --plot "$T/f.svg") || fail "csv exit $?"
[ "$(echo "$out" | head -1)" = "time_s,energy_j,static_energy_j,dynamic_energy_j,bound_j,plan,long,short" ] || fail "csv header: $out"
echo "$out" | grep -q "^2,55,20,35,55,1,1,2$" || fail "csv plan row: $out"
head -c 5 "$T/f.svg" | grep -q "<?xml" || fail "svg"

# Deadline below the fastest makespan: exit 2, says what the fastest is, no plot written.
"$ERG_BIN" frontier "$T/par.json" --deadline 0.5 --plot "$T/no.svg" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "deadline rc $rc"
grep -q "fastest possible makespan 1 s" "$T/err" || fail "deadline message: $(cat "$T/err")"
[ ! -e "$T/no.svg" ] || fail "plot written after an error"

"$ERG_BIN" frontier "$T/par.json" --budget 10 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "budget rc $rc"
grep -q "below the least energy 55 J" "$T/err" || fail "budget message: $(cat "$T/err")"

printf '{"erg": "schedule/1", "signatures": {"a": {"device": "g", "points": []}}, "expr": "a"}' > "$T/empty.json"
"$ERG_BIN" frontier "$T/empty.json" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "empty rc $rc"
grep -q "^erg: .*empty.json: signatures.a.points: empty operating set" "$T/err" || fail "empty message: $(cat "$T/err")"

printf '{"erg": "schedule/1",\n "signatures": {"a": {"static_power_w": 1, "time_s": NaN, "dynamic_energy_j": 1}}, "expr": "a"}' > "$T/nan.json"
"$ERG_BIN" frontier "$T/nan.json" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "nan rc $rc"
grep -q "^erg: .*nan.json:2:[0-9]*: " "$T/err" || fail "nan message: $(cat "$T/err")"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line on stderr"

printf '{"erg": "schedule/1", "signatures": {"a": {"static_power_w": 1, "time_s": -2, "dynamic_energy_j": 1}}, "expr": "a"}' > "$T/neg.json"
"$ERG_BIN" frontier "$T/neg.json" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "negative rc $rc"
grep -q "time_s" "$T/err" || fail "negative message: $(cat "$T/err")"

"$ERG_BIN" frontier "$T/par.json" --deadline 1 --budget 2 2> /dev/null; [ $? -eq 2 ] || fail "both"
"$ERG_BIN" frontier 2> /dev/null; [ $? -eq 2 ] || fail "no file"
"$ERG_BIN" frontier "$T/par.json" --bogus 2> "$T/err"; [ $? -eq 2 ] || fail "bogus option"
grep -q "unknown option .--bogus." "$T/err" || fail "bogus message: $(cat "$T/err")"
"$ERG_BIN" frontier "$T/missing.json" 2> /dev/null; [ $? -eq 2 ] || fail "missing file"
"$ERG_BIN" frontier --help | grep -q "Usage: erg frontier" || fail "help"
echo "ok"
