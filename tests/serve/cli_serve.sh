#!/bin/sh
# SPDX-License-Identifier: MIT
# erg serve end to end on a fake powercap tree: the exposition over HTTP, paths and methods,
# the bearer token, an address in use, the off-loopback warning, bad options, SIGTERM.
set -u
: "${ERG_BIN:?ERG_BIN not set}"
command -v curl > /dev/null || { echo "skip: curl is not installed (scripts/deps.sh installs it)"; exit 77; }
T=$(mktemp -d /tmp/erg_serve_cli.XXXXXX)
pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

R="$T/root"
Z="$R/sys/class/powercap/intel-rapl:0"
mkdir -p "$Z"
echo package-0 > "$Z/name"
echo 262143328850 > "$Z/max_energy_range_uj"
printf '%020d\n' 1000000 > "$Z/energy_uj"
export ERG_ROOT="$R"

# start NAME ARGS...: erg serve in the background; its port from its start-up line
start() {
    name=$1
    shift
    "$ERG_BIN" serve --backends rapl-sysfs "$@" > "$T/$name.out" 2> "$T/$name.err" &
    pid=$!
    pids="$pids $pid"
    i=0
    while ! grep -q 'serving http' "$T/$name.err" 2> /dev/null; do
        i=$((i + 1))
        [ $i -lt 300 ] || fail "$name did not start: $(cat "$T/$name.err")"
        kill -0 "$pid" 2> /dev/null || return 1
        sleep 0.1
    done
    port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/$name.err")
}

start plain --listen 127.0.0.1:0 --interval 0.05 || fail "erg serve exited: $(cat "$T/plain.err")"
url="http://127.0.0.1:$port"
grep -q "serving $url/metrics" "$T/plain.err" || fail "the start line's URL has the bound port: $(cat "$T/plain.err")"
# the counter moves 5 J; wait until the exposition shows it
printf '%020d\n' 6000000 1<> "$Z/energy_uj"
i=0
until curl -sf "$url/metrics" > "$T/m" && grep -q '^erg_energy_joules_total{channel="rapl-sysfs:package-0",domain="package",device="package-0",grade="hw_shunt",scope="root"} 5$' "$T/m"; do
    i=$((i + 1))
    [ $i -lt 300 ] || fail "the counter never reached 5 J: $(grep energy_joules "$T/m")"
    sleep 0.1
done
curl -s -D "$T/h" -o "$T/m" "$url/metrics" # not the first scrape: it reports the previous one
grep -qi '^content-type: text/plain; version=0.0.4' "$T/h" || fail "content type: $(cat "$T/h")"
grep -q '^# TYPE erg_energy_joules_total counter$' "$T/m" || fail "TYPE line"
grep -q '^erg_exporter_cpu_seconds_total ' "$T/m" || fail "self cost"
grep -q '^erg_exporter_scrape_seconds ' "$T/m" || fail "scrape duration (after the first scrape)"

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$url/")" = 200 ] || fail "/ is not 200"
[ "$(code "$url/etc/passwd")" = 404 ] || fail "/etc/passwd is not 404"
[ "$(code --path-as-is "$url/../../etc/passwd")" = 404 ] || fail "a traversal is not 404"
[ "$(code "$url/metrics?file=/etc/shadow")" = 200 ] || fail "a query string changes nothing"
curl -s "$url/metrics?file=/etc/shadow" | grep -q 'root:' && fail "a query string read a file"
[ "$(code -X POST -d x=1 "$url/metrics")" = 405 ] || fail "POST is not 405"
[ "$(code -X DELETE "$url/metrics")" = 405 ] || fail "DELETE is not 405"

# the same address again: refused with a clear message, exit 2
"$ERG_BIN" serve --backends rapl-sysfs --listen "127.0.0.1:$port" > /dev/null 2> "$T/busy.err"
[ $? -eq 2 ] || fail "address in use: exit status"
grep -q "127.0.0.1:$port: the address is in use" "$T/busy.err" || fail "address in use message: $(cat "$T/busy.err")"

# SIGTERM stops it with status 0
kill -TERM "$pid"
wait "$pid"
[ $? -eq 0 ] || fail "SIGTERM: exit status"
grep -q 'stopped by SIGTERM' "$T/plain.err" || fail "SIGTERM message"

# a bearer token
echo "s3cret-token-0123456789" > "$T/token"
chmod 600 "$T/token"
start tok --listen 127.0.0.1:0 --token-file "$T/token" || fail "token serve exited: $(cat "$T/tok.err")"
url="http://127.0.0.1:$port"
[ "$(code "$url/metrics")" = 401 ] || fail "no token is not 401"
[ "$(code -H 'Authorization: Bearer wrong' "$url/metrics")" = 401 ] || fail "a wrong token is not 401"
[ "$(code -H 'Authorization: Bearer s3cret-token-012345678' "$url/metrics")" = 401 ] || fail "a prefix of the token is not 401"
[ "$(code -H 'Authorization: Bearer s3cret-token-0123456789' "$url/metrics")" = 200 ] || fail "the token is not accepted"
chmod 644 "$T/token"
"$ERG_BIN" serve --backends rapl-sysfs --listen 127.0.0.1:0 --token-file "$T/token" > /dev/null 2> "$T/mode.err"
[ $? -eq 2 ] || fail "a world-readable token file: exit status"
grep -q 'readable by others' "$T/mode.err" || fail "token file mode message: $(cat "$T/mode.err")"
printf 'short\n' > "$T/short"; chmod 600 "$T/short"
"$ERG_BIN" serve --backends rapl-sysfs --token-file "$T/short" > /dev/null 2> "$T/short.err"
[ $? -eq 2 ] && grep -q 'shorter than 16' "$T/short.err" || fail "a short token: $(cat "$T/short.err")"
"$ERG_BIN" serve --backends rapl-sysfs --token-file "$T/none" > /dev/null 2> "$T/none.err"
[ $? -eq 2 ] && grep -q 'cannot open the token file' "$T/none.err" || fail "a missing token file"

# off loopback without a token: it says plainly who can read it
start open --listen 0.0.0.0:0 || fail "0.0.0.0 serve exited: $(cat "$T/open.err")"
grep -q 'anyone on the network who can reach this address can read these metrics' "$T/open.err" ||
    fail "no warning off loopback: $(cat "$T/open.err")"

# bad options
for args in "--interval 0" "--interval abc" "--attribute threads" "--top 0" "--listen nonsense" \
    "--listen 127.0.0.1:70000" "--bogus" "extra"; do
    # shellcheck disable=SC2086
    "$ERG_BIN" serve --backends rapl-sysfs $args > /dev/null 2> "$T/bad.err"
    [ $? -eq 2 ] || fail "'erg serve $args': exit status (want 2): $(cat "$T/bad.err")"
done
grep -q 'not a listen address' "$T/bad.err" || true

# --once checks its options as the server does
for args in "--listen nohost" "--listen 127.0.0.1:99999" "--token-file $T/none" "--token-file $T"; do
    # shellcheck disable=SC2086
    "$ERG_BIN" serve --backends rapl-sysfs --once $args > /dev/null 2> "$T/bad.err"
    [ $? -eq 2 ] || fail "'erg serve --once $args': exit status (want 2): $(cat "$T/bad.err")"
done
# --once: two samples, the exposition on stdout
"$ERG_BIN" serve --backends rapl-sysfs --once --interval 0.05 > "$T/once" 2> "$T/once.err" || fail "--once: $(cat "$T/once.err")"
grep -q '^erg_exporter_samples_total 1$' "$T/once" || fail "--once output"
echo "ok"
