#!/usr/bin/env python3
"""Writes fuzz/known/<engine>_<mode>_fuzzer.known, the in-process fuzzers' known-signature
lists, from the known upstream baselines corpus/known/<engine>@<release>.json: one source for
both. --check: exit 1 naming each list that differs from what it would write (ctest
known/fuzz-lists)."""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The in-process fuzzers (fuzz/CMakeLists.txt) and the target each one runs.
FUZZERS = {
    "xnnpack_fp32_fuzzer": "xnnpack:fp32",
    "xnnpack_int8_fuzzer": "xnnpack:int8",
    "armnn_fp32_fuzzer": "armnn:fp32",
    "armnn_int8_fuzzer": "armnn:int8",
    "opencv_fp32_fuzzer": "opencv:fp32",
    "opencv_int8_fuzzer": "opencv:int8",
}


def lists():
    baselines = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(ROOT, "corpus/known/*.json")))]
    out = {}
    for fuzzer, target in FUZZERS.items():
        engine = target.split(":")[0]
        lines = [
            f"# Known upstream bugs of {fuzzer} (target {target}): one signature per line, the",
            "# format of `fusefuzz fuzz --known`. Findings with these signatures are counted and passed over",
            "# (fuzz/engine_fuzzer.h); FUSEFUZZ_KNOWN=none turns the list off.",
            "# Written by corpus/known/fuzz_lists.py from corpus/known/*.json: edit those, then run it.",
        ]
        n = 0
        for b in baselines:
            if b["engine"] != engine:
                continue
            lines.append(f"# {b['engine']}@{b['release']}")
            for bug in b["bugs"]:
                sigs = [s["signature"] for s in bug["signatures"] if s["target"] == target]
                if not sigs:
                    continue
                lines.append(f"# {bug['title']} ({bug['doc']})")
                lines.extend(sigs)
                n += len(sigs)
        if n == 0:
            lines.append("# None known for this target (docs/upstream-bugs.md).")
        out[os.path.join(ROOT, "fuzz/known", fuzzer + ".known")] = "\n".join(lines) + "\n"
    return out


def main():
    check = sys.argv[1:] == ["--check"]
    stale = []
    for path, text in lists().items():
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale.append(os.path.relpath(path, ROOT))
        else:
            open(path, "w").write(text)
    if stale:
        print("fuzz_lists.py: out of date (run corpus/known/fuzz_lists.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
