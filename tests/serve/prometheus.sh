#!/bin/sh
# SPDX-License-Identifier: MIT
# erg serve scraped by a real Prometheus server (Debian's prometheus) on loopback. A fake RAPL
# package counter with a 1000 J wrap range advances 30 J a step for 140 steps (4200 J: 4 wraps;
# at 300 W, so that two steps a poll apart never look like more than the 1 kW a package may draw);
# then, through Prometheus's HTTP API:
#   - the counter's value moved by exactly 4200 J between before and after the run;
#   - increase(erg_energy_joules_total[...]) over the run is 4200 J, up to Prometheus's
#     extrapolation towards the window's edges;
#   - recording rules work: per-node power (docs/serve.md) gives finite, positive values, and
#     a per-node energy rule equals the counters' sum once they are still.
set -u
: "${ERG_BIN:?ERG_BIN not set}"
PROM=$(command -v prometheus || echo /usr/bin/prometheus)
[ -x "$PROM" ] || { echo "skip: prometheus is not installed (scripts/deps.sh installs Debian's)"; exit 77; }
command -v curl > /dev/null || { echo "skip: curl is not installed"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
T=$(mktemp -d /tmp/erg_serve_prom.XXXXXX)
pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    echo "--- erg serve:" >&2; tail -5 "$T/serve.err" >&2
    echo "--- prometheus:" >&2; tail -20 "$T/prom.log" >&2
    exit 1
}

# docs/serve.md's rules block is valid for this Prometheus (promtool check rules)
if command -v promtool > /dev/null && [ -n "${ERG_TEST_SOURCE_DIR:-}" ]; then
    awk '/^```yaml$/ { n++; inb = (n == 2); next } /^```/ { inb = 0 } inb' \
        "$ERG_TEST_SOURCE_DIR/docs/serve.md" > "$T/doc-rules.yml"
    grep -q 'record: instance:erg_power_watts:rate5m' "$T/doc-rules.yml" || fail "docs/serve.md: no rules block"
    promtool check rules "$T/doc-rules.yml" > "$T/promtool.log" 2>&1 || fail "promtool: $(cat "$T/promtool.log")"
fi

R="$T/root"
Z="$R/sys/class/powercap/intel-rapl:0"
mkdir -p "$Z"
echo package-0 > "$Z/name"
RANGE=999999999 # max_energy_range_uj: the counter wraps after 999.999999 J (modulus 1000 J; at the
                # 1000 W a package may plausibly draw that is 1 s, well above the meter's polling)
echo $RANGE > "$Z/max_energy_range_uj"
v=900000000
printf '%020d\n' $v > "$Z/energy_uj"

ERG_ROOT="$R" "$ERG_BIN" serve --backends rapl-sysfs --listen 127.0.0.1:0 --interval 0.1 \
    > /dev/null 2> "$T/serve.err" &
pids="$pids $!"
i=0
while ! grep -q 'serving http' "$T/serve.err" 2> /dev/null; do
    i=$((i + 1)); [ $i -lt 300 ] || fail "erg serve did not start"
    sleep 0.1
done
eport=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/serve.err")

# a free port for Prometheus: bind port 0 and read what the kernel gave
pport=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$T/rules.yml" << 'EOF'
groups:
  - name: erg
    interval: 1s
    rules:
      - record: instance:erg_power_watts:rate30s
        expr: sum by (instance) (rate(erg_energy_joules_total{scope="root"}[30s]))
      - record: instance:erg_energy_joules:sum
        expr: sum by (instance) (erg_energy_joules_total{scope="root"})
EOF
cat > "$T/prometheus.yml" << EOF
global:
  scrape_interval: 500ms
  evaluation_interval: 1s
rule_files:
  - $T/rules.yml
scrape_configs:
  - job_name: erg
    static_configs:
      - targets: ['127.0.0.1:$eport']
EOF
"$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/data" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn > "$T/prom.log" 2>&1 &
pids="$pids $!"
api="http://127.0.0.1:$pport/api/v1"

