#!/bin/sh
# SPDX-License-Identifier: MIT
# Names from files never drive a terminal (issue 16): on a terminal (a pseudo-terminal made by
# script(1)), control characters in a stored signature's name are printed as \xNN; to a pipe the
# bytes are left as written.
set -u
: "${ERG_BIN:?}"
command -v script > /dev/null || { echo "skip: script(1) (util-linux) is missing"; exit 77; }
T=$(mktemp -d /tmp/erg_term.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
printf '{"erg": "signature/1", "name": "evil\\u001b]0;pwned\\u0007\\u001b[31mred", "device": "gpu0", "static_power_w": 60, "time_s": 0.002, "dynamic_energy_j": 0.5, "time_var_s2": 1e-8, "energy_var_j2": 0.0001, "grade": "hw_shunt", "runs": 10}' > "$T/sig.json"
"$ERG_BIN" store --store "$T/s.db" put "$T/sig.json" || fail "put"
script -qec "'$ERG_BIN' store --store '$T/s.db' list" /dev/null > "$T/tty" 2>&1 || fail "script"
grep -q 'evil\\x1b]0;pwned\\x07\\x1b\[31mred' "$T/tty" || fail "escaped on a terminal: $(cat -v "$T/tty")"
esc=$(printf '\033')
grep -q "$esc" "$T/tty" && fail "a raw ESC reached the terminal: $(cat -v "$T/tty")"
"$ERG_BIN" store --store "$T/s.db" list > "$T/pipe" || fail "list to a file"
grep -q "evil${esc}]0;pwned" "$T/pipe" || fail "to a file the bytes are kept: $(cat -v "$T/pipe")"
echo ok
