# Writes OUT, a header defining DAHLSIM_COMMIT, the commit results.json and calibration manifests record:
# HEAD of the checkout at SRC, with "-dirty" appended when tracked files differ from it, or "unknown" outside
# a git checkout. Run by every build (sim/CMakeLists.txt), so a rebuild after a pull or an edit records what
# was built, not what was checked out when CMake last configured. OUT is rewritten only when its text
# changes: nothing recompiles otherwise.
#
# usage: cmake -DSRC=DIR -DOUT=FILE -P DahlCommit.cmake
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY "${SRC}" OUTPUT_VARIABLE commit
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE status ERROR_QUIET)
if(NOT status EQUAL 0 OR commit STREQUAL "")
    set(commit "unknown")
else()
    execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY "${SRC}"
                    OUTPUT_VARIABLE changes RESULT_VARIABLE status ERROR_QUIET)
    if(status EQUAL 0 AND NOT changes STREQUAL "")
        string(APPEND commit "-dirty")
    endif()
endif()
set(text "/* Generated at build time by cmake/DahlCommit.cmake. */\n#define DAHLSIM_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
    file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
    file(WRITE "${OUT}" "${text}")
endif()
