#!/bin/sh
# The refinement loop of docs/context.md on this machine's CPU, with real interactions:
# a GEMM whose time depends on whether its operand C is cache-resident, a streaming kernel that
# evicts it, two memory-bound kernels co-running. Kernels run inside one long-lived process (the
# "device", examples/context/ctx_device.c) so that cache state carries from one kernel to the next
# as it does on a GPU; times are the kernels' own thread CPU times (robust on a shared machine).
# Energy is estimator grade here (no energy counter on this machine): the estimator's model on the
# kernels' CPU time, s = 10 W plus (65 - 10) W / n_cpu per busy CPU.
#
#   ERG=build/gcc/src/cli/erg DEVICE=build/gcc/src/calculus/erg-ctx-device examples/context/refine-cpu.sh
# RUNS (default 20) runs per characterized context and of the whole schedule, GEMMS (default 60)
# GEMMs after each stream.
set -eu
# the build scripts/main.sh makes, else the one scripts/test.sh makes
b=build/release; [ -x "$b/src/cli/erg" ] || b=build/gcc
ERG=${ERG:-$b/src/cli/erg}
DEVICE=${DEVICE:-$b/src/calculus/erg-ctx-device}
RUNS=${RUNS:-20}
GEMMS=${GEMMS:-60}
for x in "$ERG" "$DEVICE"; do
    [ -x "$x" ] || { echo "refine-cpu.sh: $x not found: build first (cmake --build build/gcc)" >&2; exit 2; }
done
ERG=$(cd "$(dirname "$ERG")" && pwd)/$(basename "$ERG")
DEVICE=$(cd "$(dirname "$DEVICE")" && pwd)/$(basename "$DEVICE")
W=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/erg-refine-XXXXXX")}
mkdir -p "$W/dev"
"$DEVICE" serve "$W/dev" &
DEV_PID=$!
trap '"$DEVICE" stop "$W/dev" 2>/dev/null || kill $DEV_PID 2>/dev/null; wait $DEV_PID 2>/dev/null; [ -n "${WORK:-}" ] || rm -rf "$W"' EXIT
while [ ! -p "$W/dev/requests" ]; do sleep 0.1; done
L="$DEVICE launch $W/dev"
COMMON="--energy cpu-model --time reported --static-power 10 --warmup 3"
RESET="$L stream 16"    # the null context: caches evicted by a 16 MiB stream

echo "== 1. characterize at the null context (reset: $RESET)"
"$ERG" characterize --name gemm $COMMON -r "$RUNS" --reset "$RESET" -o "$W/gemm.json" -- $L gemm
"$ERG" characterize --name stream $COMMON -r "$RUNS" --reset "$RESET" -o "$W/stream.json" -- $L stream 16

echo "== 2. a schedule: (stream, then $GEMMS GEMMs) twice, one after another on the CPU"
{
    printf '{"erg": "schedule/1", "name": "stream-gemm", "devices": {"cpu": {"static_power_w": 10}},\n'
    printf ' "signatures": {"gemm": "gemm.json", "stream": "stream.json"},\n "nodes": ['
    n=0; prev=""; edges=""
    for block in 1 2; do
        for k in $(seq 0 "$GEMMS"); do
            sig=gemm; [ "$k" = 0 ] && sig=stream
            [ $n -gt 0 ] && printf ', '
            printf '{"id": "n%d", "signature": "%s"}' $n $sig
            [ -n "$prev" ] && edges="$edges${edges:+, }[\"$prev\", \"n$n\"]"
            prev=n$n; n=$((n + 1))
        done
    done
    printf '],\n "edges": [%s]}\n' "$edges"
} > "$W/schedule.json"

echo "== 3. measure the whole schedule directly"
"$ERG" characterize --schedule "$W/schedule.json" $COMMON -r "$RUNS" -o "$W/measured.json"

echo "== 4. refine: compose, test, rank, characterize, compose again"
set +e
"$ERG" refine "$W/schedule.json" --measured "$W/measured.json" --characterize --in-place --top 2 \
    $COMMON -r "$RUNS" --reset "$RESET" --graph "$W/graph.json"
rc=$?
set -e
echo "interaction graph: $(tr -d '\n ' < "$W/graph.json" | head -c 600)"

echo "== 5. co-running memory-bound kernels (contention, both endpoints)"
"$ERG" characterize --name membw $COMMON -r "$RUNS" --with membw2="$L membw 2" \
    --corunner-out "$W/membw2.json" -o "$W/membw.json" -- $L membw 2
exit $rc
