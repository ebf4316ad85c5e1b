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
echo "layering: ok ($(echo $mods | wc -w) modules)"
