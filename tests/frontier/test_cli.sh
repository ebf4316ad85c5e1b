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
# --plot writes the format its extension names (issue 11): PNG and PDF by their magic bytes
"$ERG_BIN" frontier "$T/par.json" --plot "$T/f.png" > /dev/null || fail "png exit $?"
head -c 4 "$T/f.png" | od -An -c | grep -q 'P   N   G' || fail "png magic"
"$ERG_BIN" frontier "$T/par.json" --plot "$T/f.PDF" > /dev/null || fail "pdf exit $?"
head -c 5 "$T/f.PDF" | grep -q "%PDF-" || fail "pdf magic"
"$ERG_BIN" frontier "$T/par.json" --plot "$T/f.jpg" > /dev/null 2> "$T/err"; [ $? -eq 2 ] || fail "unknown plot format: exit 2"
grep -q "the extension names the format: .svg, .png or .pdf, got '$T/f.jpg'" "$T/err" || fail "unknown plot format message"
[ ! -e "$T/f.jpg" ] || fail "nothing written for an unknown format"

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
grep -q "^erg: .*empty.json:1:69: signatures.a.points: empty operating set" "$T/err" || fail "empty message: $(cat "$T/err")"

# A time that overflows once selected no point and printed garbage indices with exit 0.
printf '{"erg": "schedule/1", "devices": {"g": {"static_power_w": 0}}, "signatures": {"a": {"device": "g", "points": [{"time_s": 1e308, "dynamic_energy_j": 1}, {"time_s": 1, "dynamic_energy_j": 5}]}, "b": {"device": "g", "time_s": 1e308, "dynamic_energy_j": 1}}, "expr": {"multi": [{"seq": ["a", "b"]}, "b"]}}' > "$T/big.json"
"$ERG_BIN" frontier "$T/big.json" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "overflow rc $rc: $(cat "$T/out")"
# placed at the seq it names: 22 + 41 + 15 + 32 + 42 + 40 + 63 + 19 bytes before it (the tag,
# devices, "signatures": {, a's head and two points, b, "expr": {"multi": [): column 275
grep -q "^erg: .*big.json:1:275: expr.multi\[0\]: the seq's time or energy is not finite" "$T/err" || fail "overflow message: $(cat "$T/err")"
[ -s "$T/out" ] && fail "overflow printed a frontier: $(cat "$T/out")"
"$ERG_BIN" compose "$T/big.json" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "compose of an operating set rc $rc"

printf '{"erg": "schedule/1",\n "signatures": {"a": {"static_power_w": 1, "time_s": NaN, "dynamic_energy_j": 1}}, "expr": "a"}' > "$T/nan.json"
"$ERG_BIN" frontier "$T/nan.json" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "nan rc $rc"
grep -q "^erg: .*nan.json:2:[0-9]*: " "$T/err" || fail "nan message: $(cat "$T/err")"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line on stderr"

printf '{"erg": "schedule/1", "signatures": {"a": {"static_power_w": 1, "time_s": -2, "dynamic_energy_j": 1}}, "expr": "a"}' > "$T/neg.json"
"$ERG_BIN" frontier "$T/neg.json" 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "negative rc $rc"
grep -q "time_s" "$T/err" || fail "negative message: $(cat "$T/err")"

