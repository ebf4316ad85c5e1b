#!/bin/sh
# SPDX-License-Identifier: MIT
# Start-up and self-perturbation of erg (issue 13), side by side with the command it measures:
# for `erg measure -r 1 -- true` and for `true` alone, the shared objects the process initialises
# (LD_DEBUG=libs, the dynamic loader's own list: linked and dlopen'ed alike) and the whole
# process's CPU time (user + system, medians; farm-bench pairs the runs A B A B, else hyperfine),
# with the ratio erg / true. Given a second erg (an older build), the same figures for it and the
# CPU ratio new / old, paired the same way. On a fake one-zone powercap tree (no counters needed).
# Usage: bench/bench_startup.sh [ERG_BIN] [OLD_ERG_BIN] [RUNS]
set -u
ERG_BIN=${1:-${ERG_BIN:-build/release/src/cli/erg}}
OLD=${2:-}
N=${3:-30}
T=$(mktemp -d /tmp/erg_bench_startup.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
Z=$T/sys/class/powercap/intel-rapl:0
mkdir -p "$Z" "$T/cache"
echo package-0 > "$Z/name"
echo 1000000 > "$Z/energy_uj"
echo 262143328850 > "$Z/max_energy_range_uj"
export ERG_ROOT=$T ERG_NVML_LIB=$T/none.so XDG_CACHE_HOME=$T/cache

# objects PROGRAM ARGS...: shared objects the first process initialises (not its children's).
objects() {
    env LD_DEBUG=libs LD_DEBUG_OUTPUT="$T/ld" "$@" > /dev/null 2>&1
    first=$(ls "$T"/ld.* | sort -t. -k2 -n | head -1)
    n=$(grep -c 'calling init:' "$first")
    rm -f "$T"/ld.*
    echo "$n"
}

# cpu A_CMD B_CMD: median CPU of A, of B, and of the pairwise ratio A/B (farm-bench), or the
# means and their ratio (hyperfine) -- printed as "A_s B_s ratio".
cpu() {
    if command -v farm-bench > /dev/null; then
        # shellcheck disable=SC2086
        farm-bench -n "$N" --vs "$2" -- $1 > "$T/fb" 2>&1 || { cat "$T/fb" >&2; return 1; }
        a=$(awk '$1 == "A" && $2 == "cpu" { print $5 }' "$T/fb")
        b=$(awk '$1 == "B" && $2 == "cpu" { print $5 }' "$T/fb")
        r=$(awk '$1 == "A/B" && $2 == "cpu" { print $4 }' "$T/fb")
        echo "$a $b $r"
    elif command -v hyperfine > /dev/null; then
        hyperfine -N -w 3 -r "$N" --export-json "$T/hf.json" "$1" "$2" > /dev/null 2>&1 || return 1
        python3 - "$T/hf.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
a, b = (x["user"] + x["system"] for x in r)
print(f"{a:.4f} {b:.4f} {a / b:.2f}")
PY
    else
        echo "bench_startup: neither farm-bench nor hyperfine is installed" >&2
        return 77
    fi
}

TRUE=$(command -v -p true 2> /dev/null | grep / || echo /bin/true)
[ -x "$TRUE" ] || TRUE=/usr/bin/true
measure="measure -r 1 --backends rapl-sysfs -- $TRUE"
t_objs=$(objects "$TRUE")
report() { # LABEL ERG
    objs=$(objects "$2" $measure)
    set -- "$1" "$2" $(cpu "$2 $measure" "$TRUE")
    printf '%-5s shared objects: erg measure -- true %3d, true %3d (ratio %.1f)\n' "$1" "$objs" \
        "$t_objs" "$(echo "$objs $t_objs" | awk '{ print $1 / $2 }')"
    printf '%-5s CPU (user+system, median): erg measure -- true %.4f s, true %.4f s, ratio %s\n' \
        "$1" "$3" "$4" "$5"
}
echo "bench_startup: $(uname -m), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $N runs each"
report new "$ERG_BIN"
if [ -n "$OLD" ]; then
    report old "$OLD"
    set -- $(cpu "$ERG_BIN $measure" "$OLD $measure")
    printf 'new/old CPU of erg measure -- true (paired medians): %s s / %s s, ratio %s\n' "$1" "$2" "$3"
fi
