#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/frontier.md's examples, run verbatim so that they cannot drift: the ```json block is saved
# as fr.json, every "$ erg ..." line of a ```sh block is run in that folder and its stdout must
# equal the ```text block that follows it; the ⊕ error the doc quotes is checked on the same file.
set -u
: "${ERG_BIN:?ERG_BIN not set}"
: "${ERG_TEST_SOURCE_DIR:?ERG_TEST_SOURCE_DIR not set}"
DOC="$ERG_TEST_SOURCE_DIR/docs/frontier.md"
T=$(mktemp -d /tmp/erg_frontier_doc.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -r "$DOC" ] || fail "cannot read $DOC"

# Split the doc: json_N.json, cmd_N (one command a line), out_N.txt (the text block after cmd_N).
awk -v dir="$T" '
    /^```json$/ { nj++; f = dir "/json_" nj ".json"; inb = 1; next }
    /^```sh$/   { nc++; f = dir "/cmd_" nc; inb = 2; next }
    /^```text$/ { f = dir "/out_" nc ".txt"; inb = 3; next }
    /^```/      { inb = 0; next }
    inb == 1 || inb == 3 { print > f }
    inb == 2 && /^\$ / { print substr($0, 3) > f }
' "$DOC"
[ -s "$T/json_1.json" ] || fail "no json block in the doc"
[ ! -e "$T/json_2.json" ] || fail "a second json block: name it in this test"
cp "$T/json_1.json" "$T/fr.json"
# The block itself must be accepted as it stands.
(cd "$T" && "$ERG_BIN" frontier fr.json) > /dev/null 2> "$T/fr.err" ||
    fail "the doc's json example is rejected: $(cat "$T/fr.err")"
[ -s "$T/cmd_1" ] || fail "no \$ erg command in the doc"

n=0
for c in "$T"/cmd_*; do
    i=${c##*_}
    while IFS= read -r line; do
        case "$line" in erg\ *) ;; *) fail "not an erg command: $line" ;; esac
        n=$((n + 1))
        # The doc's commands are simple words: run them with ERG_BIN in place of erg.
        # shellcheck disable=SC2086
        (cd "$T" && set -f && "$ERG_BIN" ${line#erg }) > "$T/got_$n.txt" 2> "$T/err_$n.txt" ||
            fail "'$line' exit $?: $(cat "$T/err_$n.txt")"
        if [ -e "$T/out_$i.txt" ]; then
            cmp -s "$T/out_$i.txt" "$T/got_$n.txt" ||
                fail "'$line' output differs from the doc:
$(diff "$T/out_$i.txt" "$T/got_$n.txt")"
        fi
    done < "$c"
done
[ "$n" -ge 1 ] || fail "ran no command"

# The error quoted in the doc: mlp without its omega.device under ⊕ with attn.
sed -e 's/"mlp": {"device": "gpu0", "omega": {"device": {"sm_mhz": 1410}},/"mlp": {"device": "gpu0",/' \
    -e 's/"expr": {"seq": \[{"par": \["attn", "allreduce"\]}, "mlp"\]}/"expr": {"par": ["attn", "mlp"]}/' \
    "$T/fr.json" > "$T/bad.json"
! cmp -s "$T/fr.json" "$T/bad.json" || fail "could not derive bad.json from the doc's example"
(cd "$T" && "$ERG_BIN" frontier bad.json) > "$T/bad.out" 2> "$T/bad.err"
rc=$?
[ "$rc" -eq 2 ] || fail "bad.json exit $rc, expected 2"
[ ! -s "$T/bad.out" ] || fail "bad.json wrote to stdout"
[ "$(wc -l < "$T/bad.err")" -eq 1 ] || fail "not one line: $(cat "$T/bad.err")"
# placed at the ⊕ expression: line 17 ` "expr": {"par": ["attn", "mlp"]}}`, its '{' at 10
for want in 'erg: bad.json:17:10: expr: ⊕ operands share no device operating point (ω_dev): ' \
    '"attn" (expr.par[0]) at {"sm_mhz":1410} on gpu0, {"sm_mhz":1200} on gpu0; ' \
    '"mlp" (expr.par[1]) at no ω_dev (no omega.device) on gpu0; give every operand the same '; do
    grep -qF "$want" "$T/bad.err" || fail "error lacks '$want': $(cat "$T/bad.err")"
done
# ...and the doc quotes it (joined over its line breaks).
tr '\n' ' ' < "$DOC" | sed 's/  */ /g' | grep -qF '"mlp" (expr.par[1]) at no ω_dev (no omega.device) on gpu0' ||
    fail "the doc no longer quotes the ⊕ error"
echo "ok: $n doc command(s), the json example and the quoted error"
