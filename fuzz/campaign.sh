#!/usr/bin/env bash
# A long fuzzing run of one target (docs/reliability.md): one worker, at most RUNS executions (default 1e6) or
# SECONDS (default 600), whichever comes first, from a working corpus WORK/TARGET seeded with the committed
# one; crashing inputs go to WORK/TARGET-crash-*. Prints the libFuzzer summary line: executions, time, exec/s,
# cov. Afterwards `fuzz_TARGET -merge=1 fuzz/corpus/TARGET WORK/TARGET` folds new coverage into the commit.
# usage: campaign.sh BUILD_DIR TARGET WORK [RUNS [SECONDS]]
set -euo pipefail
build=${1:?usage: campaign.sh BUILD_DIR TARGET WORK [RUNS [SECONDS]]}
t=${2:?usage: campaign.sh BUILD_DIR TARGET WORK [RUNS [SECONDS]]}
work=${3:?usage: campaign.sh BUILD_DIR TARGET WORK [RUNS [SECONDS]]}
runs=${4:-1000000}
seconds=${5:-600}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$work/$t"
for f in "$src/corpus/$t"/*; do [ -e "$work/$t/${f##*/}" ] || cp "$f" "$work/$t/"; done
start=$(date +%s)
status=0
"$build/fuzz/fuzz_$t" -runs="$runs" -max_total_time="$seconds" -close_fd_mask=2 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -dict="$src/dahlsim.dict" -artifact_prefix="$work/$t-" "$work/$t" >"$work/$t.log" 2>&1 ||
    status=$?
wall=$(($(date +%s) - start))
last=$(grep -E '^#[0-9]+' "$work/$t.log" | tail -n 1)
execs=$(sed -nE 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
printf '%s: status %d, %s executions in %d s (%s exec/s), %s\n' "$t" "$status" "${execs:-?}" "$wall" \
    "$(( ${execs:-0} / (wall > 0 ? wall : 1) ))" "$(grep -oE 'cov: [0-9]+ ft: [0-9]+' <<<"$last" | tail -n 1)"
exit "$status"
