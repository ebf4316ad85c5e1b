#!/bin/sh
# erg measure as users of perf stat and hyperfine expect, end to end on a fake powercap tree under
# ERG_ROOT: the measured command advances the fake counter file itself.
set -u
erg=${ERG_BIN:?}
fail() { echo "FAIL: $*" >&2; [ -f "$T/out" ] && cat "$T/out" >&2; [ -f "$T/err" ] && cat "$T/err" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/erg-proto-XXXXXX")
trap 'rm -rf "$T"' EXIT
R=$T/root
PC=$R/sys/class/powercap
mkdir -p "$PC/intel-rapl:1" "$R/proc"
echo psys > "$PC/intel-rapl:1/name"
echo 262143328850 > "$PC/intel-rapl:1/max_energy_range_uj"
printf "%020d\n" 4000000 > "$PC/intel-rapl:1/energy_uj"
printf 'cpu  100 0 0 100 0 0 0 0 0 0\n' > "$R/proc/stat"
export ERG_ROOT=$R XDG_CACHE_HOME=$T/cache ERG_NO_PROGRESS=1
unset ERG_BACKENDS ERG_NVML_LIB
P=$PC/intel-rapl:1/energy_uj
# one run: 3 steps of 0.5 J (a counter advances in steps), with the machine busy 30 jiffies
adv='for k in 1 2 3; do sleep 0.02; read w < "$0"; printf "%020d\n" $(expr "$w" + 500000) 1<> "$0"; done; read c u n s i r < "$1"; printf "cpu  %d 0 0 %d 0 0 0 0 0 0\n" $((u + 30)) $i > "$1"'

# --- text: hyperfine-like statistics, CPU times, scope said, the table aligned around '±'
"$erg" measure -r 3 --baseline none --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err" || fail "measure text"
grep -q '^Time:     0\.[0-9]* ± [0-9.]* s   \[median [0-9.e-]*, min [0-9.e-]*, max [0-9.e-]*\]$' "$T/out" || fail "time mean ± sd, median, min, max"
grep -q '^CPU:      user [0-9.]* ± [0-9.?]* s, system [0-9.]* ± [0-9.?]* s; erg itself [0-9.e-]* s per run$' "$T/out" || fail "user and system CPU time, erg's own"
grep -q "^Scope:    machine-wide (every process on the host is in these figures); the command's share of the machine's CPU time is [0-9.e-]* %, about [0-9.e-]* J of the net energy (estimator)$" "$T/out" || fail "scope and attribution said"
grep -q '^  rapl-sysfs:psys  *psys  *hw_shunt  *ok  *1.5 ± 0  ' "$T/out" || fail "psys 1.5 ± 0 J"
grep -q '^Total: 1.5 ± 0 J gross' "$T/out" || fail "total"
python3 - "$T/out" <<'PY' || fail "columns align (in characters, '±' is one)"
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
head = [l for l in lines if l.startswith("  channel")][0]
row = [l for l in lines if l.startswith("  rapl-sysfs:psys")][0]
# the column after the two '±' cells starts at the same character in both
assert head.index(" flags / reason") == row.index(" - [in total]"), (head, row)
PY

# --- one run: its sd is unknown, said; JSON says the floor stands for it
"$erg" measure -r 1 --baseline none --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err" || fail "one run"
grep -q '^Total: 1.5 ± ? J gross' "$T/out" || fail "one run: sd '?'"
grep -q "^Note: one run: its variance is unknown, not 0" "$T/out" || fail "one run: said"
"$erg" measure -r 1 --json --baseline none --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err" || fail "one run json"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"sd_source":"meter_floor"' "$T/flat" || fail "sd_source meter_floor"
grep -q '"scope":"machine"' "$T/flat" || fail "scope in JSON"
grep -q '"attribution":{"method":"cpu_time_share","cpu_share":[0-9.e-]*,"energy_j":[0-9.e-]*,"grade":"estimator"' "$T/flat" || fail "attribution in JSON"

# --- exports beside the table; the timeline per channel; a device is written into, not replaced
"$erg" measure -r 2 --baseline none --export-json "$T/m.json" --export-csv "$T/m.csv" --timeline "$T/tl.csv" --period 0.01 --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err" || fail "exports"
grep -q '^Total: 1.5 ± 0 J' "$T/out" || fail "table still printed"
grep -q '"erg": "measurement/1"' "$T/m.json" || fail "export json"
grep -q '^total,,,hw_shunt,ok,' "$T/m.csv" || fail "export csv"
head -1 "$T/tl.csv" | grep -qx 't_s,run,rapl-sysfs:psys_w' || fail "timeline header"
awk -F, 'NR > 1 && ($2 < 1 || $2 > 2) { exit 1 }' "$T/tl.csv" || fail "timeline rows name runs 1..2"
# the timeline drawn in the format its extension names
"$erg" measure -r 2 --baseline none --plot "$T/tl.png" --period 0.01 --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err" || fail "plot png"
head -c 4 "$T/tl.png" | od -An -c | grep -q 'P   N   G' || fail "timeline png magic"
"$erg" measure -r 2 --baseline none --plot "$T/tl.pdf" --period 0.01 --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err" || fail "plot pdf"
head -c 5 "$T/tl.pdf" | grep -q '%PDF-' || fail "timeline pdf magic"
rm -f "$T/ran"
"$erg" measure -r 1 --plot "$T/tl.gif" --backends rapl-sysfs -- touch "$T/ran" > "$T/out" 2> "$T/err"; [ $? -eq 2 ] || fail "plot gif: exit 2"
[ -e "$T/ran" ] && fail "plot gif: nothing runs"
grep -q "the plot's extension names its format: .svg, .png or .pdf" "$T/err" || fail "plot format message"
"$erg" measure -r 1 --baseline none --export-json /dev/null --backends rapl-sysfs -- true > /dev/null 2> "$T/err" || fail "export to /dev/null"
[ -c /dev/null ] || fail "/dev/null is still a device"
ln -s "$T/m.json" "$T/link.json"; chmod 600 "$T/m.json"
"$erg" measure -r 1 --baseline none --export-json "$T/link.json" --backends rapl-sysfs -- true > /dev/null 2> "$T/err" || fail "export through a symlink"
[ -L "$T/link.json" ] || fail "a symlink stays a symlink"
[ "$(stat -c %a "$T/m.json")" = 600 ] || fail "the mode of a replaced file is kept"
ls "$T" | grep -q '\.tmp\.' && fail "no temporary left behind"

# --- output paths are checked before the runs; a full disk: the report first, then the failure
rm -f "$T/ran"
"$erg" measure -r 1 --export-csv "$T/none/x.csv" --backends rapl-sysfs -- touch "$T/ran" > "$T/out" 2> "$T/err"; [ $? -eq 2 ] || fail "export into a missing folder: exit 2"
[ -e "$T/ran" ] && fail "export into a missing folder: nothing runs"
grep -q "cannot write the CSV there: $T/none: No such file or directory" "$T/err" || fail "export folder message"
if [ -w /dev/full ]; then
    "$erg" measure -r 2 --baseline 0 --signature /dev/full --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err"; [ $? -eq 2 ] || fail "signature on a full disk: exit 2"
    grep -q '^Total: 1.5 ± 0 J' "$T/out" || fail "full disk: the report is printed first"
    grep -q "No space left on device" "$T/err" || fail "full disk: said"
fi

# --- --baseline W is the signature's static power, calibration or not
cat > "$T/cal.json" <<JSON
{"erg": "calibration/1", "duration_s": 1, "window_s": 0.01, "idle_power_w": 2.0,
 "channels": [{"id": "rapl-sysfs:psys", "idle_power_w": 2.0, "cv": 0.1}]}
JSON
"$erg" measure -r 2 --calibration "$T/cal.json" --baseline 3 --signature "$T/sig.json" --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err" || fail "baseline W signature"
grep -q '"static_power_w": 3' "$T/sig.json" || fail "--baseline 3 gives s = 3 W"

# --- compare takes measurement files; one run each: not confident on a 0.01 % difference
"$erg" measure -r 1 --baseline none --export-json "$T/a.json" --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > /dev/null 2> "$T/err" || fail "measure a"
adv2=$(echo "$adv" | sed 's/500000/500050/')
"$erg" measure -r 1 --baseline none --export-json "$T/b.json" --backends rapl-sysfs -- sh -c "$adv2" "$P" "$R/proc/stat" > /dev/null 2> "$T/err" || fail "measure b"
"$erg" compare "$T/a.json" "$T/b.json" > "$T/out" 2> "$T/err"; [ $? -eq 1 ] || fail "compare of two single runs 0.01 % apart: indistinguishable (exit 1)"
grep -q "cannot be told apart" "$T/out" || fail "compare says so"
adv3=$(echo "$adv" | sed 's/500000/1000000/')
"$erg" measure -r 1 --baseline none --export-json "$T/c.json" --backends rapl-sysfs -- sh -c "$adv3" "$P" "$R/proc/stat" > /dev/null 2> "$T/err" || fail "measure c"
"$erg" compare "$T/a.json" "$T/c.json" > "$T/out" 2> "$T/err" || fail "compare 1.5 J with 3 J: confident"
grep -q "A confidently uses less energy than B" "$T/out" || fail "compare 1.5 J < 3 J"

# --- bad input files name file:line:col and the member, exit 2, nothing measured or written:
# calibration/1 (line 2 ` "channels": [{"id": "rapl-sysfs:psys", "idle_power_w": "2", ...`: '{'
# at 15, "idle_power_w" 41-54, the value at 57) and measurement/1 (line 4 `  "static_power_w": -1,
# ...`: -1 at 21)
printf '{"erg": "calibration/1", "duration_s": 1, "window_s": 0.01, "idle_power_w": 2.0,\n "channels": [{"id": "rapl-sysfs:psys", "idle_power_w": "2", "cv": 0.1}]}\n' > "$T/calbad.json"
"$erg" measure -r 2 --calibration "$T/calbad.json" --signature "$T/sigbad.json" --backends rapl-sysfs -- sh -c "$adv" "$P" "$R/proc/stat" > "$T/out" 2> "$T/err"
[ $? -eq 2 ] || fail "bad calibration: exit 2"
grep -q '^erg: .*calbad.json:2:57: channels\[0\].idle_power_w: expected a number$' "$T/err" || fail "bad calibration: placed: $(cat "$T/err")"
[ ! -e "$T/sigbad.json" ] || fail "bad calibration: nothing written"
printf '{"erg": "measurement/1", "runs": 3,\n "time_s": {"mean": 0.1, "sd": 0},\n "total": {"energy_j": {"mean": 5, "sd": 0},\n  "static_power_w": -1, "grade": "hw_shunt"}}\n' > "$T/mbad.json"
"$erg" compare "$T/mbad.json" "$T/a.json" > "$T/out" 2> "$T/err"
[ $? -eq 2 ] || fail "bad measurement: exit 2"
grep -q '^erg: .*mbad.json:4:21: total.static_power_w: must not be negative (got -1)$' "$T/err" || fail "bad measurement: placed: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "bad measurement: nothing on stdout"

# --- short work repeated inside one window, said
"$erg" measure -r 1 --min-window 0.2 --baseline none --json --backends rapl-sysfs -- sh -c 'sleep 0.05; read w < "$0"; printf "%020d\n" $(expr "$w" + 100000) 1<> "$0"' "$P" > "$T/out" 2> "$T/err" || fail "min-window"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"repetitions":[2-9]' "$T/flat" || fail "repetitions counted"
grep -q '"energy_j":{"mean":0.1,' "$T/flat" || fail "energy per repetition 0.1 J"

# --- per-run timeout: status 124, flagged, exit 1
"$erg" measure -r 1 --timeout 0.2 --backends rapl-sysfs -- sleep 30 > "$T/out" 2> "$T/err"; [ $? -eq 1 ] || fail "timeout: exit 1"
grep -q "run 1 exited 124 (timed out)" "$T/out" || fail "timeout said"

# --- background children that outlive the command are flagged
"$erg" measure -r 1 --backends rapl-sysfs -- sh -c 'sleep 0.3 & exit 0' > "$T/out" 2> "$T/err" || fail "background child"
grep -q "^Warning: background children of the work outlived it" "$T/out" || fail "background children flagged"

# --- SIGINT / SIGTERM: runs stop, the command's group is killed, completed runs reported
for sig in INT TERM; do
    rm -f "$T/started" "$T/late"
    "$erg" measure -r 50 --baseline none --backends rapl-sysfs -- sh -c 'touch "$0"; (sleep 1; touch "$1") & sleep 30' "$T/started" "$T/late" > "$T/out" 2> "$T/err" &
    pid=$!
    k=0; while [ ! -e "$T/started" ] && [ $k -lt 200 ]; do sleep 0.05; k=$((k + 1)); done
    kill -$sig $pid
    wait $pid; rc=$?
    want=130; [ $sig = TERM ] && want=143
    [ $rc -eq $want ] || fail "SIG$sig: exit $want (got $rc)"
    grep -q "^Runs: 0 of 0 succeeded (interrupted: 0 of 50 requested were run)" "$T/out" || fail "SIG$sig: runs completed reported"
    sleep 1.5
    [ -e "$T/late" ] && fail "SIG$sig: the command's background child was killed with its group"
done
# --- calibrate: SIGINT stops it, nothing written, exit 130 (once its handler is installed)
"$erg" calibrate --duration 60 --window 0.05 --out "$T/cal-int.json" --backends rapl-sysfs > "$T/out" 2> "$T/err" &
pid=$!
k=0
while [ $k -lt 200 ]; do
    m=$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$pid/status 2>/dev/null)
    [ -n "$m" ] && [ $((0x$m & 2)) -ne 0 ] && break
    sleep 0.05; k=$((k + 1))
