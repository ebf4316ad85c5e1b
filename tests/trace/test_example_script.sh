#!/bin/sh
# examples/trace-report.sh takes erg from $ERG (default build/release/src/cli/erg); a missing binary
# is exit 2 with how to build it, never exit 127 halfway through.
src=${ERG_TEST_SOURCE_DIR:?}
out=$(ERG=/nonexistent/erg sh -c "bash '$src/examples/trace-report.sh'" 2>&1)
rc=$?
[ "$rc" -eq 2 ] || { echo "missing erg: exit $rc, expected 2: $out"; exit 1; }
echo "$out" | grep -q "erg not found at /nonexistent/erg" || { echo "no message: $out"; exit 1; }
echo "$out" | grep -q "cmake --build build/release" || { echo "no build hint: $out"; exit 1; }
[ -x "${ERG_BIN:?}" ] || { echo "ERG_BIN not built"; exit 1; }
out=$(ERG=$ERG_BIN bash "$src/examples/trace-report.sh" 2>&1)
rc=$?
[ "$rc" -eq 0 ] || { echo "with ERG=$ERG_BIN: exit $rc: $out"; exit 1; }
case $out in
*"skipped:"*) exit 0 ;;
esac
echo "$out" | grep -q '"energy_j"' || { echo "no energy_j in the JSON part: $out"; exit 1; }
exit 0
