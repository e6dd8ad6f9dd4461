#!/usr/bin/env bash
# ONNX model files end to end, on models PyTorch exports here (tests/onnx/make_models.py, Debian's python3-torch
# and python3-torchvision; no weights downloaded): a CNN of every supported operator is read with PyTorch's
# parameter count, trains natively (its loss falls), is calibrated on this machine (`calibrate --cover
# synthetic:32x32x3,model=FILE.onnx`) and simulated on that calibration and on a roofline H100 node
# (`machine synth`), and exports to the scheduler lab; with the file's weights (--onnx-weights), the first
# training step's loss of that CNN and of torchvision's ResNet-18 (convolutions without bias, a padded max-pool;
# PyTorch's parameter count) equals PyTorch's on the same images to 1e-5 (float32 sums in another order), and
# ResNet-18 simulates on the H100 node; an unsupported operator, an input
# of another size and a truncated file are each refused in one line naming the file, exit 2. Exit 77 (skipped) where
# /usr/bin/python3 lacks torch, torchvision or onnx (scripts/setup-deps installs them).
# usage: check_onnx.sh DAHLSIM_BINARY SOURCE_DIR [KEEP_DIR]
set -euo pipefail
dahlsim=$1
src=$2
py=/usr/bin/python3
if ! "$py" -c 'import torch, torchvision, onnx' 2>/dev/null; then
    echo "onnx: skipped: $py cannot import torch, torchvision and onnx (Debian: python3-torch python3-torchvision python3-onnx)" >&2
    exit 77
fi
work=${3:-$(mktemp -d /tmp/dahlsim-onnx-XXXXXX)}
mkdir -p "$work"
[ -n "${3:-}" ] || trap 'rm -rf "$work"' EXIT
export STARPU_SILENT=1 DAHLSIM_HOME=$work/home
mkdir -p "$DAHLSIM_HOME/calibration"
fail() {
    echo "onnx: $*" >&2
    exit 1
}

