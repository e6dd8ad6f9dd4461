# Writes the man pages of an installed dahlsim from its own --help texts: dahlsim.1 (the command list) and
# dahlsim-COMMAND.1 for every command `dahlsim --help` lists. Run as a script at install time:
#   cmake -DDAHLSIM=path/to/dahlsim -DOUT=dir/man1 -DVERSION=x.y.z -P DahlMan.cmake
# No date in the pages: the same build installs the same bytes.
file(MAKE_DIRECTORY "${OUT}")

# roff text of a --help output: backslashes doubled, lines starting with '.' or "'" protected, in .nf/.fi.
function(dahl_man_page name summary helptext)
    string(REPLACE "\\" "\\\\" body "${helptext}")
    string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" body "${body}")
    string(TOUPPER "${name}" upper)
    string(REPLACE "-" "\\-" roff_name "${name}")
    file(WRITE "${OUT}/${name}.1"
         ".TH ${upper} 1 \"\" \"dahlsim ${VERSION}\" \"User Commands\"\n"
         ".SH NAME\n${roff_name} \\- ${summary}\n"
         ".SH DESCRIPTION\n.nf\n${body}.fi\n"
         ".SH SEE ALSO\n${ARGN}\n")
endfunction()

execute_process(COMMAND "${DAHLSIM}" --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "DahlMan: ${DAHLSIM} --help failed (${rc})")
endif()
string(REGEX MATCH "commands:\n(.*)\noptions:" _ "${top}")
string(REPLACE "\n" ";" lines "${CMAKE_MATCH_1}")
set(see)
foreach(line IN LISTS lines)
    if(line MATCHES "^  ([a-z-]+) +(.*)$")
        set(cmd "${CMAKE_MATCH_1}")
        set(summary "${CMAKE_MATCH_2}")
        execute_process(COMMAND "${DAHLSIM}" ${cmd} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc)
        if(NOT rc EQUAL 0)
            message(FATAL_ERROR "DahlMan: ${DAHLSIM} ${cmd} --help failed (${rc})")
        endif()
        dahl_man_page("dahlsim-${cmd}" "${summary}" "${text}" "dahlsim(1)")
        list(APPEND see "dahlsim\\-${cmd}(1)")
    endif()
endforeach()
list(JOIN see ", " see)
dahl_man_page("dahlsim" "a deep-learning training simulator on StarPU and SimGrid" "${top}" "${see}")
