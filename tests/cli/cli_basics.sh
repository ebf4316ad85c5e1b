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
# A count option says the same thing, in the same words, in every command (none runs the command).
for c in measure characterize refine; do
    for v in 0 -1 x 1.5 99999999999; do
        msg=$("$erg" "$c" -r "$v" -- true 2>&1 >/dev/null); st=$?
        [ "$st" -eq 2 ] || fail "erg $c -r $v: exit $st, want 2"
        echo "$msg" | head -1 | grep -Eq "^erg $c: --runs expects an integer from 1 to [0-9]+, got '$v'\$" \
            || fail "erg $c -r $v: $msg"
    done
done
msg=$("$erg" profile ops --threads 0 -o /dev/null 2>&1); [ $? -eq 2 ] \
    && echo "$msg" | grep -q "^erg profile: --threads expects an integer from 1 to 1024, got '0'" \
    || fail "profile --threads 0: $msg"
msg=$("$erg" fit blocks x --width 65 -o /dev/null 2>&1); [ $? -eq 2 ] \
    && echo "$msg" | grep -q "^erg fit: --width expects an integer from 1 to 64, got '65'" \
    || fail "fit --width 65: $msg"
echo "cli basics: ok"
