#!/usr/bin/env bash
# Install what is missing, build erg with gcc (warnings as errors) and run every test; build the
# Release configuration with warnings as errors; then build again with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer and run every test again.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build/gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DERG_WERROR=ON >/dev/null
cmake --build build/gcc -j "$jobs"
(cd build/gcc && ctest --output-on-failure -j "$jobs" -LE hw)

# The Release build scripts/main.sh makes (-O3) must be warning-free too: gcc sees more there.
cmake -S . -B build/release-check -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release -DERG_WERROR=ON \
      -DERG_BUILD_TESTS=OFF >/dev/null
cmake --build build/release-check -j "$jobs"

cmake -S . -B build/asan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DERG_WERROR=ON \
      -DERG_SANITIZE=ON -DERG_BUILD_BENCH=OFF >/dev/null
cmake --build build/asan -j "$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build/asan && ctest --output-on-failure -j "$jobs" -LE hw)
