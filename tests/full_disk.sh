#!/usr/bin/env bash
# Results, traces, sweeps and calibrations written to a full file system (issue 24): each write fails with a
# one-line error naming the file and "No space left on device" (the first dahlsim error line; FxT prints its
# own "write buffer" line before it), exit 1, and the files of the earlier runs
# in the same directories are left byte for byte as they were.
# Usage: full_disk.sh DAHLSIM_BIN SOURCE_DIR. Needs a private mount namespace for a small tmpfs (root, or
# unprivileged user namespaces); exits 77 (skipped) where neither is allowed.
set -u
bin=$1
src=$2

if [ "${DAHLSIM_FULL_DISK_NS:-}" != 1 ]; then
    for how in "unshare -m" "unshare -rm"; do
        if $how true 2>/dev/null; then
            DAHLSIM_FULL_DISK_NS=1 exec $how bash "$0" "$@"
        fi
    done
    echo "full_disk: no private mount namespace here (unshare -m and -rm refused): skipped"
    exit 77
fi

fs=$(mktemp -d /tmp/dahlsim-full-disk-XXXXXX)
logs=$(mktemp -d /tmp/dahlsim-full-disk-logs-XXXXXX) # outside the full file system
if ! mount -t tmpfs -o size=16m tmpfs "$fs" 2>/dev/null; then
    echo "full_disk: cannot mount a tmpfs in the namespace: skipped"
    rmdir "$fs"
    rm -rf "$logs"
    exit 77
fi
trap 'umount "$fs"; rmdir "$fs"; rm -rf "$logs"' EXIT
export DAHLSIM_HOME=$src/tests/data STARPU_SILENT=1 ASAN_OPTIONS=detect_leaks=0
tiny=$src/tests/data/scenarios/tiny.json
grid=$src/tests/data/scenarios/tiny-sweep.json
failures=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
digest() { (cd "$1" && find . -type f -exec md5sum {} + | sort -k2 | md5sum); }
run_q() { "$bin" "$@" >"$logs/out" 2>"$logs/err"; }

# The earlier runs, with room to spare.
run_q run "$tiny" --out "$fs/run" --quiet --set trace=true || fail "earlier traced run: $(cat "$logs/err")"
run_q sweep "$grid" --out "$fs/sweep" --quiet || fail "earlier sweep: $(cat "$logs/err")"
run_q machine synth "$src/platforms/specs/build-2core.json" --machine m --out "$fs/synth" --quiet \
    --cover synthetic:12x12x1 || fail "earlier machine synth: $(cat "$logs/err")"
# The earlier calibration: a committed one (calibrating here would depend on the machine being quiet
# enough for StarPU to keep its samples, which a loaded CI runner is not).
mkdir -p "$fs/calib" && cp -r "$src/tests/data/calibration/tiny-2cpu" "$fs/calib/c" ||
    fail "earlier calibration: cannot copy tests/data/calibration/tiny-2cpu"
declare -A before
for d in run sweep synth calib; do
    before[$d]=$(digest "$fs/$d")
done

# Each command again, on the same directories, with the disk full ($1 KiB left); $2 the name of the case.
expect_failure() {
    local what=$1
    shift
    run_q "$@"
    local rc=$?
    if [ "$rc" != 1 ]; then
        fail "$what: exit $rc, expected 1: $(cat "$logs/err")"
    elif ! grep -m 1 '^dahlsim: error: ' "$logs/err" | grep -q 'No space left on device'; then
        fail "$what: the first error line does not say 'No space left on device': $(cat "$logs/err")"
    fi
}

dd if=/dev/zero of="$fs/filler" bs=4k 2>/dev/null
for left in 0 24; do
    [ "$left" -gt 0 ] && truncate -s "-${left}K" "$fs/filler"
    expect_failure "traced run, ${left} KiB left" run "$tiny" --out "$fs/run" --quiet --set trace=true
    expect_failure "machine synth, ${left} KiB left" machine synth "$src/platforms/specs/build-2core.json" \
        --machine m --out "$fs/synth" --quiet --cover synthetic:12x12x1
    if [ "$left" = 0 ]; then
        expect_failure "run into a new directory, disk full" run "$tiny" --out "$fs/new" --quiet
        [ -e "$fs/new/results.json" ] && fail "a failed run left $fs/new/results.json"
        expect_failure "sweep, disk full" sweep "$grid" --out "$fs/sweep" --quiet
        expect_failure "calibrate, disk full" calibrate --noisy 0.99 --machine c --dir "$fs/calib" --cover synthetic:12x12x1 \
            --rounds 4 --steps 16 --schedulers none --force --quiet
    fi
    for d in run sweep synth calib; do
        [ "$(digest "$fs/$d")" = "${before[$d]}" ] || fail "$d changed by a failed write (${left} KiB left)"
    done
done

if [ "$failures" -gt 0 ]; then
    echo "full_disk: $failures failure(s)"
    exit 1
fi
echo "full_disk: every write to a full disk failed cleanly; earlier results intact"
