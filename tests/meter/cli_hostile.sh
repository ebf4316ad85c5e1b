#!/bin/sh
# SPDX-License-Identifier: MIT
# erg meters on hostile trees, end to end (issue 16): FIFOs under ERG_ROOT (erg meters hung),
# an unknown wrap range (never shown as 0), the estimator excluded (the note must not say figures
# come from it), and, where the test runs as root with setpriv, a setuid copy of erg run by
# nobody: ERG_ROOT refused under AT_SECURE.
set -u
erg=${ERG_BIN:?}
T=$(mktemp -d /tmp/erg_hostile.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$T/out" "$T/err" >&2 2>/dev/null; exit 1; }
R=$T/root
mkdir -p "$R/sys/class/powercap/intel-rapl:0" "$R/sys/class/powercap/intel-rapl:1" \
    "$R/sys/class/hwmon/hwmon0" "$R/proc"
echo package-0 > "$R/sys/class/powercap/intel-rapl:0/name"
mkfifo "$R/sys/class/powercap/intel-rapl:0/energy_uj"
echo package-1 > "$R/sys/class/powercap/intel-rapl:1/name"
echo 123456 > "$R/sys/class/powercap/intel-rapl:1/energy_uj" # no max_energy_range_uj
mkfifo "$R/sys/class/hwmon/hwmon0/name"
printf 'cpu  100 0 0 900 0 0 0 0 0 0\n' > "$R/proc/stat"

# Nothing writes to the FIFOs: a blocking open would hang until timeout kills it (124).
ERG_ROOT=$R timeout 30 "$erg" meters --json --no-probe --backends rapl-sysfs,hwmon > "$T/out" 2> "$T/err"
rc=$?
[ "$rc" -ne 124 ] || fail "erg meters hung on a FIFO under ERG_ROOT"
[ "$rc" -eq 0 ] || fail "erg meters exit $rc"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"id":"rapl-sysfs:package-0",[^}]*"usable":false,[^}]*"reason":"domainhasnocounter:[^"]*energy_uj:notaregularfile' "$T/flat" \
    || fail "FIFO energy_uj: declined as not a regular file"
grep -q '"id":"rapl-sysfs:package-1",[^}]*"wrap_j":null' "$T/flat" || fail "unknown wrap range is null, not 0"
# the estimator was not tried: the note must not say figures come from it
grep -q 'figurescomefromtheestimator' "$T/flat" && fail "note claims the estimator, which was excluded"
ERG_ROOT=$R timeout 30 "$erg" meters --no-probe --backends rapl-sysfs > "$T/out" 2> "$T/err" || fail "text meters"
grep -q 'estimator (CPU' "$T/out" && fail "text note claims the estimator"
# with only declined channels and the estimator excluded, the note says no figure can be measured
rm "$R/sys/class/powercap/intel-rapl:1/energy_uj"; mkfifo "$R/sys/class/powercap/intel-rapl:1/energy_uj"
ERG_ROOT=$R timeout 30 "$erg" meters --no-probe --backends rapl-sysfs > "$T/out" 2> "$T/err" || fail "text meters, all declined"
grep -q 'the estimator is not among the backends tried: no figure can be measured' "$T/out" || fail "note: nothing measurable"
ERG_ROOT=$R timeout 30 "$erg" meters --no-probe > "$T/out" 2> "$T/err" || fail "meters with the estimator"
grep -q 'figures come from the estimator' "$T/out" || fail "note: the estimator when it is there"

# A total never silently leaves out a package (issue 16): package-1's counter turns to garbage
# during the run: no total, the reason names it, and --min-grade hw_shunt fails (exit 3).
P=$T/two
for z in 0 1; do
    mkdir -p "$P/sys/class/powercap/intel-rapl:$z"
    echo "package-$z" > "$P/sys/class/powercap/intel-rapl:$z/name"
    echo 262143328850 > "$P/sys/class/powercap/intel-rapl:$z/max_energy_range_uj"
    echo 1000000 > "$P/sys/class/powercap/intel-rapl:$z/energy_uj"
done
cmd='echo 3000000 > "$0/sys/class/powercap/intel-rapl:0/energy_uj"; echo garbage > "$0/sys/class/powercap/intel-rapl:1/energy_uj"; sleep 0.2'
ERG_ROOT=$P "$erg" measure -r 1 --json --baseline none --backends rapl-sysfs -- sh -c "$cmd" "$P" > "$T/out" 2> "$T/err"
tr -d ' \n' < "$T/out" > "$T/flat"
grep -q '"total":{"energy_j":{"mean":null' "$T/flat" || fail "incomplete total: null"
grep -q 'incomplete:nofigurefromrapl-sysfs:package-1' "$T/flat" || fail "incomplete total: names package-1"
echo 1000000 > "$P/sys/class/powercap/intel-rapl:0/energy_uj"
echo 1000000 > "$P/sys/class/powercap/intel-rapl:1/energy_uj"
ERG_ROOT=$P "$erg" measure -r 1 --min-grade hw_shunt --baseline none --backends rapl-sysfs -- sh -c "$cmd" "$P" > "$T/out" 2> "$T/err"
rc=$?
[ "$rc" -eq 3 ] || fail "incomplete total passed --min-grade hw_shunt (exit $rc)"
grep -q 'Total: no figure (incomplete: no figure from rapl-sysfs:package-1 (error)' "$T/out" || fail "text output names the missing package"

# AT_SECURE end to end: a setuid-root copy of erg, run by nobody, must refuse ERG_ROOT.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null 2>&1; then
    S=$(mktemp -d /tmp/erg_suid.XXXXXX)
    chmod 755 "$S"
    cp "$erg" "$S/erg" && chmod 4755 "$S/erg"
    chmod 755 "$T" "$R"
    ERG_ROOT=$R setpriv --reuid=65534 --regid=65534 --clear-groups "$S/erg" meters --no-probe > "$T/out" 2> "$T/err"
    rc=$?
    if grep -q 'refused: erg runs with elevated privilege' "$T/err"; then
        [ "$rc" -eq 2 ] || fail "AT_SECURE: exit $rc, expected 2"
        grep -q '^erg: ERG_ROOT: refused' "$T/err" || fail "AT_SECURE: names ERG_ROOT"
    else
        echo "note: setuid not effective here (nosuid mount or no_new_privs): AT_SECURE end to end skipped"
    fi
    rm -rf "$S"
fi
echo "cli hostile: ok"
