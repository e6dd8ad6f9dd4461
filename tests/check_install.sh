#!/usr/bin/env bash
# The installed tool as a user gets it: `cmake --install BUILD --prefix P` into a temporary prefix, then, from
# /, the installed dahlsim finds its own machines (P/share/dahlsim, not the source tree), simulates the
# default scenario (fewer samples, to stay short under the sanitizers) and has a man page per command.
# usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$(readlink -f "${1:?usage: check_install.sh BUILD_DIR}")
prefix=$(mktemp -d /tmp/dahlsim-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
fail() { printf 'check_install: %s\n' "$*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
cd /
unset DAHLSIM_HOME
share=$prefix/share/dahlsim
[ -f "$share/scenarios/fmnist-lenet-2core.json" ] || fail "no scenarios in $share"

# the machines it looks for are the installed ones
if "$prefix/bin/dahlsim" check "$share/scenarios/fmnist-lenet-2core.json" --set machine=no-such-machine \
    2>"$prefix/check.err"; then
    fail "a scenario on an unknown machine was accepted"
fi
grep -q "$share/calibration" "$prefix/check.err" || fail "not looking in $share/calibration: $(cat "$prefix/check.err")"

ASAN_OPTIONS=detect_leaks=0 STARPU_SILENT=1 "$prefix/bin/dahlsim" run "$share/scenarios/fmnist-lenet-2core.json" \
    --set samples=256 --out "$prefix/out" --quiet
grep -Eq '"makespan_s":[[:space:]]*[0-9]' "$prefix/out/results.json" || fail "no makespan in results.json"

for page in dahlsim dahlsim-run dahlsim-train dahlsim-sweep dahlsim-calibrate; do
    grep -q '^\.SH NAME' "$prefix/share/man/man1/$page.1" 2>/dev/null || fail "no man page $page.1"
done
echo "check_install: installed into $prefix, ran the default scenario from /"
