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
#include <erg/signature.h>
#include <erg/version.h>
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
