#!/usr/bin/env python3
"""PyTorch reference for `dahlsim train` on a GPU: the same LeNet as dahl's (runtime/dahl_network.c,
dahl_network_desc_lenet), trained with the same optimizer on synthetic data, timed in samples per second.

dahl's LeNet for a CxHxW input and K classes:
    conv 6 filters 5x5, stride 1, pad 2 -> ReLU -> max-pool 2x2 stride 2
    conv 16 filters 5x5, stride 1, pad 0 -> ReLU -> max-pool 2x2 stride 2 (where the map is at least 2x2)
    dense 120 -> ReLU -> dense K -> softmax + cross-entropy (batch mean)
    SGD, lr 0.01, momentum 0.9 (PyTorch's convention, as dahl's), float32 everywhere.
TF32 is off by default (dahl's cuBLAS GEMMs are plain FP32); --tf32 turns it on for cuDNN and matmuls.

Every (shape, batch, data placement) point prints one JSON line on stdout:
    {"shape": "1x28x28", "batch": 32, "data": "host", "samples_per_s": ..., "step_ms": ..., ...}
"data": "host" copies each batch from pinned host memory (as dahl's tensors live in RAM and StarPU moves
them), "device" keeps the whole synthetic set on the GPU (an upper bound).

usage: python3 bench/pytorch_lenet.py [--shape 1x28x28 ...] [--batch 32 ...] [--samples 8192] [--epochs 3]
"""
import argparse
import json
import sys
import time


def parse_shape(text):
    try:
        c, h, w = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected CxHxW with positive integers, got "{text}"')
    if min(c, h, w) < 1:
        raise argparse.ArgumentTypeError(f'expected CxHxW with positive integers, got "{text}"')
    return c, h, w


def positive(text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f'expected a positive integer, got "{text}"')
    return v


def lenet(torch, c, h, w, classes):
    """dahl's LeNet (see the module comment); the same shape rules as dahl_network_desc_lenet."""
    nn = torch.nn
    layers = [nn.Conv2d(c, 6, 5, stride=1, padding=2), nn.ReLU()]
    if h >= 2 and w >= 2:
        layers.append(nn.MaxPool2d(2, 2))
        h, w = h // 2, w // 2
    if h < 5 or w < 5:
        raise SystemExit(f"pytorch_lenet: error: --shape {c}x{h}x{w}: too small for LeNet's second convolution")
    layers += [nn.Conv2d(6, 16, 5, stride=1, padding=0), nn.ReLU()]
    h, w = h - 4, w - 4
    if h >= 2 and w >= 2:
        layers.append(nn.MaxPool2d(2, 2))
        h, w = h // 2, w // 2
    layers += [nn.Flatten(), nn.Linear(16 * h * w, 120), nn.ReLU(), nn.Linear(120, classes)]
    return nn.Sequential(*layers)


def bench_point(torch, args, shape, batch, placement, device):
    c, h, w = shape
    torch.manual_seed(args.seed)
    model = lenet(torch, c, h, w, args.classes).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = args.samples // batch
    if steps < 1:
        raise SystemExit(f"pytorch_lenet: error: --samples {args.samples} is smaller than --batch {batch}")
    gen = torch.Generator().manual_seed(args.seed)
    x_all = torch.rand((steps * batch, c, h, w), generator=gen)
    y_all = torch.randint(0, args.classes, (steps * batch,), generator=gen)
    if placement == "device":
        x_all, y_all = x_all.to(device), y_all.to(device)
    elif device.type == "cuda":
        x_all, y_all = x_all.pin_memory(), y_all.pin_memory()

    def epoch():
        last = None
        for s in range(steps):
            xb = x_all[s * batch:(s + 1) * batch].to(device, non_blocking=True)
            yb = y_all[s * batch:(s + 1) * batch].to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            last = loss
        return last

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    epoch()  # warm-up: cuDNN algorithm choice, allocator, kernels loaded
    sync()
    times = []
    loss = None
    for _ in range(args.epochs):
        t0 = time.perf_counter()
        loss = epoch()
        sync()
        times.append(time.perf_counter() - t0)
    best = min(times)
    return {
        "shape": f"{c}x{h}x{w}",
        "batch": batch,
        "data": placement,
        "samples": steps * batch,
        "epochs_timed": args.epochs,
        "samples_per_s": steps * batch / best,
        "samples_per_s_median": steps * batch / sorted(times)[len(times) // 2],
        "step_ms": 1e3 * best / steps,
        "final_loss": float(loss.item()),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "tf32": args.tf32,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", type=parse_shape, action="append",
                   help="input CxHxW (repeatable; default: 1x28x28, Fashion-MNIST's)")
    p.add_argument("--batch", type=positive, action="append", help="batch size (repeatable; default: 32)")
    p.add_argument("--data", choices=["host", "device", "both"], default="both",
                   help="where the synthetic samples live (default: both, one line each)")
    p.add_argument("--samples", type=positive, default=8192, help="samples per epoch (default: 8192)")
    p.add_argument("--epochs", type=positive, default=3, help="timed epochs after one warm-up (default: 3)")
    p.add_argument("--classes", type=positive, default=10)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cuda", help='torch device (default: "cuda")')
    p.add_argument("--tf32", action="store_true", help="allow TF32 in cuDNN and matmuls (default: off)")
    args = p.parse_args()

    import torch  # after argument parsing: --help works without PyTorch

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("pytorch_lenet: skipped: no CUDA device", file=sys.stderr)
        return 77
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    torch.backends.cudnn.benchmark = True
    shapes = args.shape or [(1, 28, 28)]
    batches = args.batch or [32]
    placements = ["host", "device"] if args.data == "both" else [args.data]
    for shape in shapes:
        for batch in batches:
            for placement in placements:
                print(json.dumps(bench_point(torch, args, shape, batch, placement, device)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
