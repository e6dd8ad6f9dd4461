#!/usr/bin/env bash
# `dahlsim sweep --slurm` on a real Slurm cluster: one node on localhost (munged, slurmctld, slurmd as the
# current user, in a temporary directory, on free ports), the 6 points of tests/data/sweep-slurm.json run
# locally (--jobs 2) and as a job array, at most 2 tasks at once. The job is cancelled (scancel) once a point
# is recorded: the command exits 1 naming the missing points. Re-run, it submits exactly those; stopped with
# SIGTERM, the job goes on, and the next re-run waits for that job instead of submitting another, then exits
# 0. results.csv equals the local one but for its wall-time columns, and every point's results.json but for
# the host's figures (wall_s, peak_rss_kib, maps_*); makespan_s to the bit. Exit 77 (skipped) where munged,
# slurmctld, slurmd or sbatch is missing or the cluster does not come up (scripts/setup-deps installs them).
# usage: check_slurm.sh DAHLSIM_BINARY SOURCE_DIR [KEEP_DIR]
set -euo pipefail
dahlsim=$1
src=$2
scenario=$src/tests/data/sweep-slurm.json
PATH=$PATH:/usr/sbin:/sbin
skip() {
    echo "slurm: skipped: $*" >&2
    exit 77
}
fail() {
    echo "slurm: $*" >&2
    exit 1
}
for tool in munged slurmctld slurmd sbatch squeue scancel sinfo scontrol; do
    command -v "$tool" >/dev/null ||
        skip "$tool is not installed (Debian: munge slurmctld slurmd slurm-client)"
done
# an enclosing Slurm job's variables would reach sbatch and squeue
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SQUEUE|SINFO|SCANCEL)_' || true)

w=${3:-$(mktemp -d /tmp/dahlsim-slurm-XXXXXX)}
mkdir -p "$w"
w=$(cd "$w" && pwd)
keep=${3:+1}
driver=

