#!/usr/bin/python3
"""Exports the ONNX models the ONNX tests read, with Debian's PyTorch and torchvision (no weights downloaded:
every model starts from its own initialisation, seeded). Writes into OUT_DIR:
  every-op.onnx     a small CNN of every operator dahlsim reads (32x32x3 images, 10 classes)
  resnet18.onnx     torchvision's ResNet-18 for 32x32x3 images and 10 classes
  unsupported.onnx  every-op with a Sigmoid, which dahlsim refuses
  no-dropout.onnx   every-op without its dropout (a loss to compare needs no random mask)
  cifar/            a CIFAR-10 directory of random images (data_batch_1..5.bin, test_batch.bin; 8 each)
  expected.json     each model's input shape, PyTorch's count of trainable parameters and, for no-dropout and
                    resnet18, PyTorch's training-mode loss on cifar/'s first 8 images (the first step of
                    `dahlsim train --dataset cifar10:cifar --samples 8 --batch 8 --onnx-weights`)
Models are exported in training mode (torch.onnx.TrainingMode.TRAINING), as dahlsim trains them: in
evaluation mode PyTorch folds batch normalisation into the convolutions before it.
usage: make_models.py OUT_DIR"""
import json
import os
import sys

import numpy as np
import torch
import torchvision
from torch import nn


class EveryOp(nn.Module):
    """Conv (bias, 3x3 pad 1; 1x1 stride 2), BatchNormalization, Relu, MaxPool, Add of a skip connection,
    AveragePool, Dropout, GlobalAveragePool, Flatten, Gemm, Reshape, MatMul + Add."""

    def __init__(self, sigmoid=False, dropout=0.25):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool2 = nn.AvgPool2d(2, stride=2)
        self.conv3 = nn.Conv2d(8, 16, 1, stride=2)
        self.drop = nn.Dropout(dropout)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc1 = nn.Linear(16, 32)
        self.w2 = nn.Parameter(torch.randn(32, 10) * 0.1)
        self.b2 = nn.Parameter(torch.zeros(10))
        self.sigmoid = sigmoid

    def forward(self, x):
        x = self.pool1(torch.relu(self.bn1(self.conv1(x))))
        y = self.bn2(self.conv2(x))
        x = torch.relu(x + y)
        x = self.conv3(self.pool2(x))
        x = torch.sigmoid(x) if self.sigmoid else torch.relu(x)
        x = torch.flatten(self.gap(self.drop(x)), 1)
        x = torch.relu(self.fc1(x))
        x = x.reshape(x.shape[0], -1)
        return torch.matmul(x, self.w2) + self.b2


def write_cifar(out, rng):
    """CIFAR-10's binary format: per image a label byte, then the R, G and B planes of 32x32 bytes."""
    os.makedirs(out, exist_ok=True)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    first = None
    for name in names:
        labels = rng.integers(0, 10, size=8, dtype=np.uint8)
        pixels = rng.integers(0, 256, size=(8, 3 * 32 * 32), dtype=np.uint8)
        with open(os.path.join(out, name), "wb") as f:
            for label, image in zip(labels, pixels):
                f.write(bytes([label]) + image.tobytes())
        if first is None:
            first = (torch.from_numpy(pixels.astype(np.float32) / 255).reshape(8, 3, 32, 32),
                     torch.from_numpy(labels.astype(np.int64)))
    return first


def training_loss(model, batch):
    """The mean cross-entropy of a training-mode forward pass (batch statistics), as dahl's first step."""
    model.train()
    with torch.no_grad():
        return float(nn.functional.cross_entropy(model(batch[0]), batch[1]))


def export(model, shape, path):
    model.train()
    torch.onnx.export(model, torch.randn(2, *shape), path, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["images"], output_names=["logits"],
                      dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}})
    return {"input": list(shape), "params": sum(p.numel() for p in model.parameters() if p.requires_grad)}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1)
    batch = write_cifar(os.path.join(out, "cifar"), np.random.default_rng(1))
    expected = {
        "every-op": export(EveryOp(), (3, 32, 32), os.path.join(out, "every-op.onnx")),
        "unsupported": export(EveryOp(sigmoid=True), (3, 32, 32), os.path.join(out, "unsupported.onnx")),
    }
    # the loss before the export's own forward pass moves nothing the loss reads (running statistics only)
    for name, model in (("no-dropout", EveryOp(dropout=0.0)),
                        ("resnet18", torchvision.models.resnet18(num_classes=10))):
        loss = training_loss(model, batch)
        expected[name] = export(model, (3, 32, 32), os.path.join(out, name + ".onnx"))
        expected[name]["loss"] = loss
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