# --reference: columns found by header name, in any order; anything else exit 2, one line with
# file:line:col, nothing written (no SVG, nothing on stdout).
printf 'energy,time\n70,0.9\n50,2.5\n' > "$T/swapped.csv"
"$ERG_BIN" frontier "$T/par.json" --plot "$T/ref.svg" --reference "$T/swapped.csv" > /dev/null || fail "swapped reference rc $?"
grep -q "<svg" "$T/ref.svg" || fail "swapped reference: no svg"
: > "$T/empty.csv"
printf '42\n' > "$T/num.csv"
printf 'time,energy\n' > "$T/hdr.csv"
printf 'time,energy\n1,2\n3,x\n' > "$T/badnum.csv"
printf 'iteration_s,joules\n1,2\n' > "$T/names.csv"
for r in empty:1:1 num:1:1 hdr:2:1 badnum:3:3 names:1:1; do
    f=${r%%:*}; at=${r#*:}
    "$ERG_BIN" frontier "$T/par.json" --plot "$T/r_$f.svg" --reference "$T/$f.csv" > "$T/out" 2> "$T/err"; rc=$?
    [ $rc -eq 2 ] || fail "reference $f: rc $rc"
    grep -q "^erg: .*$f.csv:$at: " "$T/err" || fail "reference $f message: $(cat "$T/err")"
    [ "$(wc -l < "$T/err")" -eq 1 ] || fail "reference $f: more than one line on stderr"
    [ ! -e "$T/r_$f.svg" ] || fail "reference $f: svg written"
    [ ! -s "$T/out" ] || fail "reference $f: stdout written"
done
grep -q "no time column (time_s or time)" "$T/err" || fail "names message: $(cat "$T/err")"

# Choices in the table: all for few elements, only changes for many, --choices to override.
# Nine elements, each (1 s, 10+i J) or (2 s, 1 J) at 1 W: slowing element i saves 8+i J, so row k
# of the frontier slows the k elements with the largest savings (e9 first, then e8, ...).
{
    printf '{"erg": "schedule/1", "devices": {"g": {"static_power_w": 1}}, "signatures": {'
    for i in 1 2 3 4 5 6 7 8 9; do
        [ $i -gt 1 ] && printf ','
        printf '"e%d": {"device": "g", "points": [{"time_s": 1, "dynamic_energy_j": %d}, {"time_s": 2, "dynamic_energy_j": 1}]}' $i $((10 + i))
    done
    printf '}, "expr": {"seq": ["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9"]}}\n'
} > "$T/seq9.json"
out=$("$ERG_BIN" frontier "$T/seq9.json") || fail "seq9 rc $?"
[ "$(echo "$out" | grep -c " 9 elements$")" -eq 1 ] || fail "seq9 first row: $out"
echo "$out" | grep -q "^ *10 *1[0-9]* .* 1 changed: e9=1$" || fail "seq9 second row: $out"
echo "$out" | grep -q "^ *11 .* 1 changed: e8=1$" || fail "seq9 third row: $out"
echo "$out" | grep -q "only where it differs from the row above" || fail "seq9 legend: $out"
out=$("$ERG_BIN" frontier "$T/seq9.json" --choices all) || fail "seq9 all rc $?"
echo "$out" | grep -q " e1=0 e2=0 e3=0 e4=0 e5=0 e6=0 e7=0 e8=0 e9=1$" || fail "seq9 all: $out"
out=$("$ERG_BIN" frontier "$T/seq9.json" --choices none) || fail "seq9 none rc $?"
echo "$out" | grep -q "e9\|choice" && fail "seq9 none: $out"
out=$("$ERG_BIN" frontier "$T/par.json" --choices changes) || fail "par changes rc $?"
echo "$out" | grep -q "long=0 short=2$" || fail "par changes first row: $out"
echo "$out" | grep -q " 1 changed: long=1$" || fail "par changes second row: $out"
"$ERG_BIN" frontier "$T/par.json" --choices some 2> "$T/err"; [ $? -eq 2 ] || fail "bad --choices"
grep -q "choices must be auto, all, changes or none" "$T/err" || fail "bad --choices message"
out=$("$ERG_BIN" frontier "$T/seq9.json" --csv) || fail "seq9 csv rc $?"
echo "$out" | head -1 | grep -q ",e1,e2,e3,e4,e5,e6,e7,e8,e9$" || fail "csv lacks all elements"

# A sequence with mixed static powers inside multi is padded at the state it ends in (b's 100 W):
# exact, no warning. a slow: 20 + 100 + 100*7 + 5 = 825 J beats a fast: 10 + 100 + 100*8 + 5 = 915 J.
cat > "$T/mixed.json" <<'JSON'
{"erg": "schedule/1",
 "signatures": {
   "a": {"device": "g", "points": [
      {"omega_device": {"mhz": 1400}, "static_power_w": 10, "time_s": 1, "dynamic_energy_j": 5},
      {"omega_device": {"mhz": 1400}, "static_power_w": 10, "time_s": 2, "dynamic_energy_j": 5}]},
   "b": {"device": "g", "omega_device": {"mhz": 900}, "static_power_w": 100, "time_s": 1, "dynamic_energy_j": 0},
   "c": {"device": "h", "static_power_w": 0, "time_s": 10, "dynamic_energy_j": 0}},
 "expr": {"multi": [{"seq": ["a", "b"]}, "c"]}}
JSON
out=$("$ERG_BIN" frontier "$T/mixed.json" --json 2> "$T/err") || fail "mixed rc $?"
echo "$out" | tr -d ' \n' | grep -q '"energy_j":825.0,"static_energy_j":820.0,"dynamic_energy_j":5.0,"bound_j":825.0,"choice":{"a":1,' || fail "mixed json: $out"
echo "$out" | grep -q inexact_padding && fail "mixed json still has inexact_padding: $out"
[ ! -s "$T/err" ] || fail "mixed: unexpected stderr: $(cat "$T/err")"
# The same plan as a compose schedule (b on its own device so each device has one static power):
# erg compose and erg frontier give the same 825 J.
cat > "$T/agree.json" <<'JSON'
{"erg": "schedule/1",
 "devices": {"g": {"static_power_w": 10}, "g2": {"static_power_w": 100}, "h": {"static_power_w": 0}},
 "signatures": {
   "a": {"device": "g", "time_s": 2, "dynamic_energy_j": 5},
   "b": {"device": "g2", "time_s": 1, "dynamic_energy_j": 0},
   "c": {"device": "h", "time_s": 10, "dynamic_energy_j": 0}},
 "expr": {"multi": [{"seq": ["a", "b"]}, "c"]}}
JSON
"$ERG_BIN" compose --json "$T/agree.json" | tr -d ' \n' | grep -q '"energy_j":825.0,' || fail "compose agree: $("$ERG_BIN" compose "$T/agree.json")"
"$ERG_BIN" frontier --json "$T/agree.json" | tr -d ' \n' | grep -q '"energy_j":825.0,' || fail "frontier agree"

"$ERG_BIN" frontier "$T/par.json" --deadline 1 --budget 2 2> /dev/null; [ $? -eq 2 ] || fail "both"
"$ERG_BIN" frontier 2> /dev/null; [ $? -eq 2 ] || fail "no file"
"$ERG_BIN" frontier "$T/par.json" --bogus 2> "$T/err"; [ $? -eq 2 ] || fail "bogus option"
grep -q "^erg frontier: unknown option '--bogus'$" "$T/err" || fail "bogus message: $(cat "$T/err")"
[ "$(grep -c "unknown option" "$T/err")" -eq 1 ] || fail "bogus: more than one message: $(cat "$T/err")"
"$ERG_BIN" frontier "$T/par.json" --deadline 2> "$T/err"; [ $? -eq 2 ] || fail "--deadline without value"
grep -q "^erg frontier: option '--deadline' needs a value$" "$T/err" || fail "no-value message: $(cat "$T/err")"
"$ERG_BIN" frontier "$T/par.json" --json=1 2> "$T/err"; [ $? -eq 2 ] || fail "--json=1"
grep -q "^erg frontier: option '--json' takes no value$" "$T/err" || fail "takes-no-value message: $(cat "$T/err")"
"$ERG_BIN" frontier "$T/missing.json" 2> /dev/null; [ $? -eq 2 ] || fail "missing file"
# DAG with a declared transition: the switch (5 s, 100 J) is charged, so the mixed plan
# n1=0 n2=1 (3 s, 110 J at s = 0) never appears; with --method relax it is refused, exit 2.
cat > "$T/tr.json" <<'JSON'
{"erg": "schedule/1", "devices": {"g": {"static_power_w": 0}},
 "signatures": {"A": {"device": "g", "points": [
    {"omega_device": {"f": 1}, "time_s": 1, "dynamic_energy_j": 5},
    {"omega_device": {"f": 0}, "time_s": 2, "dynamic_energy_j": 1}]}},
 "transitions": [{"device": "g", "from": {"f": 1}, "to": {"f": 0}, "time_s": 5, "dynamic_energy_j": 100},
                 {"device": "g", "from": {"f": 0}, "to": {"f": 1}, "time_s": 5, "dynamic_energy_j": 100}],
 "nodes": [{"id": "n1", "signature": "A"}, {"id": "n2", "signature": "A"}],
 "edges": [["n1", "n2"]]}
JSON
out=$("$ERG_BIN" frontier "$T/tr.json" --csv) || fail "transition dag exit $?"
[ "$(echo "$out" | tail -n +2)" = "$(printf '2,10,0,10,10,0,0,0\n4,2,0,2,2,0,1,1')" ] || fail "transition dag frontier: $out"
"$ERG_BIN" frontier "$T/tr.json" --method relax 2> "$T/err"; rc=$?
[ $rc -eq 2 ] || fail "transition relax rc $rc"
grep -q "cannot charge the transition" "$T/err" || fail "transition relax message: $(cat "$T/err")"
"$ERG_BIN" frontier --help | grep -q "Usage: erg frontier" || fail "help"
# the element count is erg compose's (signatures; the expression's idle gaps beside it)
ex=${ERG_TEST_SOURCE_DIR:?}/examples
for f in pipeline-2gpu pipeline-2gpu-dag; do
    n=$("$ERG_BIN" compose "$ex/$f.json" | awk '$1 == "elements" { print $2 }')
    "$ERG_BIN" frontier "$ex/$f.json" --choices changes > "$T/fr" || fail "$f frontier"
    grep -q " $n elements" "$T/fr" || fail "$f: compose counts $n elements, frontier: $(cat "$T/fr")"
done
"$ERG_BIN" frontier "$ex/pipeline-2gpu.json" | grep -q " 10 elements + 6 idle$" || fail "pipeline-2gpu: the idle gaps are not counted apart"
echo "ok"
