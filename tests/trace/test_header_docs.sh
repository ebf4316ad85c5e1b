#!/bin/sh
# SPDX-License-Identifier: MIT
# Every ERG_API declaration in include/erg/trace.h has its own /** */ comment directly above it,
# and each names its errors (or says it never fails / returns NULL). Same rule as frontier.h's.
set -u
h="${ERG_TEST_SOURCE_DIR:?}/include/erg/trace.h"
awk '
/\/\*\*/ { inc = 1; doc = ""; }
inc { doc = doc $0 "\n"; }
inc && /\*\// { inc = 0; last = doc; lastline = NR; next }
/^ERG_API/ {
    if (lastline != NR - 1) { printf "undocumented: %s (line %d)\n", $0, NR; bad = 1 }
    else if (tolower(last) !~ /errors|never fails|returns null/) {
        printf "no errors stated: %s (line %d)\n", $0, NR; bad = 1 }
    lastline = -10
    next
}
END { exit bad }
' "$h" || { echo "FAIL: trace.h documentation" >&2; exit 1; }
echo ok
