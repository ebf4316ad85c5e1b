#!/bin/sh
# Install into a temporary prefix and build a program against it with pkg-config alone.
set -u
build=${1:?build dir}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$t/prefix" > "$t/log" 2>&1 || fail "cmake --install: $(tail -5 "$t/log")"
pc=$(dirname "$(find "$t/prefix" -name erg.pc | head -1)")
[ -n "$pc" ] || fail "erg.pc not installed"
[ -x "$t/prefix/bin/erg" ] || fail "erg not installed"
cat > "$t/use.c" <<'C'
#include <erg/erg.h>
#include <stdio.h>
int main(void)
{
    erg_signature a[2];
    erg_signature_init(&a[0]);
    a[0].static_power_w = 120;
    a[0].time_s = 2.77e-3;
    a[1] = a[0];
    erg_signature r;
    if (erg_signature_par(a, 2, &r, NULL) != ERG_OK)
        return 1;
    printf("%.4f %s\n", erg_signature_static_energy_j(&r), erg_version());
    return 0;
}
C
cc -std=c17 -Wall -Werror "$t/use.c" -o "$t/use" $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs erg) \
    -Wl,-rpath,"$t/prefix/lib" > "$t/cc" 2>&1 || fail "build against the installed erg: $(cat "$t/cc")"
out=$("$t/use") || fail "program failed"
[ "$out" = "0.3324 $("$t/prefix/bin/erg" --version | cut -d' ' -f2)" ] || fail "unexpected output '$out'"
echo "install: ok ($out)"

# The models and grids are installed under share/erg, and the installed erg finds its default
# model there (not in the source tree it was built from): run from elsewhere, no ERG_* folders.
[ -f "$t/prefix/share/erg/grids/cpu.csv" ] || fail "grids/cpu.csv not installed under share/erg"
[ -f "$t/prefix/share/erg/models/a100-llmcompass.json" ] || fail "models not installed under share/erg"
p=$(cd "$t" && env -u ERG_DATA_DIR -u ERG_MODEL_DIR -u ERG_GRID_DIR \
    "$t/prefix/bin/erg" predict op gemm --m 64 --n 64 --k 64 --json 2> "$t/err")
case $? in
0) case $p in
   *"\"model\": \"$t/prefix/share/erg/models/"*) echo "install: predict uses the installed model" ;;
   *) fail "installed erg predict did not use the installed model: $p" ;;
   esac ;;
*) grep -q "no committed model for this machine" "$t/err" || fail "installed erg predict: $(cat "$t/err")"
   echo "install: no committed model for this machine's kind; default-model check skipped" ;;
esac
p=$(cd "$t" && env -u ERG_MODEL_DIR ERG_DATA_DIR="$t/prefix/share/erg" "$t/prefix/bin/erg" predict op \
    gemm --m 64 --n 64 --k 64 --model "$t/prefix/share/erg/models/a100-llmcompass.json" --json \
    2> /dev/null) || fail "installed erg predict with the installed A100 model"
