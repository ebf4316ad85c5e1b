#!/bin/sh
# I/O faults (docs/guarantees.md): standard output on a full disk (/dev/full), output onto a
# device or a symlink, inputs cut at every byte, a folder or a device where a file belongs, input
# trickling through a pipe, SIGPIPE and SIGINT in the middle of a run. Every run ends with exit 0
# or 2 (1 where the command reports a check; 130/141 for the signals), a message naming the file,
# no sanitizer report, and no output file half-written or temporary file left.
set -u
erg=${ERG_BIN:?}
src=${ERG_TEST_SOURCE_DIR:?}
T=$(mktemp -d "${TMPDIR:-/tmp}/erg-fault-io.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=99"
export ERG_STORE="$T/store.db"
fail=0
bad() { echo "FAIL: $*"; sed -n '1,10p' "$T/err" 2> /dev/null; fail=1; }
sane() { ! grep -q 'Sanitizer\|runtime error' "$T/err"; }
ex=$src/examples
sig=$ex/insensitive/softmax-null.json
sig2=$ex/insensitive/softmax-hot.json
sched=$ex/pipeline-2gpu.json
opsched=$src/tests/fuzz/seeds/opsched-frontier-doc.json
trace=$src/tests/trace/data/two_gpus.json
cfg=$src/tests/predict/configs/tiny-llama.json
"$erg" store put "$sig" > /dev/null 2>&1 || bad "store put"

# --- standard output on a full disk: exit 2 and say so (they used to exit 0 with nothing written)
for c in "compose $sched" "compose --json $sched" "frontier $opsched" "frontier --csv $opsched" \
    "trace report $trace" "trace report --json $trace" "trace import -o - $trace" \
    "predict model $cfg --target $src/models/cpu" "predict model $cfg --target $src/models/cpu --json" \
    "predict sweep $cfg --target $src/models/cpu --set heads=4:8:4 --json" \
    "fit ops $src/models/cpu/profile/ops.csv -o $T/fit.json --json" "insensitive $sig $sig2" "store list" \
    "store list --json" "store history softmax --json" "compare --json $sched $sched" \
    "store get softmax" "meters --no-probe --backends estimator" "--help" \
    "--version" "compose --help"; do
    # shellcheck disable=SC2086
    "$erg" $c > /dev/full 2> "$T/err"
    rc=$?
    { [ "$rc" -eq 2 ] && grep -q 'write error' "$T/err" && sane; } || bad "erg $c > /dev/full: exit $rc"
done

# --- output onto a device or a symlink is refused, the target untouched
echo keep > "$T/target.json"
ln -s target.json "$T/link.json"
ln -s missing.json "$T/dangling.json"
for o in /dev/full "$T/dangling.json" "$T"; do
    "$erg" trace import -o "$o" "$trace" > /dev/null 2> "$T/err"
    rc=$?
    { [ "$rc" -eq 2 ] && grep -q "$o" "$T/err" && sane; } || bad "trace import -o $o: exit $rc"
done
[ -e "$T/missing.json" ] && bad "the dangling symlink's target was created"
# a symlink to a file stays a symlink: the file it names is written (docs/meters.md)
"$erg" trace import -o "$T/link.json" "$trace" > /dev/null 2> "$T/err" || bad "trace import -o link"
{ [ -L "$T/link.json" ] && grep -q 'schedule/1' "$T/target.json"; } || bad "the symlink was replaced"

# --- an input cut at every byte: exit 2 naming the file (or 0/1 when the cut left valid JSON)
cut_each() { # cut_each FILE STEP ALLOWED CMD... (the cut copy is the last argument)
    f=$1 step=$2 allowed=$3
    shift 3
    n=$(wc -c < "$f")
    k=0
    while [ "$k" -le "$n" ]; do
        head -c "$k" "$f" > "$T/cut.json"
        "$@" "$T/cut.json" > /dev/null 2> "$T/err"
        rc=$?
        case " $allowed " in *" $rc "*) ;; *) bad "$* cut at byte $k of $(basename "$f"): exit $rc" ;; esac
        sane || bad "$* cut at byte $k: sanitizer report"
        { [ "$rc" -ne 2 ] || grep -q 'cut.json' "$T/err"; } || bad "$* cut at byte $k: no file named"
        k=$((k + step))
    done
}
cut_each "$sig" 1 "1 2" "$erg" insensitive "$sig2"
cut_each "$opsched" 11 "0 2" "$erg" frontier
cut_each "$trace" 13 "0 2" "$erg" trace report
gzip -c "$trace" > "$T/trace.json.gz"
cut_each "$T/trace.json.gz" 5 "0 2" "$erg" trace report

