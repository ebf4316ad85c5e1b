#!/usr/bin/env bash
# Install what is missing, then run every phase of the test suite, each one even when an earlier one
# failed:
#   gcc       build with gcc (warnings as errors) and run every test
#   release   build the Release configuration scripts/main.sh makes (-O3) with warnings as errors
#   asan      build with clang under AddressSanitizer + UndefinedBehaviorSanitizer, run every test
# The last lines are a summary: each phase passed, failed (with the failing tests' names) or was
# skipped (and why). Exit status 0 only when every phase passed.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
logdir=build/test-logs
mkdir -p "$logdir"
jobs=$(nproc 2>/dev/null || echo 2)

declare -a names results
record() { names+=("$1"); results+=("$2"); }

# ctest's list of failed tests, from its log ("  12 - predict.cli (Failed)"); not the skipped
# ones it lists beside them ("  36 - frontier.perseus (Skipped)": the data they need is absent).
failed_tests() {
    sed -n '/(Skipped)$/d; s/^[[:space:]]*[0-9][0-9]* - \([^ ]*\) (.*/\1/p' "$1" | sort -u | tr '\n' ' '
}

# phase NAME BUILD_DIR RUN_TESTS CMAKE_ARGS...: configure, build and (when RUN_TESTS) test.
phase() {
    local name=$1 dir=$2 run_tests=$3
    shift 3
    echo "== phase $name: configure and build in $dir"
    if ! cmake -S . -B "$dir" "$@" > "$logdir/$name.configure.log" 2>&1; then
        cat "$logdir/$name.configure.log"
        record "$name" "FAILED: cmake configure (log: $logdir/$name.configure.log)"
        return
    fi
    if ! cmake --build "$dir" -j "$jobs" 2>&1 | tee "$logdir/$name.build.log"; then
        record "$name" "FAILED: build (compiler errors above; log: $logdir/$name.build.log)"
        return
    fi
    if [ "$run_tests" = no ]; then
        record "$name" "passed (build only)"
        return
    fi
    echo "== phase $name: ctest"
    if (cd "$dir" && ctest --output-on-failure -j "$jobs" -LE hw) 2>&1 | tee "$logdir/$name.ctest.log"; then
        local summary
        summary=$(grep -E '^[0-9]+% tests passed' "$logdir/$name.ctest.log" | tail -1)
        local skipped
        skipped=$(grep -c '\*\*\*Skipped\|Not Run' "$logdir/$name.ctest.log")
        local note=""
        [ "$skipped" -gt 0 ] && note=" ($skipped skipped: the data or hardware they need is absent; ctest's log says which)"
        record "$name" "passed: ${summary:-tests passed}$note"
    else
        record "$name" "FAILED: $(failed_tests "$logdir/$name.ctest.log")(log: $logdir/$name.ctest.log)"
    fi
}

if scripts/deps.sh; then
    phase gcc build/gcc yes -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DERG_WERROR=ON
    # The Release build scripts/main.sh makes (-O3) must be warning-free too: gcc sees more there.
    phase release build/release-check no -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release \
        -DERG_WERROR=ON -DERG_BUILD_TESTS=OFF
    if command -v clang > /dev/null; then
        export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
        phase asan build/asan yes -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DERG_WERROR=ON \
            -DERG_SANITIZE=ON -DERG_BUILD_BENCH=OFF
    else
        record asan "FAILED: skipped because clang is missing (scripts/deps.sh installs it)"
    fi
else
    for p in gcc release asan; do record "$p" "FAILED: skipped because scripts/deps.sh failed"; done
fi

status=0
echo
echo "== summary ($(( $(date +%s) - start )) s, $(uname -m), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1), $jobs CPUs)"
for i in "${!names[@]}"; do
    printf '  %-8s %s\n' "${names[$i]}" "${results[$i]}"
    case ${results[$i]} in FAILED*) status=1 ;; esac
done
if [ "$status" -eq 0 ]; then echo "== ALL PHASES PASSED"; else echo "== SOME PHASES FAILED (exit 1)"; fi
exit "$status"
