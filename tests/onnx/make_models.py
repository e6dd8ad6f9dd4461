#!/usr/bin/python3
"""Exports the ONNX models the ONNX tests read, with Debian's PyTorch and torchvision (no weights downloaded:
every model starts from its own initialisation, seeded). Writes into OUT_DIR:
  every-op.onnx     a small CNN of every operator dahlsim reads (32x32x3 images, 10 classes)
  resnet18.onnx     torchvision's ResNet-18 for 32x32x3 images and 10 classes
  unsupported.onnx  every-op with a Sigmoid, which dahlsim refuses
  expected.json     each model's input shape and PyTorch's count of trainable parameters
Models are exported in training mode (torch.onnx.TrainingMode.TRAINING), as dahlsim trains them: in
evaluation mode PyTorch folds batch normalisation into the convolutions before it.
usage: make_models.py OUT_DIR"""
import json
import os
import sys

import torch
import torchvision
from torch import nn


class EveryOp(nn.Module):
    """Conv (bias, 3x3 pad 1; 1x1 stride 2), BatchNormalization, Relu, MaxPool, Add of a skip connection,
    AveragePool, Dropout, GlobalAveragePool, Flatten, Gemm, Reshape, MatMul + Add."""

    def __init__(self, sigmoid=False):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool2 = nn.AvgPool2d(2, stride=2)
        self.conv3 = nn.Conv2d(8, 16, 1, stride=2)
        self.drop = nn.Dropout(0.25)
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
    expected = {
        "every-op": export(EveryOp(), (3, 32, 32), os.path.join(out, "every-op.onnx")),
        "resnet18": export(torchvision.models.resnet18(num_classes=10), (3, 32, 32),
                           os.path.join(out, "resnet18.onnx")),
        "unsupported": export(EveryOp(sigmoid=True), (3, 32, 32), os.path.join(out, "unsupported.onnx")),
    }
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