# query EXPR [TIME]: the first result's value, or "none"
query() {
    if [ $# -gt 1 ]; then
        curl -sf --data-urlencode "query=$1" --data-urlencode "time=$2" "$api/query"
    else
        curl -sf --data-urlencode "query=$1" "$api/query"
    fi | $PY -c '
import json, sys
try:
    r = json.load(sys.stdin)["data"]["result"]
except Exception:
    print("none"); sys.exit()
print(r[0]["value"][1] if r else "none")
'
}
now() { $PY -c 'import time; print("%.3f" % time.time())'; }

C='erg_energy_joules_total{channel="rapl-sysfs:package-0"}'
i=0
until [ "$(query "$C")" != none ]; do
    i=$((i + 1)); [ $i -lt 600 ] || fail "Prometheus never scraped erg serve"
    sleep 0.2
done
sleep 1.5 # a few scrapes of the still counter
t0=$(now)
v0=$(query "$C" "$t0")
[ "$v0" != none ] || fail "no value at t0"

steps=140
k=0
while [ $k -lt $steps ]; do
    v=$(( (v + 30000000) % (RANGE + 1) ))
    printf '%020d\n' $v 1<> "$Z/energy_uj"
    k=$((k + 1))
    sleep 0.1
done
sleep 2.5 # the last scrapes
t1=$(now)
v1=$(query "$C" "$t1")
[ "$v1" != none ] || fail "no value at t1"
$PY - "$v0" "$v1" << 'EOF' || fail "the counter moved $v0 -> $v1, not by 4200 J"
import sys
v0, v1 = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if abs((v1 - v0) - 4200.0) < 1e-6 else 1)
EOF

# increase() over the run, evaluated at t1, its window reaching back to t0
win=$($PY -c "import math,sys; print(int(math.ceil($t1 - $t0)))")
inc=$(query "increase(${C}[${win}s])" "$t1")
# Prometheus extrapolates the first and last samples towards the window's edges by at most 1.1
# average scrape intervals (0.5 s) each, never below the samples' own difference: so 4200 J <=
# increase <= 4200 J * win / (win - 1.1 s).
$PY - "$inc" "$win" << 'EOF' || fail "increase(...[${win}s]) = $inc, outside [4200 J, 4200 J x win / (win - 1.1 s)]"
import sys
v, w = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if 4200.0 * (1 - 1e-9) <= v <= 4200.0 * w / max(w - 1.1, 1.0) else 1)
EOF
# no wrap went unseen, and no interval was ambiguous
amb=$(query 'erg_channel_flagged_intervals_total{channel="rapl-sysfs:package-0",flag="ambiguous_wrap"}')
[ "$amb" = none ] || fail "ambiguous wrap intervals: $amb"
wraps=$(query 'erg_channel_flagged_intervals_total{channel="rapl-sysfs:package-0",flag="wrap_corrected"}')
[ "$wraps" != none ] && [ "${wraps%%.*}" -ge 4 ] || fail "wraps corrected: $wraps (want >= 4)"

# the recording rules. A rule evaluated while a scrape was still being ingested may differ from
# the same expression evaluated later, so the exact check uses a rule whose input is still:
# the node's energy, once the counter stopped, equals the counter's own value.
i=0
until [ "$(query 'instance:erg_power_watts:rate30s')" != none ]; do
    i=$((i + 1)); [ $i -lt 300 ] || fail "the power recording rule produced nothing"
    sleep 0.2
done
rec=$(query 'max_over_time(instance:erg_power_watts:rate30s[60s])')
$PY - "$rec" << 'EOF' || fail "power rule: $rec W (want a finite value in (0, 1000] W)"
import math, sys
v = float(sys.argv[1])
sys.exit(0 if math.isfinite(v) and 0 < v <= 1000 else 1)
EOF
sleep 3 # two evaluations after the last scrape of the still counter
t2=$(now)
erec=$(query 'instance:erg_energy_joules:sum' "$t2")
econ=$(query 'sum by (instance) (erg_energy_joules_total{scope="root"})' "$t2")
$PY - "$erec" "$econ" << 'EOF' || fail "energy rule $erec J != counters $econ J"
import sys
a, b = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if abs(a - b) <= 1e-9 * max(1.0, abs(b)) else 1)
EOF
echo "ok: moved 4200 J through 4 wraps; Prometheus saw $v0 -> $v1 J, increase ${inc} J; power rule max ${rec} W; energy rule ${erec} J"