# --- a folder or a device where a file belongs
mkdir "$T/dir.json"
for c in "compose $T/dir.json" "frontier $T/dir.json" "trace report $T/dir.json" \
    "insensitive $T/dir.json $sig" "predict model $T/dir.json --target $src/models/cpu" \
    "compose /dev/zero" "trace report /dev/zero" "store put /dev/zero"; do
    # shellcheck disable=SC2086
    "$erg" $c > /dev/null 2> "$T/err"
    rc=$?
    { [ "$rc" -eq 2 ] && sane && grep -q 'erg' "$T/err"; } || bad "erg $c: exit $rc"
done

# --- input trickling through a pipe (7 bytes at a time): the same result as from the file
trickle() { /usr/bin/python3 -c '
import os, sys, time
d = open(sys.argv[1], "rb").read()
for i in range(0, len(d), 7):
    os.write(1, d[i:i + 7])
    time.sleep(0.0002)
' "$1"; }
for c in "frontier --json $opsched" "trace report --json $trace" "compose --json $sched"; do
    f=${c##* }
    # shellcheck disable=SC2086
    "$erg" ${c% *} "$f" > "$T/good" 2>&1
    # shellcheck disable=SC2086
    trickle "$f" | "$erg" ${c% *} - > "$T/out" 2> "$T/err"
    rc=$?
    { [ "$rc" -eq 0 ] && sane && cmp -s "$T/good" "$T/out"; } || bad "erg $c through a slow pipe: exit $rc"
done

# --- SIGPIPE and SIGINT: a larger trace (20000 kernels), import cut short
/usr/bin/python3 - "$trace" "$T/big.json" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = [e for e in d["traceEvents"] if e.get("cat") == "kernel"]
out = [e for e in d["traceEvents"] if e.get("cat") != "kernel"]
for i in range(20000):
    e = dict(k[i % len(k)])
    e["ts"] = k[0]["ts"] + i * 10.0
    e["dur"] = 5.0
    out.append(e)
d["traceEvents"] = out
json.dump(d, open(sys.argv[2], "w"))
PY
"$erg" trace import -o "$T/good.json" "$T/big.json" > /dev/null 2>&1 || bad "import of the larger trace"
("$erg" trace import -o - "$T/big.json" 2> "$T/err"; echo $? > "$T/rc") | head -c 1 > /dev/null
rc=$(cat "$T/rc")
{ [ "$rc" -eq 141 ] || [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ]; } && sane || bad "import into a closed pipe: exit $rc"
for delay in 0 0.05 0.2 0.5; do
    rm -f "$T/out.json"
    env --default-signal=INT "$erg" trace import -o "$T/out.json" "$T/big.json" > /dev/null 2> "$T/err" &
    pid=$!
    sleep "$delay"
    kill -INT "$pid" 2> /dev/null
    wait "$pid"
    rc=$?
    { [ "$rc" -eq 130 ] || [ "$rc" -eq 0 ]; } && sane || bad "SIGINT after $delay s: exit $rc"
    [ -e "$T/out.json" ] && ! cmp -s "$T/out.json" "$T/good.json" && bad "SIGINT after $delay s left a partial out.json"
    ls -a "$T" | grep -q 'out\.json.' && bad "SIGINT after $delay s left a temporary file"
done

[ "$fail" = 0 ] && echo "ok: every I/O fault ended cleanly"
exit $fail
