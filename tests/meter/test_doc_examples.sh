#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/meters.md's commands and quoted messages, on what any machine has (the estimator; no
# counters needed): erg meters --json, the checks made before anything runs, erg calibrate's file
# and erg measure --signature without a calibration. Figures from real counters need hardware
# (meter.hw_real, label hw) and are not checked here. The C API block is meter.doc_api.
set -u
: "${ERG_BIN:?ERG_BIN not set}"
: "${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}"
DOC="$ERG_TEST_SOURCE_DIR/docs/meters.md"
T=$(mktemp -d /tmp/erg_meters_doc.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -r "$DOC" ] || fail "cannot read $DOC"
run() { (cd "$T" && "$@") > "$T/out" 2> "$T/err"; rc=$?; }
has() { grep -qF -- "$1" "$T/$2" || fail "'$1' not in $2: $(cat "$T/$2")"; }
doc() { tr '\n' ' ' < "$DOC" | sed 's/  */ /g' | grep -qF -- "$1" || fail "the doc no longer says '$1'"; }
XDG_CACHE_HOME="$T/cache"; HOME="$T"; export XDG_CACHE_HOME HOME
unset ERG_BACKENDS ERG_ESTIMATOR_IDLE_W ERG_ESTIMATOR_FULL_W

# erg meters [--json] [--no-probe]: meters/1 with its members; the estimator always listed.
run "$ERG_BIN" meters --json --no-probe
[ "$rc" -eq 0 ] || fail "erg meters --json --no-probe exit $rc: $(cat "$T/err")"
for k in '"erg": "meters/1"' '"backends":' '"channels":' '"hardware":' '"note":' '"name": "estimator"' \
    '"resolution_j":' '"wrap_j":' '"live":'; do has "$k" out; done
doc '{"erg": "meters/1", "backends": [{"name", "state", "reason"}], "channels": [{"id", "backend",'

# Checked before the command runs even once: exit 2, the command never runs, nothing on stdout.
nothing_ran() { [ "$rc" -eq 2 ] || fail "$1: exit $rc, expected 2"; [ ! -e "$T/ran" ] || fail "$1: the command ran"
    [ ! -s "$T/out" ] || fail "$1: wrote to stdout"; }
run env ERG_ESTIMATOR_IDLE_W=abc "$ERG_BIN" measure -- touch ran
nothing_ran IDLE_W=abc
w="erg: ERG_ESTIMATOR_IDLE_W: expects a power in W (a number >= 0), got 'abc'"; has "$w" err; doc "$w"
for v in -5 '10 W' nan; do
    run env ERG_ESTIMATOR_FULL_W="$v" "$ERG_BIN" measure -- touch ran
    nothing_ran "FULL_W=$v"; has "erg: ERG_ESTIMATOR_FULL_W: " err; has "got '$v'" err
done
# idle <= full.
run env ERG_ESTIMATOR_IDLE_W=50 ERG_ESTIMATOR_FULL_W=20 "$ERG_BIN" measure -- touch ran
nothing_ran "idle > full"; has 'idle (50 W) <= full load (20 W)' err
run "$ERG_BIN" measure --backends foo -- touch ran
nothing_ran "--backends foo"
w="unknown backend 'foo' in --backends (known: rapl-sysfs, rapl-msr, nvml, hwmon, estimator)"; has "$w" err; doc "$w"
run "$ERG_BIN" measure --bogus -- touch ran
nothing_ran --bogus
has "erg measure: unknown option '--bogus'" err; has "Try 'erg measure --help'." err
doc "(\`erg measure: unknown option '--bogus'\`) and the hint \`Try 'erg measure --help'.\`, exit 2"
# The backends asked for find nothing: each one's reason, exit 3.
run env ERG_NVML_LIB="$T/none/libnvidia-ml.so.1" "$ERG_BIN" measure --backends nvml -- touch ran
[ "$rc" -eq 3 ] || fail "--backends nvml without NVML: exit $rc, expected 3"
has 'no backend found any channel: nvml absent: ' err; has 'cannot load the NVML library' err
doc 'no backend found any channel: nvml absent: libnvidia-ml.so.1: cannot load the NVML library'
# --signature without a calibration: refused before running, saying where it looked.
run "$ERG_BIN" measure --signature s.json -- touch ran
nothing_ran "--signature without calibration"
has "$T/cache/erg/calibration.json" err; has '--baseline W' err
[ ! -e "$T/s.json" ] || fail "a signature was written"

# erg calibrate: calibration/1 at $XDG_CACHE_HOME/erg/calibration.json, exit 0 even when flagged.
run "$ERG_BIN" calibrate --duration 0.3 --window 0.1
[ "$rc" -eq 0 ] || fail "erg calibrate exit $rc: $(cat "$T/err")"
[ -f "$T/cache/erg/calibration.json" ] || fail "no calibration at \$XDG_CACHE_HOME/erg/calibration.json"
grep -q '"erg": "calibration/1"' "$T/cache/erg/calibration.json" || fail "calibration/1 tag missing"
if grep -q '"not_at_rest": true' "$T/cache/erg/calibration.json"; then
    grep -q '"warning":' "$T/cache/erg/calibration.json" || fail "not_at_rest without its warning"
    has 'warning: ' err
fi
run "$ERG_BIN" calibrate --duration 0.3 --window 0.1 --out cal.json
[ "$rc" -eq 0 ] && [ -f "$T/cal.json" ] || fail "erg calibrate --out: exit $rc"
echo "ok: meters.md's commands and quoted messages"
