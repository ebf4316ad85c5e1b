#!/bin/sh
# An energy meter must not perturb what it measures (issue 13):
# - an erg process maps only the libraries erg is linked with, and erg is not linked with what
#   only some commands need: OpenBLAS (the profiler; its server thread spun on sched_yield for
#   ~0.09 s of CPU in every process), cairo (plots), GLPK (the frontier's LP), libmicrohttpd (the
#   exporter) and what they pull in (X11, fontconfig, GnuTLS, SuiteSparse, ...);
# - those are loaded when a command needs them (src/core/dynlib.c), and when absent that command
#   fails with exit 3 and a message naming the library and its Debian package, while every other
#   command runs;
# - `erg measure -- true` costs no more CPU than the command it spawns plus a small constant:
#   erg's own CPU time (its rusage less the command's, as erg reports it), never wall time,
#   against a constant counted in what starting `true` costs on the same host (so that a slow or
#   busy host does not fail it).
set -u
erg=${ERG_BIN:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$(mktemp -d /tmp/erg-startup.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
# A powercap tree with one package zone, so the test does not depend on the host's counters.
Z=$T/sys/class/powercap/intel-rapl:0
mkdir -p "$Z" "$T/cache"
echo package-0 > "$Z/name"
echo 1000000 > "$Z/energy_uj"
echo 262143328850 > "$Z/max_energy_range_uj"
export ERG_ROOT=$T ERG_NVML_LIB=$T/none.so XDG_CACHE_HOME=$T/cache
ondemand='libopenblas|libcairo|libglpk|libmicrohttpd|libX11|libfontconfig|libgnutls|libamd|libcolamd'

# What erg is linked with: none of the on-demand libraries.
if command -v ldd > /dev/null; then
    ldd "$erg" > "$T/ldd" 2>&1 || fail "ldd $erg: $(cat "$T/ldd")"
    grep -Eq "$ondemand" "$T/ldd" && fail "erg is linked with a library only some commands need: $(grep -E "$ondemand" "$T/ldd" | tr -d '\t' | tr '\n' ' ')"
fi

# The measured command reads its parent's (erg's) memory map and thread list.
"$erg" measure -r 1 --backends rapl-sysfs -- sh -c \
    'cat /proc/$PPID/maps > "$0/maps"; ls /proc/$PPID/task > "$0/tasks"' "$T" > /dev/null 2> "$T/err" ||
    fail "erg measure: $(cat "$T/err")"
[ -s "$T/maps" ] || fail "the command did not run"
grep -Eq "$ondemand" "$T/maps" && fail "erg measure mapped a library it does not need: $(grep -E "$ondemand" "$T/maps" | head -1)"
# Every shared object mapped is one erg is linked with (nothing was dlopen'ed on the way): names
# compared without their version ("libc.so.6" from ldd, "libc.so.6" or "libfoo.so.2.3.0" mapped).
awk '$6 ~ /\.so/ { n = split($6, p, "/"); print p[n] }' "$T/maps" | sed 's/\.so.*/.so/' | sort -u > "$T/mapped"
if [ -s "$T/ldd" ]; then
    awk '{ print $1 }' "$T/ldd" | sed 's,.*/,,; s/\.so.*/.so/' | sort -u > "$T/linked"
    extra=$(comm -23 "$T/mapped" "$T/linked" | grep -v '^ld-linux' | tr '\n' ' ')
    [ -z "$extra" ] || fail "erg measure mapped shared objects it is not linked with: $extra"
fi
echo "erg measure: $(wc -l < "$T/tasks") threads, $(wc -l < "$T/mapped") shared objects mapped"

# The on-demand libraries absent (an empty file of each name first on the library path): the
# commands that need them fail with exit 3 naming the library and its package; the others run.
mkdir -p "$T/nolib"
for l in libcairo.so.2 libglpk.so.40 libmicrohttpd.so.12; do : > "$T/nolib/$l"; done
export LD_LIBRARY_PATH="$T/nolib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$erg" measure -r 1 --backends rapl-sysfs -- true > /dev/null 2> "$T/err" ||
    fail "erg measure without cairo, GLPK, libmicrohttpd: $(cat "$T/err")"
cat > "$T/par.json" <<'JSON'
{"erg": "schedule/1", "devices": {"gpu0": {"static_power_w": 10}},
 "signatures": {
   "long": {"device": "gpu0", "points": [
      {"time_s": 1.0, "dynamic_energy_j": 50}, {"time_s": 2.0, "dynamic_energy_j": 30}]},
   "short": {"device": "gpu0", "points": [
      {"time_s": 0.2, "dynamic_energy_j": 10}, {"time_s": 0.9, "dynamic_energy_j": 5}]}},
 "expr": {"par": ["long", "short"]}}
JSON
"$erg" frontier "$T/par.json" --csv > "$T/out" 2> "$T/err" || fail "frontier without cairo: $(cat "$T/err")"
grep -q "^time_s,energy_j" "$T/out" || fail "frontier table: $(cat "$T/out")"
"$erg" frontier "$T/par.json" --plot "$T/f.svg" > /dev/null 2> "$T/err"; rc=$?
[ $rc -eq 3 ] || fail "frontier --plot without cairo: exit $rc, not 3: $(cat "$T/err")"
grep -q "^erg: libcairo.so.2: cannot be loaded, needed for plots (install Debian's libcairo2): " "$T/err" ||
    fail "frontier --plot without cairo: message: $(cat "$T/err")"
[ ! -e "$T/f.svg" ] || fail "a plot was written without cairo"
cat > "$T/dag.json" <<'JSON'
{"erg": "schedule/1", "devices": {"g": {"static_power_w": 0}},
 "signatures": {"A": {"device": "g", "points": [
    {"time_s": 1, "dynamic_energy_j": 5}, {"time_s": 2, "dynamic_energy_j": 1}]}},
 "nodes": [{"id": "n1", "signature": "A"}, {"id": "n2", "signature": "A"}],
 "edges": [["n1", "n2"]]}
JSON
"$erg" frontier "$T/dag.json" --method enumerate --csv > /dev/null 2> "$T/err" ||
    fail "DAG enumeration without GLPK: $(cat "$T/err")"
"$erg" frontier "$T/dag.json" --method relax > /dev/null 2> "$T/err"; rc=$?
[ $rc -eq 3 ] || fail "DAG relaxation without GLPK: exit $rc, not 3: $(cat "$T/err")"
grep -q "^erg: libglpk.so.40: cannot be loaded, needed for the frontier's LP relaxation (install Debian's libglpk40): " "$T/err" ||
    fail "DAG relaxation without GLPK: message: $(cat "$T/err")"
"$erg" serve --backends rapl-sysfs --listen 127.0.0.1:0 > /dev/null 2> "$T/err" < /dev/null; rc=$?
[ $rc -eq 3 ] || fail "serve without libmicrohttpd: exit $rc, not 3: $(cat "$T/err")"
grep -q "libmicrohttpd.so.12: cannot be loaded, needed for the HTTP exporter (install Debian's libmicrohttpd12): " "$T/err" ||
    fail "serve without libmicrohttpd: message: $(cat "$T/err")"
unset LD_LIBRARY_PATH

# CPU: erg's own CPU for `erg measure -r 1 -- true`, medians of 7 runs: the process's rusage (it
# includes the command, which erg waits for) less the command's user and system time as erg
# reports it. The constant is counted in the host's own unit, not in seconds: the CPU that starting
# `true` directly costs here (fork, exec, the dynamic loader: about 1 ms on this project's
# machine), so a slower or busier host moves both sides alike. At most 20 such start-ups plus
# 20 ms: erg itself costs about 3 ms here (reading one counter a few times and printing a table),
# while OpenBLAS's spinning thread alone cost 0.09 s.
[ -n "${ERG_SANITIZED:-}" ] && { echo "startup: ok (CPU check skipped under the sanitizers)"; exit 0; }
command -v python3 > /dev/null || { echo "startup: no python3 for the CPU check"; exit 77; }
python3 - "$erg" <<'PY' || fail "CPU check"
import json, os, shutil, statistics, subprocess, sys
erg = sys.argv[1]
true = shutil.which("true") or "/bin/true"

def rusage_cpu(argv):
    """The output and CPU seconds (user + system) of argv and everything it waited for."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv[0]} exited {os.waitstatus_to_exitcode(status)}")
    return out, ru.ru_utime + ru.ru_stime

own, cmd, start = [], [], []
for _ in range(7):
    start.append(rusage_cpu([true])[1])
    out, ru = rusage_cpu([erg, "measure", "-r", "1", "--json", "--backends", "rapl-sysfs", "--",
                          true])
    m = json.loads(out)
    if m["runs_attempted"] != 1:
        sys.exit(f"erg measure ran the command {m['runs_attempted']} times, not once")
    c = m["user_cpu_s"]["mean"] + m["system_cpu_s"]["mean"]
    cmd.append(c)
    own.append(ru - c)
got, unit = statistics.median(own), statistics.median(start)
limit = 20 * unit + 0.02
print(f"CPU: erg measure -r 1 -- true: erg itself {got*1e3:.1f} ms, the command "
      f"{statistics.median(cmd)*1e3:.1f} ms, true started directly {unit*1e3:.1f} ms "
      f"(medians of 7); at most 20 x {unit*1e3:.1f} + 20 = {limit*1e3:.0f} ms")
sys.exit(0 if got <= limit else 1)
PY
echo "startup: ok"