done
sleep 0.2
kill -INT $pid; wait $pid; rc=$?
[ $rc -eq 130 ] || fail "calibrate SIGINT: exit 130 (got $rc)"
grep -q "^erg: calibration interrupted after [0-9.]* s: nothing written$" "$T/err" || fail "calibrate interrupted: said"
[ -e "$T/cal-int.json" ] && fail "calibrate interrupted: nothing written"
ls "$T" | grep -q '\.tmp\.' && fail "calibrate interrupted: no temporary"
# --- /proc/stat is read through the root-fd seam: a FIFO there is refused, never waited on (the
# protocol opened it by hand and blocked for good, deaf to SIGTERM), and a symlink out of the
# root is not followed; either way there is no per-process share, said
R2=$T/root2
mkdir -p "$R2/sys/class/powercap/intel-rapl:1" "$R2/proc"
cp "$PC/intel-rapl:1/name" "$PC/intel-rapl:1/max_energy_range_uj" "$PC/intel-rapl:1/energy_uj" "$R2/sys/class/powercap/intel-rapl:1/"
mkfifo "$R2/proc/stat" || fail "mkfifo"
ERG_ROOT=$R2 timeout -s KILL 60 "$erg" measure -r 1 --baseline none --backends rapl-sysfs -- true > "$T/out" 2> "$T/err" || fail "a FIFO at proc/stat: exit $?"
grep -q "^Scope: .*no per-process share" "$T/out" || fail "a FIFO at proc/stat: no share said"
rm "$R2/proc/stat"
ln -s "$R/proc/stat" "$R2/proc/stat" # absolute: taken inside root2, where it does not exist
ERG_ROOT=$R2 "$erg" measure -r 1 --baseline none --backends rapl-sysfs -- true > "$T/out" 2> "$T/err" || fail "a symlink out of the root: exit $?"
grep -q "^Scope: .*no per-process share" "$T/out" || fail "a symlink out of the root was followed"
echo "cli protocol: ok"
