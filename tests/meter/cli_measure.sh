#!/bin/sh
# End to end: erg meters / measure / calibrate on fake trees under ERG_ROOT. The measured command
# itself advances (or freezes, or wraps, or glitches) the fake counter file.
set -u
erg=${ERG_BIN:?}
fail() { echo "FAIL: $*" >&2; [ -f "$T/out" ] && cat "$T/out" >&2; [ -f "$T/err" ] && cat "$T/err" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/erg-cli-XXXXXX")
trap 'rm -rf "$T"' EXIT
R=$T/root
PC=$R/sys/class/powercap
zone() { mkdir -p "$PC/$1"; echo "$2" > "$PC/$1/name"; printf "%020d\n" "$3" > "$PC/$1/energy_uj"; echo "${4:-262143328850}" > "$PC/$1/max_energy_range_uj"; }
zone intel-rapl:0 package-0 1000000
zone intel-rapl:0:0 core 2000000
zone intel-rapl:0:1 dram 3000000
zone intel-rapl:1 psys 4000000
zone intel-rapl-mmio:0 package-0 7000000
mkdir -p "$R/proc"
printf 'cpu  100 0 0 100 0 0 0 0 0 0\n' > "$R/proc/stat"
export ERG_ROOT=$R XDG_CACHE_HOME=$T/cache
unset ERG_BACKENDS ERG_NVML_LIB
E=$PC/intel-rapl:0/energy_uj
P=$PC/intel-rapl:1/energy_uj

# --- erg meters
"$erg" meters --json --no-probe --backends rapl-sysfs,estimator > "$T/out" 2> "$T/err" || fail "meters exit"
grep -q '"erg": "meters/1"' "$T/out" || fail "meters tag"
grep -q '"id": "rapl-sysfs:package-0/dram"' "$T/out" || fail "dram channel id"
grep -q '"parent": "rapl-sysfs:psys"' "$T/out" || fail "psys parent"
grep -q '"hardware": true' "$T/out" || fail "hardware true"
"$erg" meters > "$T/out" 2>&1 || fail "meters text"
grep -q 'rapl-sysfs:psys' "$T/out" || fail "meters text lists psys"

# --- measure: the command advances package by 5 J and psys by 7 J per run
# (values are rewritten in place at a fixed width, as a counter file changes: no truncation; and
# in steps of at most 1 J, as a real counter advances, so that no interval implies > 1 kW)
cmd='for k in 1 2 3 4 5; do sleep 0.02; read v < "$0"; printf "%020d\n" $(expr "$v" + 1000000) 1<> "$0"; read w < "$1"; printf "%020d\n" $(expr "$w" + 1400000) 1<> "$1"; done'
"$erg" measure -r 3 --json --baseline none --backends rapl-sysfs -- sh -c "$cmd" "$E" "$P" > "$T/out" 2> "$T/err" || fail "measure exit"
grep -q '"erg": "measurement/1"' "$T/out" || fail "measurement tag"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"id":"rapl-sysfs:package-0","domain":"package","device":"package-0","grade":"hw_shunt","state":"ok","reason":"","flags":\[\],"energy_j":{"mean":5.0,"sd":0.0,' "$T/flat" || fail "package 5 J ± 0"
grep -q '"total":{"energy_j":{"mean":7.0,"sd":0.0,' "$T/flat" || fail "total is psys alone (7 J), never psys + package"
grep -q '"grade":"hw_shunt","channels":\["rapl-sysfs:psys"\]' "$T/flat" || fail "total channels"
grep -q '"runs":3' "$T/flat" || fail "runs"
grep -q '"id":"rapl-sysfs:mmio/package-0","domain":"package","device":"package-0","grade":"hw_shunt","state":"[a-z_]*","reason":"[^"]*","flags":\["deduplicated"\]' "$T/flat" || fail "mmio deduplicated"

# --- readings implying impossible power: two climbs of 5 kJ in 0.1 s each: unit_suspect, no figure
ucmd='for k in 1 2 3; do sleep 0.1; read v < "$0"; printf "%020d\n" $(expr "$v" + 5000000000) 1<> "$0"; done; sleep 0.1'
"$erg" measure -r 1 --period 0.02 --json --baseline none --backends rapl-sysfs -- sh -c "$ucmd" "$E" > "$T/out" 2> "$T/err" || fail "unit measure"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"id":"rapl-sysfs:package-0","domain":"package","device":"package-0","grade":"hw_shunt","state":"unit_suspect"' "$T/flat" || fail "unit_suspect"

# --- wrap-around inside the run: counter near its modulus (max_energy_range_uj 99999999999)
printf "%020d\n" 99999000000 > "$E"; echo 99999999999 > "$PC/intel-rapl:0/max_energy_range_uj"
"$erg" measure -r 1 --json --baseline none --backends rapl-sysfs -- sh -c 'sleep 0.05; printf "%020d\n" 99999800000 1<> "$0"; sleep 0.05; printf "%020d\n" 600000 1<> "$0"; sleep 0.05; printf "%020d\n" 1400000 1<> "$0"' "$E" > "$T/out" 2> "$T/err" || fail "wrap measure"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"id":"rapl-sysfs:package-0".*"flags":\["wrap_corrected"\],"energy_j":{"mean":2.4,' "$T/flat" || fail "wrap corrected to 2.4 J"

# --- frozen counter under load: declined for the window, the estimator takes over, labelled
printf "%020d\n" 5000000 > "$E"
burn='i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done'
"$erg" measure -r 1 --json --baseline none --backends rapl-sysfs,estimator -- sh -c "$burn" > "$T/out" 2> "$T/err" || fail "frozen measure"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"id":"rapl-sysfs:package-0","domain":"package","device":"package-0","grade":"hw_shunt","state":"not_live"' "$T/flat" || fail "frozen package not_live"
grep -q '"energy_j":{"mean":null' "$T/flat" || fail "frozen gives null, not 0"
grep -q '"id":"rapl-sysfs:package-0/dram","domain":"dram","device":"package-0","grade":"hw_shunt","state":"not_live"' "$T/flat" || fail "frozen dram not_live"
grep -q '"grade":"estimator","channels":\["estimator:cpu"\]' "$T/flat" || fail "estimator fallback"
grep -q '"note":"thetotalrestsontheestimator' "$T/flat" || fail "estimate note"

# --- a glitch that recovers inside the run: flagged, skipped, never counted twice
printf "%020d\n" 5000000 > "$E"
"$erg" measure -r 1 --period 0.01 --json --baseline none --backends rapl-sysfs -- sh -c 'printf "%020d\n" 10 1<> "$0"; sleep 0.4; printf "%020d\n" 6000000 1<> "$0"' "$E" > "$T/out" 2> "$T/err" || fail "glitch measure"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"id":"rapl-sysfs:package-0".*"flags":\["backwards"\],"energy_j":{"mean":1.0,' "$T/flat" || fail "backwards step skipped, 1 J"

# --- calibrate on the fake tree, then measure with its baseline and write a signature
"$erg" calibrate --duration 0.3 --window 0.05 --backends rapl-sysfs > "$T/out" 2> "$T/err" || fail "calibrate"
[ -s "$T/cache/erg/calibration.json" ] || fail "calibration file at XDG_CACHE_HOME"
grep -q '"erg": "calibration/1"' "$T/cache/erg/calibration.json" || fail "calibration tag"
cat > "$T/cal.json" <<JSON
{"erg": "calibration/1", "duration_s": 1, "window_s": 0.01, "idle_power_w": 2.0,
 "channels": [{"id": "rapl-sysfs:psys", "idle_power_w": 2.0, "cv": 1000}]}
JSON
"$erg" measure -r 2 --stable --calibration "$T/cal.json" --signature "$T/sig.json" --json --backends rapl-sysfs -- sh -c 'for k in 1 2 3; do sleep 0.03; read w < "$0"; printf "%020d\n" $(expr "$w" + 3000000) 1<> "$0"; done' "$P" > "$T/out" 2> "$T/err" || fail "measure with calibration"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"stable":{"reached":true' "$T/flat" || fail "stable reached"
grep -q '"source":"calibration"' "$T/flat" || fail "baseline from calibration"
grep -q '"erg": "signature/1"' "$T/sig.json" || fail "signature tag"
grep -q '"static_power_w": 2' "$T/sig.json" || fail "signature s = calibrated idle power"
grep -q '"runs": 2' "$T/sig.json" || fail "signature runs"

# --- a failing command is reported, not averaged in; erg exits 1
"$erg" measure -r 2 --json --backends rapl-sysfs -- sh -c 'exit 7' > "$T/out" 2> "$T/err"; [ $? -eq 1 ] || fail "failing command exit 1"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"runs":0,"runs_attempted":2,"exit_status":7' "$T/flat" || fail "exit status reported"
grep -q '"per_run":\[{"exit_status":7,"time_s":[0-9.e-]*,"energy_j":' "$T/flat" || fail "per-run records"

# --- warm-up runs are run, not measured; CSV output
echo 0 > "$T/count"
"$erg" measure -r 2 --warmup 3 --csv --baseline none --backends rapl-sysfs -- sh -c 'read n < "$0"; echo $((n+1)) > "$0"' "$T/count" > "$T/out" 2> "$T/err" || fail "warmup measure"
[ "$(cat "$T/count")" = 5 ] || fail "3 warm-up + 2 measured runs"
head -1 "$T/out" | grep -q '^id,domain,device,grade,state,flags,time_s_mean,time_s_sd,energy_j_mean,energy_j_sd,' || fail "csv header"
grep -q '^rapl-sysfs:psys,psys,psys,hw_shunt,' "$T/out" || fail "csv psys row"
grep -q '^total,' "$T/out" || fail "csv total row"

# --- a command that cannot start: exit 2, said
"$erg" measure --backends rapl-sysfs -- "$T/no-such-command" > /dev/null 2> "$T/err"; [ $? -eq 2 ] || fail "unstartable command: exit 2"
grep -q "cannot run" "$T/err" || fail "unstartable command message"

# --- bad input: exit 2 with one line naming the file and place
"$erg" measure 2> "$T/err"; [ $? -eq 2 ] || fail "no command: exit 2"
"$erg" measure -r x -- true 2> "$T/err"; [ $? -eq 2 ] || fail "bad -r: exit 2"
printf '{"erg": "calibration/1",\n "idle_power_w": }\n' > "$T/bad.json"
"$erg" measure --calibration "$T/bad.json" -- true > /dev/null 2> "$T/err"; [ $? -eq 2 ] || fail "bad calibration: exit 2"
grep -q "^erg: $T/bad.json:2:" "$T/err" || fail "bad calibration names file:line:col"
XDG_CACHE_HOME=$T/none "$erg" measure --stable --backends rapl-sysfs -- true > /dev/null 2> "$T/err"; [ $? -eq 2 ] || fail "--stable without calibration: exit 2"
"$erg" calibrate --duration 0.01 2> "$T/err"; [ $? -eq 2 ] || fail "calibrate bad duration"

# --- NVML through the fake library: the command advances the GPU's energy counter file
if [ -n "${ERG_FAKE_NVML:-}" ]; then
    export FAKE_NVML_FILE=$T/nvml.txt
    printf '1 0\n1000 50000 0 0 0 40\n' > "$FAKE_NVML_FILE"
    echo 1000 > "$T/gpu_mj"
    ERG_NVML_LIB=$ERG_FAKE_NVML "$erg" meters --json --no-probe --backends nvml > "$T/out" 2> "$T/err" || fail "nvml meters"
    tr -d ' \n' < "$T/out" > "$T/flat"
    grep -q '"id":"nvml:gpu-0","backend":"nvml","domain":"gpu","device":"gpu-0","label":"FakeGPU0GPU-fake-0000","grade":"hw_shunt"' "$T/flat" || fail "nvml channel"
    gcmd='sleep 0.2; read e < "$1"; e=$(expr "$e" + 3000); echo $e > "$1"; printf "1 0\n%s 50000 0 0 0 40\n" $e > "$0"; sleep 0.05'
    ERG_NVML_LIB=$ERG_FAKE_NVML "$erg" measure -r 2 --json --baseline none --backends nvml -- sh -c "$gcmd" "$FAKE_NVML_FILE" "$T/gpu_mj" > "$T/out" 2> "$T/err" || fail "nvml measure"
    tr -d ' \n' < "$T/out" > "$T/flat"
    grep -q '"id":"nvml:gpu-0","domain":"gpu","device":"gpu-0","grade":"hw_shunt","state":"ok","reason":"","flags":\[\],"energy_j":{"mean":3.0,"sd":0.0,' "$T/flat" || fail "nvml 3 J per run (mJ counter)"
    # an NVML error inside the run: no figure, not a wrong one
    lcmd='printf "1 0\n7000 50000 15 0 0 40\n" > "$0"; sleep 0.3; printf "1 0\n9000 50000 0 0 0 40\n" > "$0"; sleep 0.05'
    ERG_NVML_LIB=$ERG_FAKE_NVML "$erg" measure -r 1 --period 0.02 --json --baseline none --backends nvml -- sh -c "$lcmd" "$FAKE_NVML_FILE" > "$T/out" 2> "$T/err" || fail "nvml lost measure"
    tr -d ' \n' < "$T/out" > "$T/flat"
    grep -q '"id":"nvml:gpu-0","domain":"gpu","device":"gpu-0","grade":"hw_shunt","state":"error"' "$T/flat" || fail "nvml error mid-window gives no figure"
    # a GPU busy at 100 % (NVML utilisation) whose counter does not move: not live
    fcmd='printf "1 0\n9000 50000 0 0 0 40 100\n" > "$0"; sleep 0.3; printf "1 0\n9000 50000 0 0 0 40 0\n" > "$0"'
    ERG_NVML_LIB=$ERG_FAKE_NVML "$erg" measure -r 1 --period 0.02 --json --baseline none --backends nvml -- sh -c "$fcmd" "$FAKE_NVML_FILE" > "$T/out" 2> "$T/err" || fail "nvml frozen measure"
    tr -d ' \n' < "$T/out" > "$T/flat"
    grep -q '"id":"nvml:gpu-0","domain":"gpu","device":"gpu-0","grade":"hw_shunt","state":"not_live"' "$T/flat" || fail "busy GPU with a frozen counter: not live"
    unset FAKE_NVML_FILE
fi

# --- permission denied, for real: energy_uj readable by root only, erg run as nobody
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
    chmod 755 "$T"
    chmod 400 "$E"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$erg" meters --json --no-probe --backends rapl-sysfs > "$T/out" 2> "$T/err" || fail "meters as nobody"
    tr -d ' \n' < "$T/out" > "$T/flat"
    grep -q '"id":"rapl-sysfs:package-0".*"usable":false.*"reason":"permissiondenied:.*intel-rapl:0/energy_uj(root-onlysinceCVE-2020-8694' "$T/flat" || fail "permission denied names file and remedy"
    grep -q '"id":"rapl-sysfs:psys".*"usable":true' "$T/flat" || fail "other zones still usable"
    chmod 644 "$E"
fi

# --- no usable meter: exit 3
rm -rf "$PC"; mkdir -p "$PC"
"$erg" measure --backends rapl-sysfs -- true > /dev/null 2> "$T/err"; [ $? -eq 3 ] || fail "no meter: exit 3"
ERG_ROOT=$T/nonexistent "$erg" meters > /dev/null 2> "$T/err"; [ $? -eq 3 ] || fail "missing root: exit 3"
"$erg" measure --min-grade hw_shunt -r 1 -- sleep 0.05 > /dev/null 2> "$T/err"; [ $? -eq 3 ] || fail "--min-grade hw_shunt on the estimator: exit 3"
grep -q "total grade estimator is below the required hw_shunt" "$T/err" || fail "--min-grade message"
"$erg" measure --min-grade estimator -r 1 -- sleep 0.05 > /dev/null 2> "$T/err" || fail "--min-grade estimator: exit 0"
"$erg" meters --no-probe > "$T/out" 2>&1 || fail "meters with estimator only"
grep -q 'no intel-rapl zones' "$T/out" || fail "empty powercap reason"
grep -q 'figures come from the estimator' "$T/out" || fail "estimate note in meters"
echo "cli measure: ok"
