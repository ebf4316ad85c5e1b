#!/bin/sh
# SPDX-License-Identifier: MIT
# DESIGN's module table as a check the build runs: every symbol a module's objects use from
# another module must come from a module it depends on (directly or through one it depends on).
# An upward dependency (the meter calling the calculus, the trace opening the store) fails here
# instead of waiting for a review. Usage: layering.sh OBJDIR (the erg_obj target's object folder,
# holding src/<module>/*.o).
set -u
objdir=${1:?usage: layering.sh OBJDIR}
command -v nm > /dev/null || { echo "layering: no nm"; exit 77; }
# module: the modules it may use (DESIGN.md's table, "depends on"; transitive below).
deps() {
    case $1 in
    core) echo "" ;;
    meter) echo "core" ;;
    # measure writes signatures (attribution -> signature: DESIGN's pipeline), whose type, checks
    # and JSON form are the calculus module's; DESIGN's table lists "meter, core" only.
    measure) echo "meter calculus core" ;;
    calculus) echo "core" ;;
    frontier) echo "calculus core" ;;
    trace) echo "calculus core" ;;
    predict) echo "calculus measure meter core" ;;
    store) echo "calculus core" ;;
    serve) echo "meter measure core" ;;
    *) echo "UNKNOWN" ;;
    esac
}
T=$(mktemp -d /tmp/erg-layering.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
mods=$(cd "$objdir/src" && ls -d */ | tr -d /)
for m in $mods; do
    ls "$objdir/src/$m"/*.o > /dev/null 2>&1 || continue
    nm -g --defined-only "$objdir/src/$m"/*.o 2>/dev/null | awk -v m="$m" 'NF == 3 { print $3, m }' >> "$T/defs"
done
sort -u "$T/defs" > "$T/defs.sorted"
bad=0
for m in $mods; do
    ls "$objdir/src/$m"/*.o > /dev/null 2>&1 || continue
    allowed=" $m $(deps "$m") "
    [ "$allowed" = " $m UNKNOWN " ] && { echo "layering: module $m is not in DESIGN's table (tests/layering.sh)"; bad=1; continue; }
    nm -u "$objdir/src/$m"/*.o 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u > "$T/undef"
    join "$T/undef" "$T/defs.sorted" | while read -r sym owner; do
        case "$allowed" in
        *" $owner "*) ;;
        *) echo "$m -> $owner: $sym" ;;
        esac
    done >> "$T/violations"
done
if [ -s "$T/violations" ]; then
    echo "FAIL: upward or sideways dependencies (module -> module: symbol):" >&2
    sort -u "$T/violations" >&2
    exit 1
fi
# Inside a module the files form a DAG too: a file uses the symbols of another, never both ways
# round (a shared lower-level helper goes into a file of its own). tsort names the files of a loop.
command -v tsort > /dev/null || { echo "layering: no tsort"; exit 77; }
for m in $mods; do
    ls "$objdir/src/$m"/*.o > /dev/null 2>&1 || continue
    : > "$T/fdefs"
    for o in "$objdir/src/$m"/*.o; do
        nm -g --defined-only "$o" 2>/dev/null | awk -v f="${o##*/}" 'NF == 3 { print $3, f }' >> "$T/fdefs"
    done
    sort "$T/fdefs" > "$T/fdefs.sorted"
    : > "$T/fedges"
    for o in "$objdir/src/$m"/*.o; do
        nm -u "$o" 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u | join - "$T/fdefs.sorted" |
            awk -v f="${o##*/}" '$2 != f { print f, $2, $1 }' >> "$T/fedges"
    done
    if ! cut -d' ' -f1,2 "$T/fedges" | sort -u | tsort > /dev/null 2> "$T/loop"; then
        echo "FAIL: files of src/$m use each other (a cycle; file -> file: symbol):" >&2
        sed -n 's/^tsort: \([^ ]*\.o\)$/\1/p' "$T/loop" > "$T/loopfiles"
        awk 'NR == FNR { in_loop[$1] = 1; next } ($1 in in_loop) && ($2 in in_loop) {
                 sub(/\.c\.o$/, ".c", $1); sub(/\.c\.o$/, ".c", $2); print $1 " -> " $2 ": " $3 }' \
            "$T/loopfiles" "$T/fedges" >&2
        bad=1
    fi
done
[ "$bad" = 0 ] || exit 1
echo "layering: ok ($(echo $mods | wc -w) modules, no file cycle inside one)"
