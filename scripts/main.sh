#!/usr/bin/env bash
# Install what is missing, build erg, and run the main job on the bundled example: compose the
# energy of the paper's attention layer (energy-calculus paper, Section 2.4) with its uncertainty.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DERG_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
build/release/src/cli/erg compose examples/attention-layer.json
