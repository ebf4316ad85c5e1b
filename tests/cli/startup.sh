#!/bin/sh
# An energy meter must not perturb what it measures (issue 13): an erg process loads no BLAS
# library and starts no BLAS thread pool outside the profiler (OpenBLAS's server thread spun on
# sched_yield for ~0.09 s of CPU in every process, and killed every command at start-up under a
# process or thread limit), and `erg measure -- true` costs no more CPU than the command plus a
# small constant, counted against a reference process (user + system time, not wall time).
set -u
erg=${ERG_BIN:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$(mktemp -d /tmp/erg-startup.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
# A powercap tree with one package zone, so the test does not depend on the host's counters.
Z=$T/sys/class/powercap/intel-rapl:0
mkdir -p "$Z"
echo package-0 > "$Z/name"
echo 1000000 > "$Z/energy_uj"
echo 262143328850 > "$Z/max_energy_range_uj"
export ERG_ROOT=$T ERG_NVML_LIB=$T/none.so

# The measured command reads its parent's (erg's) memory map and thread list.
ERG_ROOT=$T "$erg" measure -r 1 --backends rapl-sysfs -- sh -c \
    'cat /proc/$PPID/maps > "$0/maps"; ls /proc/$PPID/task > "$0/tasks"' "$T" > /dev/null 2> "$T/err" ||
    fail "erg measure: $(cat "$T/err")"
[ -s "$T/maps" ] || fail "the command did not run"
grep -qi "openblas" "$T/maps" && fail "erg measure loaded OpenBLAS: $(grep -i openblas "$T/maps" | head -1)"
grep -qi "libcairo\|libglpk" "$T/maps" && echo "note: cairo/GLPK still mapped (linked, not loaded on demand)"
echo "erg measure: $(wc -l < "$T/tasks") threads, $(grep -c '\.so' "$T/maps") shared-object mappings"

# CPU: erg measure -r 1 -- true against the command alone, medians of 7 runs each.
[ -n "${ERG_SANITIZED:-}" ] && { echo "startup: ok (CPU check skipped under the sanitizers)"; exit 0; }
command -v python3 > /dev/null || { echo "startup: no python3 for the CPU check"; exit 77; }
python3 - "$erg" <<'PY' || fail "CPU check"
import resource, statistics, subprocess, sys
erg = sys.argv[1]
def cpu(cmd, n=7):
    xs = []
    for _ in range(n):
        a = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        b = resource.getrusage(resource.RUSAGE_CHILDREN)
        xs.append(b.ru_utime - a.ru_utime + b.ru_stime - a.ru_stime)
    return statistics.median(xs)
ref = cpu(["true"])
got = cpu([erg, "measure", "-r", "1", "--backends", "rapl-sysfs", "--", "true"])
print(f"CPU: true {ref*1e3:.1f} ms, erg measure -r 1 -- true {got*1e3:.1f} ms (medians of 7)")
# A small constant: reading one counter twice and printing a table, not a BLAS thread pool.
sys.exit(0 if got <= ref + 0.05 else 1)
PY
echo "startup: ok"
