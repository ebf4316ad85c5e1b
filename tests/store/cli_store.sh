#!/bin/sh
# End-to-end: erg store put/list/get/rm, and the bad inputs (exit 2, nothing stored).
set -u
erg=${ERG_BIN:?}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$t/a.json" <<'J'
{"erg": "signature/1", "name": "gemm-4096", "device": "gpu0", "static_power_w": 60,
 "time_s": 0.002, "dynamic_energy_j": 0.5, "time_var_s2": 1e-8, "energy_var_j2": 0.0001, "grade": "hw_shunt", "runs": 10}
J
cat > "$t/bad.json" <<'J'
{"erg": "signature/1", "name": "bad", "static_power_w": 60,
 "time_s": -1, "dynamic_energy_j": 0.5}
J
# A bad file among good ones: exit 2, the message names the file, and nothing is stored.
"$erg" store --store "$t/s.db" put "$t/a.json" "$t/bad.json" 2> "$t/err"; rc=$?
[ $rc -eq 2 ] || fail "bad put exited $rc"
grep -q "bad.json" "$t/err" || fail "error does not name the file: $(cat "$t/err")"
[ ! -e "$t/s.db" ] || fail "store created despite the bad input"

"$erg" store --store "$t/s.db" put "$t/a.json" || fail "put"
"$erg" store --store "$t/s.db" list --json > "$t/list.json" || fail "list"
grep -q '"name": "gemm-4096"' "$t/list.json" || fail "list lacks the signature: $(cat "$t/list.json")"
grep -q '"energy_j": 0.62' "$t/list.json" || fail "energy_j is not 60*0.002+0.5: $(cat "$t/list.json")"
"$erg" store --store "$t/s.db" get gemm-4096 -o "$t/out.json" || fail "get"
grep -q '"erg": "signature/1"' "$t/out.json" || fail "get wrote no signature/1"
"$erg" store --store "$t/s.db" get nope 2> "$t/err"; rc=$?
[ $rc -eq 2 ] || fail "get of a missing name exited $rc"
grep -q "nope" "$t/err" || fail "missing-name error does not name it"
# Replace it twice: history lists the two earlier versions, newest first, and get --previous takes one out.
sed 's/"time_s": 0.002/"time_s": 0.004/' "$t/a.json" > "$t/a2.json"
sed 's/"time_s": 0.002/"time_s": 0.008/' "$t/a.json" > "$t/a3.json"
"$erg" store --store "$t/s.db" put "$t/a2.json" || fail "put a2"
"$erg" store --store "$t/s.db" put "$t/a3.json" || fail "put a3"
"$erg" store --store "$t/s.db" history gemm-4096 --json > "$t/h.json" || fail "history"
python3 - "$t/h.json" <<'P' || fail "history content: $(cat "$t/h.json")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["erg"] == "store-list/1" and h["name"] == "gemm-4096", h
v = [(e["version"], e["time_s"]) for e in h["signatures"]]
assert v == [(1, 0.004), (2, 0.002)], v
P
"$erg" store --store "$t/s.db" get gemm-4096 --previous 2 -o "$t/old.json" || fail "get --previous"
grep -q '"time_s": 0.002' "$t/old.json" || fail "get --previous 2 is not the first version: $(cat "$t/old.json")"
"$erg" store --store "$t/s.db" get gemm-4096 --previous 3 -o "$t/none.json" 2> "$t/err"; rc=$?
[ $rc -eq 2 ] || fail "get --previous 3 exited $rc"
grep -q "2 earlier versions" "$t/err" || fail "message: $(cat "$t/err")"
[ ! -e "$t/none.json" ] || fail "get --previous 3 wrote a file"
"$erg" store --store "$t/s.db" get gemm-4096 --previous 0 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "--previous 0 exited $rc"
"$erg" store --store "$t/s.db" rm gemm-4096 || fail "rm"
"$erg" store --store "$t/s.db" get gemm-4096 2>/dev/null && fail "rm did not remove"
"$erg" store --store "$t/none.db" list 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "list of a missing store exited $rc"
"$erg" store --store "$t/s.db" frobnicate 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "unknown action exited $rc"
"$erg" store --bogus list 2> "$t/err"; rc=$?
[ $rc -eq 2 ] || fail "unknown option exited $rc"
[ "$(wc -l < "$t/err")" -eq 2 ] || fail "unknown option: expected one message and the hint: $(cat "$t/err")"
grep -q "unknown option '--bogus'" "$t/err" || fail "unknown option not named: $(cat "$t/err")"
echo "store cli: ok"
