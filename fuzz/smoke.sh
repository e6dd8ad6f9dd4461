#!/usr/bin/env bash
# CTest fuzz_smoke: each libFuzzer target run from its committed corpus for a fixed number of inputs drawn with a
# fixed seed (3000; 100 for the slow scenario and manifest targets: a few seconds each), capped at
# 10 x FUZZ_SMOKE_SECONDS (default 3) on a slow machine, new inputs going to a scratch directory. BUILD_DIR is a -DDAHLSIM_FUZZ=ON clang build:
# configured and built here (target dahlsim_fuzz) when it is not one yet. Exits 77 (skipped) only where clang
# or its libFuzzer runtime (Debian: clang, libclang-rt-14-dev) is missing; 1 on a finding or a failed build.
# usage: smoke.sh SOURCE_DIR BUILD_DIR TARGET...
set -euo pipefail
src=${1:?usage: smoke.sh SOURCE_DIR BUILD_DIR TARGET...}
build=${2:?usage: smoke.sh SOURCE_DIR BUILD_DIR TARGET...}
shift 2
seconds=${FUZZ_SMOKE_SECONDS:-3}
cc=${FUZZ_CC:-clang}

scratch=$(mktemp -d /tmp/dahlsim-fuzz-smoke-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
command -v "$cc" >/dev/null || { echo "fuzz_smoke: skipped: no $cc (Debian package clang)"; exit 77; }
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    >"$scratch/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$scratch/probe.c" -o "$scratch/probe" 2>"$scratch/probe.log"; then
    cat "$scratch/probe.log"
    echo "fuzz_smoke: skipped: $cc cannot link libFuzzer (Debian package libclang-rt-14-dev)"
    exit 77
fi

if ! grep -qs '^DAHLSIM_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$cc" -DDAHLSIM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$scratch/configure.log" ||
        { cat "$scratch/configure.log"; exit 1; }
fi
cmake --build "$build" --target dahlsim_fuzz -j"$(nproc)" >"$scratch/build.log" 2>&1 || { tail -n 40 "$scratch/build.log"; exit 1; }

for t in "$@"; do
    mkdir -p "$scratch/$t"
    # -close_fd_mask=2: the parsers' error lines go; libFuzzer's own lines and any report still come out.
    # A fixed seed and count: the same inputs on every run, so that CI does not fail at random on a finding
    # a longer campaign has not made yet (the time limit only caps a slow machine).
    runs=3000
    case $t in scenario | manifest) runs=100 ;; esac # ~100 exec/s: every accepted point reads a machine
    if ! "$build/fuzz/fuzz_$t" -seed=1 -runs="$runs" -max_total_time="$((seconds * 10))" -close_fd_mask=2 \
        -timeout=10 -rss_limit_mb=2048 \
        -dict="$src/fuzz/dahlsim.dict" -artifact_prefix="$scratch/$t-" "$scratch/$t" "$src/fuzz/corpus/$t" \
        >"$scratch/$t.log" 2>&1; then
        tail -n 60 "$scratch/$t.log"
        for a in "$scratch/$t"-*; do
            [ -e "$a" ] && { printf 'fuzz_smoke: %s: crashing input (base64):\n' "$t"; base64 "$a"; }
        done
        printf 'fuzz_smoke: %s failed\n' "$t" >&2
        exit 1
    fi
    grep -E '^(#[0-9]+\s+DONE|Done [0-9]+ runs)' "$scratch/$t.log" | sed "s/^/$t: /" || true
done
