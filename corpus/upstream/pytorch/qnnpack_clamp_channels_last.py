# PyTorch 1.13.1 (Debian python3-torch), QNNPACK engine: the quantized clamp kernel (ReLU6,
# hardtanh, clamp on a quint8 tensor) returns a channels_last input's elements in memory order
# but labelled as a contiguous (NCHW) tensor: every element lands at another position. Quantized
# convolutions answer channels_last tensors, so Conv -> ReLU6 after prepare_fx/convert_fx on
# qnnpack scrambles the conv's output. ReLU, and onednn's clamp, are correct.
# Exit 1 while the bug is there.
import torch

torch.backends.quantized.engine = "qnnpack"
x = torch.arange(12, dtype=torch.float).reshape(1, 2, 3, 2) * 0.5
q = torch.quantize_per_tensor(x, 0.1, 0, torch.quint8)
q = q.contiguous(memory_format=torch.channels_last)
expected = q.int_repr()  # every value is inside [0, 6]: the clamp changes nothing
ok = True
for name, f in [("ReLU6", torch.nn.ReLU6()),
                ("hardtanh", lambda t: torch.nn.functional.hardtanh(t, 0.0, 6.0)),
                ("clamp", lambda t: torch.clamp(t, 0.0, 6.0))]:
    got = f(q).int_repr()
    same = torch.equal(got, expected)
    ok = ok and same
    print("%-8s %s: %s" % (name, "correct" if same else "WRONG", got.flatten().tolist()))
print("expected          %s" % expected.flatten().tolist())
raise SystemExit(0 if ok else 1)