# A daemon of ours still running: the pid in its pid file, alive (not a zombie) and running that program.
daemon_pid() { # daemon_pid PIDFILE NAME
    local pid
    pid=$(cat "$1" 2>/dev/null) || return 1
    [ -n "$pid" ] && grep -q "$2" "/proc/$pid/cmdline" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" &&
        echo "$pid"
}
cleanup() {
    set +e
    [ -n "$driver" ] && kill "$driver" 2>/dev/null
    if [ -f "$w/slurm.conf" ]; then
        timeout 10 scancel --user="$(id -un)" >/dev/null 2>&1
        timeout 10 scontrol shutdown >/dev/null 2>&1
    fi
    local pids=() pid n
    for pid in "slurmd.pid slurmd" "slurmctld.pid slurmctld" "munge/munged.pid munged"; do
        set -- $pid
        pid=$(daemon_pid "$w/$1" "$2") && pids+=("$pid")
    done
    for n in $(seq 50); do
        local left=()
        for pid in "${pids[@]}"; do
            [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && left+=("$pid")
        done
        [ ${#left[@]} -eq 0 ] && break
        [ "$n" -eq 1 ] && kill "${left[@]}" 2>/dev/null
        [ "$n" -eq 40 ] && kill -9 "${left[@]}" 2>/dev/null
        sleep 0.1
    done
    [ -n "$keep" ] || rm -rf "$w"
}
trap cleanup EXIT

# Prints the last lines of the daemons' logs, then skips.
cluster_down() {
    for log in "$w"/log/*; do
        [ -f "$log" ] && { echo "--- $log" >&2; tail -n 15 "$log" >&2; }
    done
    skip "$*"
}

# ---- the cluster ----------------------------------------------------------------------------------------
user=$(id -un)
host=$(hostname -s)
mkdir -p "$w/munge" "$w/state" "$w/spool" "$w/log"
chmod 700 "$w/munge"
head -c 1024 /dev/urandom >"$w/munge/munge.key"
chmod 400 "$w/munge/munge.key"
munged --key-file="$w/munge/munge.key" --socket="$w/munge/munge.socket" --pid-file="$w/munge/munged.pid" \
    --log-file="$w/log/munged.log" --seed-file="$w/munge/munged.seed" --force 2>"$w/log/munged.err" ||
    cluster_down "munged did not start: $(head -n 1 "$w/log/munged.err")"

# Two free TCP ports: not listening now (ss), nor each other.
used=$(ss -Htln 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' || true)
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 30000))
        grep -qx "$p" <<<"$used" || { echo "$p"; return; }
    done
}
ctld_port=$(free_port)
used+=$'\n'$ctld_port
slurmd_port=$(free_port)
cpus=$(nproc)
mem=$(awk '/^MemTotal:/ { m = int($2 / 1024) - 1024; print (m > 256 ? m : 256) }' /proc/meminfo)
cat >"$w/slurm.conf" <<EOF
# a one-node cluster for tests/check_slurm.sh, as $user, in $w
ClusterName=dahlsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$w/munge/munge.socket
CryptoType=crypto/munge
StateSaveLocation=$w/state
SlurmdSpoolDir=$w/spool
SlurmctldPidFile=$w/slurmctld.pid
SlurmdPidFile=$w/slurmd.pid
SlurmctldLogFile=$w/log/slurmctld.log
SlurmdLogFile=$w/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
# a cancelled task gets SIGKILL 5 s after SIGTERM (30 s by default)
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$w/slurm.conf
slurmctld -c -f "$SLURM_CONF" 2>"$w/log/slurmctld.err" || cluster_down "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N "$host" 2>"$w/log/slurmd.err" || cluster_down "slurmd did not start"
start=$SECONDS
until [ "$(sinfo -h -o %t 2>/dev/null)" = idle ]; do
    [ $((SECONDS - start)) -lt 30 ] || cluster_down "the node is not idle after 30 s (sinfo: $(sinfo -h -o %t 2>&1))"
    sleep 0.5
done
echo "slurm: one-node cluster up in $((SECONDS - start)) s ($cpus CPUs, ports $ctld_port and $slurmd_port)"

# ---- the sweeps -----------------------------------------------------------------------------------------
export STARPU_SILENT=1
per_task=$((cpus / 2 > 1 ? cpus / 2 : 1)) # at most 2 tasks at once: the cancel finds points pending
slurm_sweep=("$dahlsim" sweep "$scenario" --out "$w/S" --slurm --poll 1 --sbatch-arg=--cpus-per-task=$per_task)
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; } # complete lines
points() { grep -o '^{"point":[0-9]*' "$1" | cut -d: -f2 | sort -n; }
# The points 0..5 missing from the file, as a Slurm array spec (1,3,5-8).
missing_spec() {
    points "$1" | awk '{ have[$1] = 1 } END {
        for (i = 0; i < 6; i++) if (!(i in have)) {
            j = i; while (j + 1 < 6 && !((j + 1) in have)) j++
            s = s (s == "" ? "" : ",") (j == i ? i : i "-" j); i = j }
        print s }'
}
# Waits (at most $2 s) for the background driver; its exit status in $rc.
wait_driver() {
    local end=$((SECONDS + $2))
    while kill -0 "$driver" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
    kill -0 "$driver" 2>/dev/null && fail "$1: still running after $2 s"
    rc=0
    wait "$driver" || rc=$?
    driver=
}

# (a) locally
t0=$SECONDS
timeout 300 "$dahlsim" sweep "$scenario" --out "$w/L" --jobs 2 --quiet 2>"$w/a.err" ||
    { cat "$w/a.err" >&2; fail "(a) local sweep failed"; }
echo "slurm: (a) local sweep, --jobs 2: 6 points in $((SECONDS - t0)) s"

# (b) --slurm, the job cancelled once a point is recorded
t0=$SECONDS
"${slurm_sweep[@]}" >"$w/b.out" 2>"$w/b.err" &
driver=$!
until [ -s "$w/S/slurm-job" ] && [ "$(lines "$w/S/results.jsonl")" -ge 1 ]; do
    kill -0 "$driver" 2>/dev/null || { cat "$w/b.err" >&2; fail "(b) --slurm ended before a point was recorded"; }
    [ $((SECONDS - t0)) -lt 240 ] || fail "(b) no point recorded after 240 s"
    sleep 0.2
done
job1=$(cat "$w/S/slurm-job")
scancel "$job1" || fail "(b) scancel $job1 failed"
wait_driver "(b) --slurm after scancel" 120
cat "$w/b.err" >&2
[ "$rc" -eq 1 ] || fail "(b) --slurm after scancel $job1 exited $rc, expected 1"
[ "$(cat "$w/b.out")" = "$job1" ] || fail "(b) stdout is not the job id $job1: $(cat "$w/b.out")"
grep -q '^#SBATCH --array=0-5$' "$w/S/sweep.slurm" || fail "(b) the first job's array is not 0-5"
done1=$(lines "$w/S/results.jsonl")
missing=$(missing_spec "$w/S/results.jsonl")
[ "$done1" -ge 1 ] && [ "$done1" -lt 6 ] || fail "(b) $done1 points recorded after scancel, expected 1 to 5"
grep -q "$((6 - done1)) of 6 points missing after Slurm job $job1 ($missing:" "$w/b.err" ||
    fail "(b) no line saying $((6 - done1)) points ($missing) are missing"
cp "$w/S/results.jsonl" "$w/before.jsonl"
echo "slurm: (b) job $job1 cancelled after $((SECONDS - t0)) s with $done1 point(s) recorded: exit 1, missing $missing"

# (c) re-run: only the missing points submitted; SIGTERM stops the wait, not the job
t0=$SECONDS
"${slurm_sweep[@]}" >"$w/c.out" 2>"$w/c.err" &
driver=$!
until [ -s "$w/c.out" ]; do
    kill -0 "$driver" 2>/dev/null || { cat "$w/c.err" >&2; fail "(c) --slurm ended before submitting"; }
    [ $((SECONDS - t0)) -lt 60 ] || fail "(c) nothing submitted after 60 s"
    sleep 0.1
done
job2=$(cat "$w/S/slurm-job")
[ "$(cat "$w/c.out")" = "$job2" ] && [ "$job2" != "$job1" ] || fail "(c) no new job (slurm-job: $job2)"
grep -q "^#SBATCH --array=$missing\$" "$w/S/sweep.slurm" ||
    fail "(c) sweep.slurm's array is not the missing points $missing: $(grep array= "$w/S/sweep.slurm")"
kill -TERM "$driver"
wait_driver "(c) --slurm after SIGTERM" 30
cat "$w/c.err" >&2
[ "$rc" -eq 1 ] || fail "(c) --slurm after SIGTERM exited $rc, expected 1"
grep -q "stopped waiting; Slurm job $job2 goes on" "$w/c.err" || fail "(c) no line saying job $job2 goes on"
[ -n "$(squeue -h -r --jobs="$job2" -o %i)" ] || fail "(c) job $job2 left the queue with the command's SIGTERM"
echo "slurm: (c) re-run submitted job $job2 for exactly $missing; SIGTERM: exit 1, the job still queued"

# (c') re-run while that job is queued: waits for it, submits nothing, collects
timeout 300 "${slurm_sweep[@]}" >"$w/d.out" 2>"$w/d.err" || { cat "$w/d.err" >&2; fail "(c') --slurm failed"; }
cat "$w/d.err" >&2
grep -q "Slurm job $job2 .* is still queued: waiting for it" "$w/d.err" || fail "(c') did not wait for job $job2"
[ ! -s "$w/d.out" ] && [ "$(cat "$w/S/slurm-job")" = "$job2" ] || fail "(c') submitted another job"
n=$(lines "$w/S/results.jsonl")
[ "$n" -eq 6 ] || fail "(c') $n lines in results.jsonl, expected 6"
[ "$(points "$w/S/results.jsonl" | uniq | wc -l)" -eq 6 ] || fail "(c') a point recorded twice"
head -n "$done1" "$w/S/results.jsonl" | cmp -s - "$w/before.jsonl" || fail "(c') the lines recorded before changed"
echo "slurm: (c') re-run waited for job $job2 and collected: 6 points, exit 0, $((SECONDS - t0)) s for (c) and (c')"

# (d) the same results as the local sweep
wall_cols=$(head -n 1 "$w/L/results.csv" | tr ',' '\n' | grep -nE '(^|_)wall_s$' | cut -d: -f1 | paste -sd, -)
[ -n "$wall_cols" ] || fail "(d) no wall_s column in results.csv"
strip() { awk -F, -v drop="$wall_cols" 'BEGIN { n = split(drop, d, ","); for (i = 1; i <= n; i++) skip[d[i]] = 1 }
    { s = ""; for (i = 1; i <= NF; i++) if (!(i in skip)) s = s $i ","; print s }' "$1"; }
diff <(strip "$w/L/results.csv") <(strip "$w/S/results.csv") >&2 ||
    fail "(d) results.csv differs from the local sweep's beyond column(s) $wall_cols"
[ "$(wc -l <"$w/S/results.csv")" -eq 7 ] || fail "(d) results.csv has not 6 rows"
for i in 0 1 2 3 4 5; do
    p=points/000$i/results.json
    a=$(grep '"makespan_s":' "$w/L/$p") && b=$(grep '"makespan_s":' "$w/S/$p") && [ "$a" = "$b" ] ||
        fail "(d) point $i: makespan_s differs: local ${a:-none}, Slurm ${b:-none}"
done
if command -v python3 >/dev/null; then
    python3 - "$w/L/points" "$w/S/points" <<'EOF' || fail "(d) a point's results.json differs"
import json, sys
host = {"wall_s", "peak_rss_kib", "maps_first_step", "maps_peak"}  # this machine's, not the simulation's
for i in range(6):
    a, b = (json.load(open(f"{d}/{i:04d}/results.json")) for d in sys.argv[1:3])
    diff = sorted(k for k in set(a) | set(b) if k not in host and a.get(k) != b.get(k))
    if diff:
        sys.exit(f"slurm: (d) point {i}: results.json differs in {', '.join(diff)}")
EOF
fi
echo "slurm: (d) results.csv equals the local sweep's but for column(s) $wall_cols (wall_s); every point's" \
    "results.json too but for wall_s, peak_rss_kib, maps_*"
