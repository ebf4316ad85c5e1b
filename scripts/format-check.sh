#!/bin/sh
# The files that follow .clang-format today (clang-format 14, --dry-run -Werror). The rest of the
# tree joins this list when it is reformatted in one pass (done once all parallel work has landed,
# so that no branch conflicts with a tree-wide reformat). Exit 77 (skip) without clang-format-14.
cd "$(dirname "$0")/.." || exit 1
cf=$(command -v clang-format-14 || command -v clang-format) || { echo "no clang-format"; exit 77; }
"$cf" --version | grep -q "version 14" || { echo "clang-format is not version 14"; exit 77; }
exec "$cf" --dry-run -Werror \
    src/calculus/graph.c \
    src/calculus/graph.h \
    src/calculus/sched_read.h \
    src/calculus/sched_json.c \
    src/calculus/schedule.c \
    src/calculus/signature.c \
    src/calculus/strmap.c \
    src/calculus/strmap.h \
    src/calculus/sig_json.c \
    src/calculus/sniff.c \
    src/frontier/frontier.c \
    src/frontier/opsched.c \
    src/frontier/opsched.h \
    src/frontier/opsched_read.c \
    src/frontier/compose.c \
    src/frontier/dag.c \
    src/frontier/pareto.c \
    src/core/grade.c \
    src/core/flags.c \
    include/erg/flags.h \
    include/erg/grade.h \
    include/erg/api.h \
    tests/fuzz/replay_main.c \
    tests/fuzz/fuzz_frontier.c \
    tests/fuzz/fuzz_compose.c \
    tests/fuzz/fuzz_trace_report.c \
    tests/fuzz/fuzz_model.c \
    tests/fuzz/fuzz_calibration.c \
    tests/frontier/test_compose.c \
    tests/frontier/test_dag.c
