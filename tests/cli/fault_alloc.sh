#!/bin/sh
# The allocation-failure probe: run erg commands with the Nth allocation failed, for every N the
# run makes (a bounded sample when it makes more), and check each run fails cleanly (docs/
# guarantees.md): exit status 2 (or 0 when the failed allocation was optional, output then
# complete), a message on stderr, no signal, no sanitizer report (leaks included), and an -o file
# either absent or whole. ERG_FAILALLOC_BIN is erg linked with tests/support/failalloc.c.
set -u
bin=${ERG_FAILALLOC_BIN:?}
src=${ERG_TEST_SOURCE_DIR:?}
# Each run takes about 20 ms (100 ms under the sanitizers): at most this many N per command and
# mode, evenly spread (ERG_FAILALLOC_MAX=100000 fails every allocation in turn).
max_runs=${ERG_FAILALLOC_MAX:-12}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/erg-failalloc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0:exitcode=99"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=99"
export LSAN_OPTIONS="exitcode=98"
export ERG_STORE="$tmp/store.db" XDG_DATA_HOME="$tmp/xdg" XDG_CONFIG_HOME="$tmp/xdg"
fail=0
checked=0
jansson_crashes=0

# An output file left by a run that failed later (e.g. erg measure's --export-json, written before
# its report to stdout) must be whole: the same as without a failure, or JSON that parses when the
# output varies from run to run.
whole() {
    if [ "$varies" = 0 ]; then
        cmp -s "$1" "$tmp/good.out"
    else
        /usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2> /dev/null
    fi
}

# probe NAME OUTFILE CMD...: OUTFILE is the file the command writes with -o ('' when none).
# With varies=1 set, the output differs from run to run (times measured): not compared.
varies=0
probe() {
    name=$1 out=$2
    shift 2
    rm -f "$tmp/log"
    [ -n "$out" ] && rm -f "$out"
    ERG_FAILALLOC=0 ERG_FAILALLOC_LOG="$tmp/log" "$bin" "$@" > "$tmp/good.stdout" 2> "$tmp/good.stderr"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL $name: exits $rc without a failed allocation:"; cat "$tmp/good.stderr"
        fail=1
        return
    fi
    [ -n "$out" ] && cp "$out" "$tmp/good.out"
    calls=$(sed -n 's/^calls \([0-9]*\) .*/\1/p' "$tmp/log")
    step=$(( (calls + max_runs - 1) / max_runs ))
    [ "$step" -lt 1 ] && step=1
    n=1
    bad=0
    while [ "$n" -le "$calls" ]; do
        [ -n "$out" ] && rm -f "$out"
        ERG_FAILALLOC=$n "$bin" "$@" > "$tmp/stdout" 2> "$tmp/stderr"
        rc=$?
        checked=$((checked + 1))
        why=""
        if { grep -q '#0 .*libjansson' "$tmp/stderr" && grep -q '#[0-9] .* in json_load' "$tmp/stderr"; } ||
            grep -q '^failalloc: SIG\(SEGV\|ABRT\) inside libjansson' "$tmp/stderr"; then
            why="" # jansson's own crash (tests/support/failalloc.c), only with ERG_FAILALLOC_JANSSON=1
            jansson_crashes=$((jansson_crashes + 1))
        elif grep -q 'Sanitizer\|runtime error' "$tmp/stderr"; then
            why="sanitizer report"
        elif [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
            why="exit status $rc"
        elif [ "$rc" -eq 2 ] && ! grep -q '^erg' "$tmp/stderr"; then
            why="exit 2 without a message"
        elif [ "$rc" -eq 0 ] && [ "$varies" = 0 ] && ! cmp -s "$tmp/stdout" "$tmp/good.stdout"; then
            why="exit 0 with output other than the run without a failure"
        elif [ -n "$out" ] && [ "$rc" -ne 0 ] && [ -e "$out" ] && ! whole "$out"; then
            why="exit $rc left $out, not whole"
        elif [ -n "$out" ] && [ "$rc" -eq 0 ] && [ "$varies" = 0 ] && ! cmp -s "$out" "$tmp/good.out"; then
            why="exit 0 with $out other than the run without a failure"
        elif ls "$tmp" | grep -q '\.tmp'; then
            why="left a temporary file"
        fi
        if [ -n "$why" ]; then
            echo "FAIL $name$jmode with allocation $n of $calls failed: $why"
            sed -n '1,25p' "$tmp/stderr"
            fail=1
            bad=1
            [ -n "${ERG_FAILALLOC_ALL:-}" ] || return
        fi
        n=$((n + step))
    done
    [ "$bad" = 0 ] && echo "ok $name$jmode: $calls allocations, $(( (calls + step - 1) / step )) of them failed in turn"
}

cases() {
    ex=$src/examples
    probe compose "" compose "$ex/pipeline-2gpu.json"
    probe compose-json-mc "" compose --json --mc 50 "$ex/attention-layer.json"
    probe compose-dag "" compose "$ex/pipeline-2gpu-dag.json"
    probe frontier "" frontier "$src/tests/fuzz/seeds/opsched-frontier-doc.json"
    probe frontier-json "" frontier --json --deadline 1 "$src/tests/fuzz/seeds/opsched-frontier-doc.json"
    probe trace-report "" trace report "$src/tests/trace/data/two_gpus.json"
    probe trace-report-json "" trace report --json --rules "$src/tests/trace/data/two_gpus_rules.json" \
        "$src/tests/trace/data/two_gpus.json"
    probe trace-import "$tmp/sched.json" trace import -o "$tmp/sched.json" "$src/tests/trace/data/two_gpus.json"
    probe predict-model "$tmp/emit.json" predict model "$src/tests/predict/configs/tiny-llama.json" \
        --target "$src/models/cpu" --emit-schedule "$tmp/emit.json"
    probe insensitive "" insensitive "$ex/insensitive/softmax-null.json" "$ex/insensitive/softmax-after-gemm.json"
    probe store-put "" store put "$ex/insensitive/softmax-null.json" "$ex/insensitive/softmax-hot.json"
    probe store-get "$tmp/got.json" store get softmax -o "$tmp/got.json"
    probe store-list "" store list --json

    # erg measure on a fake RAPL tree (the counters stand still: 0 J; times vary from run to run).
    R=$tmp/root
    mkdir -p "$R/sys/class/powercap/intel-rapl:0" "$R/proc"
    echo package-0 > "$R/sys/class/powercap/intel-rapl:0/name"
    echo 1000000 > "$R/sys/class/powercap/intel-rapl:0/energy_uj"
    echo 262143328850 > "$R/sys/class/powercap/intel-rapl:0/max_energy_range_uj"
    printf 'cpu  100 0 0 100 0 0 0 0 0 0\n' > "$R/proc/stat"
    varies=1
    export ERG_ROOT="$R" XDG_CACHE_HOME="$tmp/cache"
    probe measure "$tmp/m.json" measure -r 2 --json --baseline none --backends rapl-sysfs \
        --export-json "$tmp/m.json" -- true
    unset ERG_ROOT XDG_CACHE_HOME
    varies=0
}

# First erg's own allocations, then jansson's too (the documents erg builds and prints).
jmode=""
cases
jmode=" (jansson too)"
export ERG_FAILALLOC_JANSSON=1
cases

[ "$jansson_crashes" -gt 0 ] && echo "($jansson_crashes runs crashed inside jansson's parser, not counted)"
if [ "$checked" -eq 0 ]; then
    echo "no run checked"
    exit 1
fi
exit $fail
