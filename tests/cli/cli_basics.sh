#!/bin/sh
# erg --help, --version, COMMAND --help for every command, and unknown commands.
set -u
erg=${ERG_BIN:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
"$erg" --version | grep -Eq '^erg [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version"
"$erg" --help > /tmp/erg-help.$$ || fail "--help exit status"
grep -q '^Commands:' /tmp/erg-help.$$ || fail "--help lists no commands"
# Every listed command answers --help with a Usage line and exit 0.
for c in $(sed -n '/^Commands:/,/^$/p' /tmp/erg-help.$$ | awk 'NF>1 && $1!="Commands:" {print $1}'); do
    "$erg" "$c" --help > /tmp/erg-chelp.$$ 2>&1 || fail "erg $c --help exit status"
    grep -q 'Usage: erg' /tmp/erg-chelp.$$ || fail "erg $c --help has no Usage line"
done
rm -f /tmp/erg-help.$$ /tmp/erg-chelp.$$
"$erg" 2>/dev/null; [ $? -eq 2 ] || fail "no arguments should exit 2"
"$erg" frobnicate 2>/dev/null; [ $? -eq 2 ] || fail "unknown command should exit 2"
echo "cli basics: ok"
