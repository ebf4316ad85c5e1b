#!/bin/sh
# SPDX-License-Identifier: MIT
# Every ERG_API declaration in every public header has its own /** */ comment directly above it
# (house rule: every public function and type is documented; the header is the contract), and
# every fallible one is ERG_NODISCARD (issue 13: a status that is ignored hides a failure).
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
    # A fallible public function (its comment names an erg status, ERG_E..., or "Errors:") is
    # ERG_NODISCARD, and so is a constructor returning an owned pointer (erg_*_new).
    awk '
    /\/\*\*/ { doc = "" ; indoc = 1 }
    indoc { doc = doc " " $0 }
    indoc && /\*\// { indoc = 0 }
    /^ERG_API/ && !/ERG_NODISCARD/ {
        name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
        if (name == "erg_diag_set") next # returns the status it is given: return erg_diag_set(...)
        if ($0 ~ /^ERG_API (int|enum erg_status) / && doc ~ /ERG_E[A-Z]|Errors?:/) {
            printf "%s:%d: fallible but not ERG_NODISCARD: %s\n", FILENAME, NR, name; bad = 1
        }
        if (name ~ /_new$/) { printf "%s:%d: constructor not ERG_NODISCARD: %s\n", FILENAME, NR, name; bad = 1 }
    }
    END { exit bad }
    ' "$h" || bad=1
done
[ $bad -eq 0 ] || { echo "FAIL: public declarations without a /** */ comment, or fallible ones not ERG_NODISCARD" >&2; exit 1; }
echo "header docs: ok"
