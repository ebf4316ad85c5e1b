# Warning set from STYLE.md section 10; -Werror when ERG_WERROR is on (CI).
function(erg_set_warnings target)
    target_compile_options(${target} PRIVATE
        -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
        -Wundef -Wwrite-strings -Wvla -Wdouble-promotion)
    if(ERG_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()
