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
# The functions that compute energy cite their formula's source (paper section).
for f in erg_trace_schedule erg_trace_report_make; do
    awk -v f="$f" '
    /\/\*\*/ { inc = 1; doc = ""; }
    inc { doc = doc $0 "\n"; }
    inc && /\*\// { inc = 0; last = doc; next }
    $0 ~ "^ERG_API.* " f "\\(" { found = 1; if (last !~ /Section [0-9]/) bad = 1 }
    END { exit (bad || !found) }
    ' "$h" || { echo "FAIL: $f cites no paper section" >&2; exit 1; }
done
echo ok
