#!/usr/bin/python3
"""Exports a torchvision classifier to ONNX for the real-model import test.

Usage: make_model.py MODEL OUT_DIR [--size S] [--keep-bn]

MODEL is resnet18 or mobilenet_v2. Writes OUT_DIR/model.onnx (opset 17, random weights, every
BatchNorm's running statistics set away from the identity, eval mode), OUT_DIR/input.json (a
fusefuzz tensors file with one random input "input") and OUT_DIR/expected.json (PyTorch's
output "output" for it, float32). Nothing here is committed: the test generates it each run.
"""
import argparse
import base64
import json
import os
import sys

import torch
import torchvision


def tensor_json(t):
    data = t.detach().contiguous().to(torch.float32).numpy().astype("<f4").tobytes()
    return {"shape": list(t.shape), "b64": base64.b64encode(data).decode("ascii")}


def build(name):
    makers = {
        "resnet18": torchvision.models.resnet18,
        "mobilenet_v2": torchvision.models.mobilenet_v2,
    }
    if name not in makers:
        sys.exit(f"make_model.py: unknown model '{name}' (expected {', '.join(makers)})")
    model = makers[name](weights=None)
    gen = torch.Generator().manual_seed(0)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            # Non-identity statistics and affine params, so that a BN fold is really tested.
            c = m.num_features
            m.running_mean.copy_(torch.rand(c, generator=gen) * 0.4 - 0.2)
            m.running_var.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(c, generator=gen) * 0.2 - 0.1)
    return model.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out_dir")
    ap.add_argument("--size", type=int, default=64, help="input height and width")
    ap.add_argument("--keep-bn", action="store_true",
                    help="keep BatchNormalization nodes (the exporter folds them into the convs "
                         "by default): the model an optimizer's Conv+BN fusions see")
    args = ap.parse_args()
    torch.manual_seed(0)
    model = build(args.model)
    x = torch.rand(1, 3, args.size, args.size, generator=torch.Generator().manual_seed(1))
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, "model.onnx")
    if args.keep_bn:
        # PRESERVE on an eval-mode model: inference BatchNormalization, not folded.
        torch.onnx.export(model, x, path, opset_version=17, input_names=["input"],
                          output_names=["output"], do_constant_folding=False,
                          training=torch.onnx.TrainingMode.PRESERVE)
    else:
        torch.onnx.export(model, x, path, opset_version=17, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
    with torch.no_grad():
        y = model(x)
    with open(os.path.join(args.out_dir, "input.json"), "w") as f:
        json.dump({"input": tensor_json(x)}, f)
    with open(os.path.join(args.out_dir, "expected.json"), "w") as f:
        json.dump({"output": tensor_json(y)}, f)


if __name__ == "__main__":
    main()
