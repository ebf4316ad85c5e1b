# Warning set from STYLE.md section 10, on every target (library, CLI, tests, benchmarks, fuzzers,
# examples); -Werror when ERG_WERROR is on (CI). -Wconversion (gcc: with -Wsign-conversion for C;
# clang: -Wshorten-64-to-32, -Wimplicit-int-float-conversion, ...) and -Wcast-qual: a narrowing is
# an explicit cast where a check or a bound proves it safe, a const is dropped only through
# uintptr_t where an API takes a non-const pointer it never writes (erg__json_mut, exec argv).
function(erg_set_warnings target)
    target_compile_options(${target} PRIVATE
        -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
        -Wundef -Wcast-qual -Wwrite-strings -Wconversion -Wvla)
    # clang flags the float-typed NAN/INFINITY macros under -Wdouble-promotion; gcc does not.
    if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${target} PRIVATE -Wdouble-promotion)
    endif()
    if(ERG_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()
