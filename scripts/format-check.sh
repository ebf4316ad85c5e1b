#!/bin/sh
# Every C and C++ source in the tree follows .clang-format (STYLE.md section 12), checked with
# clang-format 14 (--dry-run -Werror). Exit 77 (skip) without clang-format-14, which
# scripts/deps.sh installs. To reformat after an edit: scripts/format-check.sh --fix
cd "$(dirname "$0")/.." || exit 1
cf=$(command -v clang-format-14 || command -v clang-format) || { echo "no clang-format"; exit 77; }
"$cf" --version | grep -q "version 14" || { echo "clang-format is not version 14"; exit 77; }
files=$(find src include tests bench python examples -type f \
            \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) 2>/dev/null | LC_ALL=C sort)
[ -n "$files" ] || { echo "format-check: no sources found"; exit 1; }
if [ "${1:-}" = "--fix" ]; then
    # shellcheck disable=SC2086
    exec "$cf" -i $files
fi
# shellcheck disable=SC2086
exec "$cf" --dry-run -Werror $files
