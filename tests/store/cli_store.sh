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
# issue 16: reads never write; a foreign database and an empty file are refused unchanged; a
# locked store is waited for with a message; a multi-file put is all or nothing.
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
"$erg" store --store "$t/s.db" put "$t/a.json" || fail "put for the read checks"
sum0=$(cksum < "$t/s.db")
"$erg" store --store "$t/s.db" list > /dev/null || fail "list"
"$erg" store --store "$t/s.db" history gemm-4096 > /dev/null || fail "history"
[ "$(cksum < "$t/s.db")" = "$sum0" ] || fail "list/history changed the store"
$PY -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("create table t(x)"); c.commit()' "$t/other.db"
sum1=$(cksum < "$t/other.db")
for a in list "put $t/a.json"; do
    # shellcheck disable=SC2086
    "$erg" store --store "$t/other.db" $a > /dev/null 2> "$t/err"; rc=$?
    [ $rc -eq 2 ] || fail "store $a on a foreign database exited $rc"
    grep -q "without erg's tables, not an erg signature store (left unchanged)" "$t/err" || fail "foreign: $(cat "$t/err")"
done
[ "$(cksum < "$t/other.db")" = "$sum1" ] || fail "a foreign database was changed"
: > "$t/empty.db"
"$erg" store --store "$t/empty.db" put "$t/a.json" 2> "$t/err"; rc=$?
[ $rc -eq 2 ] && grep -q "an empty file, not an erg signature store" "$t/err" || fail "empty file: $rc $(cat "$t/err")"
[ ! -s "$t/empty.db" ] || fail "the empty file was written"
# another process holds the write lock until erg has said it waits (a handshake, so that no
# timing of a loaded machine decides the outcome); then erg stores
$PY -c '
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("begin exclusive")
open(sys.argv[2], "w").close()
for _ in range(1200):  # at most 120 s
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.1)
c.execute("rollback")
' "$t/s.db" "$t/locked" "$t/release" &
lk=$!
i=0; while [ ! -e "$t/locked" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$t/locked" ] || fail "the lock holder did not start"
sed 's/"gemm-4096"/"gemm-locked"/' "$t/a.json" > "$t/l.json"
"$erg" store --store "$t/s.db" put "$t/l.json" 2> "$t/err" &
pp=$!
i=0; while ! grep -q "waiting for another process to release the store" "$t/err" 2> /dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
touch "$t/release"
wait $pp || fail "put after a lock: $(cat "$t/err")"
wait $lk
grep -q "waiting for another process to release the store" "$t/err" || fail "no waiting message: $(cat "$t/err")"
"$erg" store --store "$t/s.db" get gemm-locked > /dev/null 2>&1 || fail "the waited put did not store"
echo "store cli: ok"
