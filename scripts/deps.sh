#!/usr/bin/env bash
# Install, from Debian 12's archive, whatever erg needs to build and test that is not there yet.
# Runs as root (or through sudo). Installs nothing when everything is present.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang clang-format-14 libclang-rt-14-dev
      libjansson-dev libgsl-dev libcmocka-dev libyajl-dev zlib1g-dev libglpk-dev
      libsqlite3-dev libopenblas-dev libfann-dev libcairo2-dev python3
      libmicrohttpd-dev prometheus curl wrk
      python3-cffi python3-numpy python3-setuptools python3-pip
      python3-torch)  # python3-torch: src/predict/profile_torch.py (erg profile blocks|models), python/erg
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "erg: installing ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
# Optional, for the benchmarks only: simdjson, the reference beside which bench/bench_trace_simdjson
# measures erg's trace reader (bench/bench_trace.sh skips that comparison without it). Its absence
# never fails the build or the tests.
opt=(libsimdjson-dev)
for p in "${opt[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        echo "erg: installing $p (optional, bench only)" >&2
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO=sudo
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$p" >&2 ||
            echo "erg: $p not installed (optional: bench_trace_simdjson is not built)" >&2
    fi
done
