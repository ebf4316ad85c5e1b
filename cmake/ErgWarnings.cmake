# Warning set from STYLE.md section 10; -Werror when ERG_WERROR is on (CI).
function(erg_set_warnings target)
    target_compile_options(${target} PRIVATE
        -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
        -Wundef -Wwrite-strings -Wvla)
    # clang flags the float-typed NAN/INFINITY macros under -Wdouble-promotion; gcc does not.
    if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${target} PRIVATE -Wdouble-promotion)
    endif()
    if(ERG_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()
