#!/bin/sh
# Every kind of fault, end to end through `erg measure` on fake trees under ERG_ROOT, the measured
# command itself advancing (or corrupting) the fake counter: an ambiguous wrap, transient reads,
# NVML NOT_SUPPORTED (power integrated, model_based) and MIG, hwmon energy and power inputs, the
# RAPL MSR backend; and the option checks that must come before anything runs.
set -u
erg=${ERG_BIN:?}
fail() { echo "FAIL: $*" >&2; [ -f "$T/out" ] && cat "$T/out" >&2; [ -f "$T/err" ] && cat "$T/err" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/erg-kinds-XXXXXX")
trap 'rm -rf "$T"' EXIT
R=$T/root
PC=$R/sys/class/powercap
mkdir -p "$R/proc"
printf 'cpu  100 0 0 100 0 0 0 0 0 0\n' > "$R/proc/stat"
export ERG_ROOT=$R XDG_CACHE_HOME=$T/cache
unset ERG_BACKENDS ERG_NVML_LIB ERG_ESTIMATOR_IDLE_W ERG_ESTIMATOR_FULL_W
zone() { mkdir -p "$PC/$1"; echo "$2" > "$PC/$1/name"; printf "%020d\n" "$3" > "$PC/$1/energy_uj"; echo "$4" > "$PC/$1/max_energy_range_uj"; }
flat() { tr -d ' \n' < "$T/out" > "$T/flat"; }
# a number from the flattened JSON: field after the given prefix
num() { sed -n "s/.*$1\([-0-9.e]*\).*/\1/p" "$T/flat"; }

# --- options are all checked before anything runs: nothing runs, nothing on stdout
zone intel-rapl:0 package-0 1000000 262143328850
E=$PC/intel-rapl:0/energy_uj
for bad in "--min-grade bogus" "--min-grade" "--period 0" "--baseline x" "--cooldown -1" "-r 0"; do
    rm -f "$T/ran"
    # shellcheck disable=SC2086
    "$erg" measure $bad -- touch "$T/ran" > "$T/out" 2> "$T/err"; rc=$?
    [ $rc -eq 2 ] || fail "measure $bad: exit 2 (got $rc)"
    [ -e "$T/ran" ] && fail "measure $bad: the command must not run"
    [ -s "$T/out" ] && fail "measure $bad: nothing on stdout"
done
"$erg" measure -r 1 --min-grade bogus --backends rapl-sysfs -- touch "$T/ran" > "$T/out" 2> "$T/err"
grep -qx "erg measure: --min-grade: unknown grade 'bogus' (hw_shunt, model_based or estimator)" "$T/err" || fail "--min-grade message"
[ "$(wc -l < "$T/err")" -le 2 ] || fail "--min-grade: one message and the hint"

# a signature that cannot be written where asked: said before the runs are spent
rm -f "$T/ran"
"$erg" measure -r 1 --baseline 0 --signature "$T/no-such-dir/s.json" --backends rapl-sysfs -- touch "$T/ran" > "$T/out" 2> "$T/err"; [ $? -eq 2 ] || fail "--signature into a missing folder: exit 2"
grep -qx "erg: $T/no-such-dir/s.json: cannot write the signature there: $T/no-such-dir: No such file or directory" "$T/err" || fail "--signature folder message"
[ -e "$T/ran" ] && fail "--signature into a missing folder: nothing runs"
[ -s "$T/out" ] && fail "--signature into a missing folder: nothing on stdout"

# --- ERG_ESTIMATOR_*: a value that is not a power in W is an error naming the variable
for v in abc -5 1e999 "10 W" nan; do
    rm -f "$T/ran"
    ERG_ESTIMATOR_IDLE_W=$v "$erg" measure -r 1 -- touch "$T/ran" > "$T/out" 2> "$T/err"; rc=$?
    [ $rc -eq 2 ] || fail "ERG_ESTIMATOR_IDLE_W=$v: exit 2 (got $rc)"
    grep -q "^erg: ERG_ESTIMATOR_IDLE_W: " "$T/err" || fail "ERG_ESTIMATOR_IDLE_W=$v: the variable is named"
    grep -q "'$v'" "$T/err" || fail "ERG_ESTIMATOR_IDLE_W=$v: the value is quoted"
    [ -e "$T/ran" ] && fail "ERG_ESTIMATOR_IDLE_W=$v: nothing runs"
    [ -s "$T/out" ] && fail "ERG_ESTIMATOR_IDLE_W=$v: nothing on stdout"
done
ERG_ESTIMATOR_FULL_W=lots "$erg" meters --no-probe > "$T/out" 2> "$T/err"; [ $? -eq 2 ] || fail "ERG_ESTIMATOR_FULL_W=lots: exit 2"
grep -q "^erg: ERG_ESTIMATOR_FULL_W: expects a power in W (a number >= 0), got 'lots'" "$T/err" || fail "ERG_ESTIMATOR_FULL_W message"
ERG_ESTIMATOR_FULL_W=-1 "$erg" calibrate --duration 0.1 --window 0.05 --out "$T/c.json" > "$T/out" 2> "$T/err"; [ $? -eq 2 ] || fail "calibrate ERG_ESTIMATOR_FULL_W=-1: exit 2"
grep -q "^erg: ERG_ESTIMATOR_FULL_W: must be >= 0 W, got '-1'" "$T/err" || fail "negative named"
[ -e "$T/c.json" ] && fail "no calibration written"
# valid values are used: 20 W idle, 20 W full = 20 W whatever the load
ERG_ESTIMATOR_IDLE_W=20 ERG_ESTIMATOR_FULL_W=20 "$erg" meters --json --no-probe --backends estimator > "$T/out" 2> "$T/err" || fail "valid estimator powers"
grep -q '"label": "utilisation model 20-20 W"' "$T/out" || fail "estimator powers from the environment"

# --- ambiguous wrap: a domain whose modulus (1 mJ) a 1 kW package could go round in 1 µs; no
# sampler period reads it often enough: flagged ambiguous, no figure, not a guess
rm -rf "$PC"; zone intel-rapl:0 package-0 100 999
"$erg" measure -r 1 --json --baseline none --backends rapl-sysfs -- sh -c 'sleep 0.05; printf "%020d\n" 600 1<> "$0"; sleep 0.05' "$E" > "$T/out" 2> "$T/err" || fail "ambiguous measure"
flat
grep -q '"id":"rapl-sysfs:package-0","domain":"package","device":"package-0","grade":"hw_shunt","state":"ambiguous","reason":"readtoorarely:awrapof0.001Jmaybehidden;notguessed","flags":\["ambiguous_wrap"\],"energy_j":{"mean":null' "$T/flat" || fail "ambiguous wrap: flagged, no figure"
grep -q '"total":{"energy_j":{"mean":null' "$T/flat" || fail "ambiguous wrap: no total"

# --- transient reads: the counter file holds garbage for a while (a failed read, a missing
# sample, never 0), then moves on: the energy is whole, flagged stale
rm -rf "$PC"; zone intel-rapl:0 package-0 1000000 262143328850
tcmd='sleep 0.05; echo xxxxxxxxxxxxxxxxxxxx 1<> "$0"; sleep 0.3; printf "%020d\n" 3000000 1<> "$0"; sleep 0.05'
"$erg" measure -r 1 --period 0.02 --json --baseline none --backends rapl-sysfs -- sh -c "$tcmd" "$E" > "$T/out" 2> "$T/err" || fail "transient measure"
flat
grep -q '"id":"rapl-sysfs:package-0","domain":"package","device":"package-0","grade":"hw_shunt","state":"ok","reason":"","flags":\["stale"\],"energy_j":{"mean":2.0,' "$T/flat" || fail "transient reads: 2 J, flagged stale"
# the read at the window's end fails: no figure rather than a partial one
printf "%020d\n" 1000000 > "$E"
"$erg" measure -r 1 --period 0.02 --json --baseline none --backends rapl-sysfs -- sh -c 'sleep 0.05; printf "%020d\n" 1500000 1<> "$0"; sleep 0.05; echo xxxxxxxxxxxxxxxxxxxx 1<> "$0"' "$E" > "$T/out" 2> "$T/err" || fail "transient end measure"
flat
grep -q '"id":"rapl-sysfs:package-0",[^}]*"state":"error","reason":"thereadatthewindow'"'"'sendfailed","flags":\["stale"\],"energy_j":{"mean":null' "$T/flat" || fail "failed end read: error, no figure"

# --- RAPL MSRs: a sparse file stands in for /dev/cpu/0/msr (Intel client, ESU 14); the command
# advances the package register (0x611) by 2 J and wraps PP0 (0x639) across 2^32 (+0.5 J)
rm -rf "$PC"
mkdir -p "$R/dev/cpu/0" "$R/sys/devices/system/cpu/cpu0/topology"
printf 'processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 140\n\n' > "$R/proc/cpuinfo"
echo 0 > "$R/sys/devices/system/cpu/cpu0/topology/physical_package_id"
M=$R/dev/cpu/0/msr
# wrmsr FILE ADDR VALUE: 8 bytes little-endian at the register's address, in place (a file of
# its own, so that the measured command can use it too)
cat > "$T/wrmsr.sh" <<'SH'
wrmsr() { v=$3; s=''; for k in 1 2 3 4 5 6 7 8; do s="$s\\$(printf %03o $((v & 255)))"; v=$((v >> 8)); done; printf "$s" | dd of="$1" bs=1 seek=$(($2)) conv=notrunc status=none; }
SH
. "$T/wrmsr.sh"
wrmsr "$M" 0x606 $((0xA0E03))
wrmsr "$M" 0x611 4096
wrmsr "$M" 0x639 $((0xFFFFF000))
"$erg" meters --json --no-probe --backends rapl-msr > "$T/out" 2> "$T/err"
if grep -q "rapl-msr: not built into this erg" "$T/err"; then
    echo "skipped: rapl-msr not built (ERG_WITH_MSR=OFF)"
else
[ -s "$T/out" ] || fail "msr meters"
flat
grep -q '"id":"rapl-msr:package-0","backend":"rapl-msr","domain":"package","device":"package-0","label":"MSR0x611","grade":"hw_shunt","kind":"counter","usable":true,"live":null,"resolution_j":6.103515625e-0*5,"wrap_j":262144.0' "$T/flat" || fail "msr package channel: 2^-14 J, 2^32 ticks"
grep -q '"id":"rapl-msr:package-0/core",.*"parent":"rapl-msr:package-0"' "$T/flat" || fail "msr core inside package"
mcmd='. "$0"; sleep 0.05; wrmsr "$1" 0x611 $((4096 + 16384)); wrmsr "$1" 0x639 $((0xFFFFF000 + 4096)); sleep 0.05; wrmsr "$1" 0x611 $((4096 + 32768)); wrmsr "$1" 0x639 4096; sleep 0.05'
"$erg" measure -r 1 --json --baseline none --backends rapl-msr -- sh -c "$mcmd" "$T/wrmsr.sh" "$M" > "$T/out" 2> "$T/err" || fail "msr measure"
flat
grep -q '"id":"rapl-msr:package-0","domain":"package","device":"package-0","grade":"hw_shunt","state":"ok","reason":"","flags":\[\],"energy_j":{"mean":2.0,' "$T/flat" || fail "msr package 2 J"
grep -q '"id":"rapl-msr:package-0/core","domain":"core","device":"package-0","grade":"hw_shunt","state":"ok","reason":"","flags":\["wrap_corrected"\],"energy_j":{"mean":0.5,' "$T/flat" || fail "msr core: 32-bit wrap corrected, 0.5 J"
grep -q '"total":{"energy_j":{"mean":2.0,.*"grade":"hw_shunt","channels":\["rapl-msr:package-0"\]' "$T/flat" || fail "msr total: package alone"
fi
rm -rf "$R/dev" "$R/sys/devices" "$R/proc/cpuinfo"

# --- hwmon: energyN_input (µJ, hw_shunt) and powerN_input (µW, integrated, model_based), found by
# name and label; the command advances the energy file by 1.5 J and sets the power to 40 W
H=$R/sys/class/hwmon
mkdir -p "$H/hwmon5" "$H/hwmon2"
echo amd_energy > "$H/hwmon5/name"; echo Esocket0 > "$H/hwmon5/energy1_label"; printf "%020d\n" 1000000 > "$H/hwmon5/energy1_input"
echo power_meter > "$H/hwmon2/name"; printf "%012d\n" 10000000 > "$H/hwmon2/power1_input"
hcmd='sleep 0.05; printf "%012d\n" 40000000 1<> "$1"; for k in 1 2 3; do sleep 0.1; read v < "$0"; printf "%020d\n" $(expr "$v" + 500000) 1<> "$0"; done; sleep 0.5'
"$erg" measure -r 1 --period 0.02 --json --baseline none --backends hwmon -- sh -c "$hcmd" "$H/hwmon5/energy1_input" "$H/hwmon2/power1_input" > "$T/out" 2> "$T/err" || fail "hwmon measure"
flat
grep -q '"id":"hwmon:amd_energy/Esocket0","domain":"package","device":"package-0","grade":"hw_shunt","state":"ok","reason":"","flags":\[\],"energy_j":{"mean":1.5,' "$T/flat" || fail "hwmon energy input: 1.5 J, hw_shunt"
grep -q '"id":"hwmon:power_meter/power1","domain":"system","device":"power_meter","grade":"model_based","state":"ok"' "$T/flat" || fail "hwmon power input: model_based"
t=$(num '"time_s":{"mean":'); e=$(sed -n 's/.*"id":"hwmon:power_meter\/power1"[^}]*"energy_j":{"mean":\([0-9.e-]*\).*/\1/p' "$T/flat")
# 10 W held until the command's write is seen, then 40 W. However long the start took on a loaded
# machine, the command sleeps at least 0.8 s after its write, so at least 0.4 s of it is seen at
# 40 W even if a poll comes 0.4 s late: 10 W x t + 30 W x 0.4 s <= E <= 40 W x t
awk -v e="$e" -v t="$t" 'BEGIN { lo = 10 * t + 30 * 0.4; hi = 40 * t; exit !(e >= lo && e <= hi) }' || fail "hwmon power integrated: $e J over $t s, expected 10 W x t + 12 J .. 40 W x t"
rm -rf "$H"

# --- NVML through the fake library (built by the test build)
if [ -n "${ERG_FAKE_NVML:-}" ]; then
    export FAKE_NVML_FILE=$T/nvml.txt ERG_NVML_LIB=$ERG_FAKE_NVML
    # NOT_SUPPORTED energy (pre-Volta, rc 3): power sampled and integrated, model_based; the
    # command raises the power from 20 W to 60 W and holds it over 1.2 s
    printf '1 0\n0 20000 3 0 0 40\n' > "$FAKE_NVML_FILE"
    "$erg" meters --json --no-probe --backends nvml > "$T/out" 2> "$T/err" || fail "nvml not-supported meters"
    flat
    grep -q '"id":"nvml:gpu-0",[^}]*"grade":"model_based","kind":"power",[^}]*"min_interval_s":1.0,[^}]*"reason":"noenergycounter(NVMLerror3,NOT_SUPPORTED:pre-Volta):powerintegrated;NVMLpowerisa1saverage,refusedforsub-secondwindows"' "$T/flat" || fail "NOT_SUPPORTED: the fallback is said"
    ncmd='printf "1 0\n0 60000 3 0 0 40\n" > "$0"; sleep 1.2'
    "$erg" measure -r 1 --period 0.02 --json --baseline none --backends nvml -- sh -c "$ncmd" "$FAKE_NVML_FILE" > "$T/out" 2> "$T/err" || fail "nvml not-supported measure"
    flat
    grep -q '"id":"nvml:gpu-0","domain":"gpu","device":"gpu-0","grade":"model_based","state":"ok","reason":"","flags":\[\],"energy_j":{"mean":[0-9]' "$T/flat" || fail "NOT_SUPPORTED: power fallback, model_based"
    t=$(num '"time_s":{"mean":'); e=$(sed -n 's/.*"id":"nvml:gpu-0"[^}]*"energy_j":{"mean":\([0-9.e-]*\).*/\1/p' "$T/flat")
    awk -v e="$e" -v t="$t" 'BEGIN { lo = 60 * (t - 0.4); hi = 60 * t; exit !(e >= lo && e <= hi) }' || fail "NOT_SUPPORTED: $e J over $t s, expected about 60 W x time"
    grep -q '"total":{"energy_j":{"mean":[0-9.]*,.*"grade":"model_based","channels":\["nvml:gpu-0"\]' "$T/flat" || fail "NOT_SUPPORTED: total model_based"
    # a sub-second window on a 1 s average: below_resolution, no figure
    "$erg" measure -r 1 --json --baseline none --backends nvml -- sleep 0.1 > "$T/out" 2> "$T/err" || fail "nvml short measure"
    flat
    grep -q '"id":"nvml:gpu-0",[^}]*"state":"below_resolution",[^}]*"flags":\["below_resolution"\],"energy_j":{"mean":null' "$T/flat" || fail "NOT_SUPPORTED: sub-second window below_resolution"
    # MIG: GPU 0 in MIG mode gives no figure; GPU 1 (energy counter) is still measured, and the
    # command advances it by 4 J
    printf '2 0\n1000 50000 0 0 1 40\n5000 50000 0 0 0 40\n' > "$FAKE_NVML_FILE"
    gcmd='sleep 0.2; printf "2 0\n9000 50000 0 0 1 40\n9000 50000 0 0 0 40\n" > "$0"; sleep 0.2'
    "$erg" measure -r 1 --json --baseline none --backends nvml -- sh -c "$gcmd" "$FAKE_NVML_FILE" > "$T/out" 2> "$T/err" || fail "nvml mig measure"
    flat
    grep -q '"id":"nvml:gpu-0","domain":"gpu","device":"gpu-0","grade":"[a-z_]*","state":"declined","reason":"MIGenabled:thecountercoverseveryMIGinstance,notoneslice;nofigureratherthanawrongone","flags":\[\],"energy_j":{"mean":null' "$T/flat" || fail "MIG: declined, no figure, said"
    grep -q '"id":"nvml:gpu-1","domain":"gpu","device":"gpu-1","grade":"hw_shunt","state":"ok","reason":"","flags":\[\],"energy_j":{"mean":4.0,' "$T/flat" || fail "MIG: the other GPU still measured, 4 J"
    grep -q '"total":{"energy_j":{"mean":4.0,.*"channels":\["nvml:gpu-1"\]' "$T/flat" || fail "MIG: total without the MIG GPU"
    unset FAKE_NVML_FILE ERG_NVML_LIB
fi
echo "cli kinds: ok"
