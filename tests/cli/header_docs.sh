#!/bin/sh
# SPDX-License-Identifier: MIT
# Every ERG_API declaration in every public header has its own /** */ comment directly above it
# (house rule: every public function and type is documented; the header is the contract).
set -u
bad=0
for h in "${ERG_TEST_SOURCE_DIR:?}"/include/erg/*.h "${ERG_TEST_SOURCE_DIR}"/include/erg/*.h.in; do
    [ -f "$h" ] || continue
    # every public header opens with a /** */ comment saying what it holds
    grep -q '^/\*\*' "$h" || { echo "$h: no /** */ doc comment"; bad=1; }
    # every public macro defined for users (ERG_API, ERG_NODISCARD, ...) is documented too
    awk '
    /\/\*\*/ { doc = NR }
    /^#ifndef ERG_[A-Z_]+$/ && $2 !~ /_H$/ {
        if (doc == 0 || NR - doc > 12) { printf "%s:%d: undocumented macro: %s\n", FILENAME, NR, $2; bad = 1 }
    }
    END { exit bad }
    ' "$h" || bad=1
    awk '
    /\/\*\*/ { inc = 1 }
    inc && /\*\// { inc = 0; lastline = NR; next }
    /^ERG_API/ {
        if (lastline != NR - 1) { printf "%s:%d: undocumented: %s\n", FILENAME, NR, $0; bad = 1 }
        lastline = -10
        next
    }
    END { exit bad }
    ' "$h" || bad=1
done
[ $bad -eq 0 ] || { echo "FAIL: public declarations without a /** */ comment" >&2; exit 1; }
echo "header docs: ok"
