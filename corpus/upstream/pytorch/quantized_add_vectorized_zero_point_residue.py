# PyTorch 1.13.1 (Debian python3-torch), onednn engine: quantized::add gives a different answer
# for the same element depending on the tensor's length. An input at its zero point is the real
# value 0, so 0 + 0 must quantize to the output zero point. The scalar loop (tensors under 64
# elements, and each tensor's tail) computes (q - z) * s and gives it; the vectorized body (64
# elements at a time) dequantizes as q * s + (-z * s), whose float32 residue (about
# ulp(z * s)) is then divided by the output scale: with z * s / s_out above 2^23 that is a whole
# step or more. Here s = 310.22525, z = 254, s_out = 2^-7 (z * s / s_out = 1.0e7): the 64
# vectorized elements come out 1, the rest 0. (The two formulas are inferred from the answers,
# not read in the source.) Found by `fuzz --quant --target pytorch:ptq_fx`
# (DQ -> DQ -> Add -> Q of one tensor, ptq_fx turns it into quantized::add). A precision defect
# at extreme scale ratios, not a fusion rule's; exit 1 while it is there.
import torch

torch.backends.quantized.engine = "onednn"
S, Z, S_OUT = 310.22525, 254, 2.0 ** -7
answers = {}
for n in (4, 64, 70):
    a = torch._make_per_tensor_quantized_tensor(torch.full((n,), Z, dtype=torch.uint8), S, Z)
    y = torch.ops.quantized.add(a, a, S_OUT, 0).int_repr()
    wrong = torch.nonzero(y).flatten().tolist()
    answers[n] = wrong
    print("%3d elements at the zero point: %2d come out nonzero (expected 0)%s"
          % (n, len(wrong), "" if not wrong else ", first value %d" % int(y[wrong[0]])))
bug = any(answers.values())
if bug:
    print("quantized::add of zero-point inputs depends on the tensor length")
raise SystemExit(1 if bug else 0)
