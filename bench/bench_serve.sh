#!/bin/sh
# SPDX-License-Identifier: MIT
# Load on erg serve, loopback only, bounded in time: wrk scrapes /metrics with N connections for
# D seconds while a fake RAPL counter with a 1000 J wrap range advances 7 J every 20 ms (350 W: it
# wraps every 2.9 s; at the 1000 W a package may draw, every second, so the meter polls faster). Side by side in the same
# run, the same server's static page "/" is the reference (what libmicrohttpd costs without erg).
# Prints scrapes/s, latency, the exporter's CPU per scrape, missed samples, and whether the
# counter equals the energy the fake counter moved (no wrap unseen).
# Usage: bench/bench_serve.sh [ERG_BIN] [SECONDS] [CONNECTIONS]
set -u
ERG_BIN=${1:-${ERG_BIN:-build/release/src/cli/erg}}
D=${2:-10}
N=${3:-8}
command -v wrk > /dev/null || { echo "bench_serve: wrk is not installed (apt-get install wrk)"; exit 77; }
T=$(mktemp -d /tmp/erg_bench_serve.XXXXXX)
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
Z="$T/root/sys/class/powercap/intel-rapl:0"
mkdir -p "$Z"
echo package-0 > "$Z/name"
RANGE=999999999
echo $RANGE > "$Z/max_energy_range_uj"
printf '%020d\n' 0 > "$Z/energy_uj"
ERG_ROOT="$T/root" "$ERG_BIN" serve --backends rapl-sysfs --listen 127.0.0.1:0 --interval 0.1 \
    > /dev/null 2> "$T/err" &
spid=$!
pids="$pids $spid"
while ! grep -q 'serving http' "$T/err" 2> /dev/null; do sleep 0.1; done
port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/err")
url="http://127.0.0.1:$port"
cpu() { awk '{ print $14 + $15 }' "/proc/$spid/stat"; }
tck=$(getconf CLK_TCK)

# the fake counter: a fixed number of 7 J steps, written in place
steps=$(( (D * 2 + 4) * 50 ))
(
    v=0; k=0
    while [ $k -lt $steps ]; do
        v=$(( (v + 7000000) % (RANGE + 1) )); printf '%020d\n' $v 1<> "$Z/energy_uj"
        k=$((k + 1)); sleep 0.02
    done
) &
mover=$!
pids="$pids $mover"

run() { # run PATH: wrk's requests/s and latency percentiles, and erg serve's CPU ticks
    c0=$(cpu)
    wrk -t2 -c"$N" -d"${D}s" --latency "$url$1" > "$T/wrk" 2>&1
    c1=$(cpu)
    rps=$(awk '/Requests\/sec/ { print $2 }' "$T/wrk")
    reqs=$(awk '/requests in/ { print $1 }' "$T/wrk")
    p50=$(awk '$1 == "50%" { print $2 }' "$T/wrk")
    p99=$(awk '$1 == "99%" { print $2 }' "$T/wrk")
    cpu_us=$(awk -v a="$c0" -v b="$c1" -v t="$tck" -v n="$reqs" 'BEGIN { printf "%.1f", (b - a) / t / n * 1e6 }')
    printf '%-10s %10s req/s  p50 %8s  p99 %8s  erg serve CPU %6s us/request\n' "$1" "$rps" "$p50" "$p99" "$cpu_us"
}
echo "erg serve under wrk: $N connections, 2 threads, ${D} s per path, loopback ($(nproc) CPUs)"
run /
run /metrics
wait "$mover"
sleep 0.5
curl -s "$url/metrics" > "$T/m"
moved=$(awk -v s=$steps 'BEGIN { printf "%.6f", s * 7 }')
got=$(sed -n 's/^erg_energy_joules_total{channel="rapl-sysfs:package-0".*} //p' "$T/m")
missed=$(sed -n 's/^erg_exporter_missed_samples_total //p' "$T/m")
samples=$(sed -n 's/^erg_exporter_samples_total //p' "$T/m")
amb=$(sed -n 's/^erg_channel_flagged_intervals_total{channel="rapl-sysfs:package-0",flag="ambiguous_wrap"} //p' "$T/m")
wraps=$(sed -n 's/^erg_channel_flagged_intervals_total{channel="rapl-sysfs:package-0",flag="wrap_corrected"} //p' "$T/m")
poll=$(sed -n 's/^erg_exporter_meter_poll_seconds //p' "$T/m")
echo "fake counter moved ${moved} J; erg counted ${got} J; wraps corrected ${wraps:-0}; ambiguous ${amb:-0}"
echo "samples ${samples}, missed ${missed}; meter poll period ${poll} s"