"$py" "$src/tests/onnx/make_models.py" "$work/models" >"$work/export.log" 2>&1 || { cat "$work/export.log" >&2; exit 1; }
params() { "$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["params"])' "$work/models/expected.json" "$1"; }
net=$work/models/every-op.onnx

# Read with PyTorch's parameter count, and it learns: the last epoch's loss below the first's.
"$dahlsim" train --model "$net" --dataset synthetic:32x32x3 --samples 256 --epochs 3 --batch 8 --lr 0.05 \
    --ncpu 2 >"$work/train.log" 2>&1 || { cat "$work/train.log" >&2; fail "train failed"; }
grep -q "every-op.onnx ($(params every-op) parameters)" "$work/train.log" ||
    { cat "$work/train.log" >&2; fail "parameter count differs from PyTorch's $(params every-op)"; }
awk '/^epoch /{for (i = 1; i < NF; i++) if ($i == "loss") l[++n] = $(i + 1)} END {exit !(n == 3 && l[3] < l[1])}' \
    "$work/train.log" || { cat "$work/train.log" >&2; fail "the loss did not fall"; }

# PyTorch's weights: the first step's loss (results.json, one step of 8 images) is PyTorch's on those images.
for m in no-dropout resnet18; do
    "$dahlsim" train --model "$work/models/$m.onnx" --onnx-weights --dataset "cifar10:$work/models/cifar" \
        --samples 8 --test-samples 8 --batch 8 --ncpu 1 --out "$work/loss-$m" >"$work/loss.log" 2>&1 ||
        { cat "$work/loss.log" >&2; fail "$m: train --onnx-weights failed"; }
    grep -q "$m.onnx ($(params "$m") parameters)" "$work/loss.log" ||
        { cat "$work/loss.log" >&2; fail "$m: parameter count differs from PyTorch's $(params "$m")"; }
    "$py" - "$work/models/expected.json" "$m" "$work/loss-$m/results.json" <<'EOF' || fail "$m: loss differs from PyTorch's"
import json, sys
want = json.load(open(sys.argv[1]))[sys.argv[2]]["loss"]
got = json.load(open(sys.argv[3]))["epochs_detail"][0]["loss"]
print(f"onnx: {sys.argv[2]}: first step's loss {got!r}, PyTorch's {want!r}")
sys.exit(0 if abs(got - want) <= 1e-5 * abs(want) else 1)
EOF
done

# Refusals: one line naming the file and what is wrong (a second line may be a hint), exit 2.
refused() { # refused WHAT EXPECTED_TEXT COMMAND...
    local what=$1 want=$2
    shift 2
    set +e
    "$@" >"$work/refused.log" 2>&1
    local rc=$?
    set -e
    [ "$rc" -eq 2 ] || { cat "$work/refused.log" >&2; fail "$what: exit $rc, expected 2"; }
    grep -v '^hint: ' "$work/refused.log" | grep -v '^\[starpu' >"$work/refused.lines" || true
    [ "$(wc -l <"$work/refused.lines")" -eq 1 ] || { cat "$work/refused.log" >&2; fail "$what: not one line"; }
    grep -qF "$want" "$work/refused.lines" || { cat "$work/refused.log" >&2; fail "$what: no \"$want\""; }
}
refused "an unsupported operator" "unsupported.onnx: node '/Sigmoid' (Sigmoid): operator not supported" \
    "$dahlsim" train --model "$work/models/unsupported.onnx" --dataset synthetic:32x32x3 --samples 8 --batch 8
refused "an input of another size" "every-op.onnx: input 'images' is 3x32x32" \
    "$dahlsim" train --model "$net" --dataset synthetic:28x28x1 --samples 8 --batch 8
head -c 3000 "$net" >"$work/truncated.onnx"
refused "a truncated file" "truncated.onnx: not an ONNX model" \
    "$dahlsim" train --model "$work/truncated.onnx" --dataset synthetic:32x32x3 --samples 8 --batch 8
refused "a missing file" "missing.onnx: No such file" \
    "$dahlsim" train --model "$work/missing.onnx" --dataset synthetic:32x32x3 --samples 8 --batch 8

# Simulated: on a roofline H100 node and on a calibration of this machine covering the network.
scenario() { # scenario MACHINE GPUS SCHEDULER OUT
    "$dahlsim" run "$src/scenarios/fmnist-lenet-2core.json" --set machine="$1" --set gpus="$2" \
        --set scheduler="$3" --set model="\"$net\"" --set dataset=synthetic:32x32x3 --set samples=512 \
        --out "$4" >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; fail "run on $1 failed"; }
    grep -q '"samples_per_s"' "$4/results.json" || fail "$4/results.json has no samples_per_s"
}
"$dahlsim" machine synth "$src/platforms/specs/h100.json" --machine rf-h100 --out "$DAHLSIM_HOME/calibration" \
    --cover "synthetic:32x32x3,model=$net" --quiet >"$work/synth.log" 2>&1 || { cat "$work/synth.log" >&2; fail "synth failed"; }
scenario rf-h100 1 dmda "$work/run-h100"
"$dahlsim" machine synth "$src/platforms/specs/h100.json" --machine rf-h100-resnet --out "$DAHLSIM_HOME/calibration" \
    --cover "synthetic:32x32x3,model=$work/models/resnet18.onnx" --quiet >"$work/synth.log" 2>&1 ||
    { cat "$work/synth.log" >&2; fail "synth for resnet18 failed"; }
net=$work/models/resnet18.onnx scenario rf-h100-resnet 1 dmda "$work/run-h100-resnet18"
# --noisy 0.99: the test measures that calibrating works, not this machine's quiet (CTest runs tests side by side)
"$dahlsim" calibrate --machine here --dir "$DAHLSIM_HOME/calibration" --cover "synthetic:32x32x3,model=$net" \
    --schedulers none --noisy 0.99 >"$work/calibrate.log" 2>&1 || { tail -n 20 "$work/calibrate.log" >&2; fail "calibrate failed"; }
scenario here 0 lws "$work/run-here"

# The scheduler lab's export of a training step.
"$dahlsim" dag export --machine here --model "$net" --dataset synthetic:32x32x3 --out "$work/dag.json" \
    >"$work/dag.log" 2>&1 || { cat "$work/dag.log" >&2; fail "dag export failed"; }
echo "onnx: every-op.onnx read ($(params every-op) parameters), trained, calibrated, simulated; refusals checked"
