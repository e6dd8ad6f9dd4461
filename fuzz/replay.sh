#!/usr/bin/env bash
# CTest fuzz_replay: every fuzz target's plain program (fuzz_replay_TARGET, built in every configuration) run
# over its committed corpus (fuzz/corpus/TARGET) and crashing inputs (fuzz/regressions/TARGET), under the
# build's sanitizers. Fails when a target has no corpus, or on the first input that crashes or leaks.
# usage: replay.sh BIN_DIR FUZZ_SOURCE_DIR TARGET...
set -euo pipefail
bin=${1:?usage: replay.sh BIN_DIR FUZZ_SOURCE_DIR TARGET...}
src=${2:?usage: replay.sh BIN_DIR FUZZ_SOURCE_DIR TARGET...}
shift 2
for t in "$@"; do
    dirs=("$src/corpus/$t")
    [ -d "$src/regressions/$t" ] && dirs+=("$src/regressions/$t")
    # the parsers' error lines are expected: only a finding's report matters, and the status says it
    if ! out=$("$bin/fuzz_replay_$t" "${dirs[@]}" 2>&1); then
        printf '%s\n' "$out" | tail -n 60
        printf 'fuzz_replay: %s failed\n' "$t" >&2
        exit 1
    fi
    printf '%s\n' "$out" | grep 'replayed$'
done
