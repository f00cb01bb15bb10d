#!/usr/bin/env python3
"""Migrates graph JSON (graph files, and the graphs inside reproducers) from graph format
version 1 to 2 in place, editing only the changed bytes so that formatting and docs stay.

Version 2 broadcasts a PRelu slope from the right, as ONNX does (docs/graph-format.md,
"Versions"). A version-1 slope [C] (C > 1) applied per channel, so it becomes [C, 1, ..., 1]
(rank of its input minus one: [C, 1, 1] for NCHW; [C] stays on an [N, C] input); a FusedConv
epilogue slope [M] becomes [M, 1, 1]; [1] and Gemm epilogue slopes stay. fusefuzz's reader does
the same migration when it reads a version-1 file (ir/graph_migrate.cc); this script makes the
committed files version 2. Usage: corpus/migrate_graph_v2.py FILE...
"""
import json
import re
import sys

WS = " \t\r\n"


def parse(text, i):
    """Parses the JSON value at text[i:] (after whitespace); returns (value, end). Objects are
    dicts with the extra key "__span__" -> {key: (value_start, value_end)} of their members."""
    while text[i] in WS:
        i += 1
    c = text[i]
    if c == "{":
        obj, spans, i = {}, {}, i + 1
        while True:
            while text[i] in WS or text[i] == ",":
                i += 1
            if text[i] == "}":
                obj["__span__"] = spans
                return obj, i + 1
            key, i = parse(text, i)
            while text[i] in WS:
                i += 1
            assert text[i] == ":"
            start = i + 1
            while text[start] in WS:
                start += 1
            val, i = parse(text, start)
            obj[key], spans[key] = val, (start, i)
    if c == "[":
        arr, i = [], i + 1
        while True:
            while text[i] in WS or text[i] == ",":
                i += 1
            if text[i] == "]":
                return arr, i + 1
            val, i = parse(text, i)
            arr.append(val)
    dec = json.JSONDecoder()
    return dec.raw_decode(text, i)


def graphs(v):
    if isinstance(v, dict):
        if v.get("format") == "fusefuzz-graph":
            yield v
        for k, x in v.items():
            if k != "__span__":
                yield from graphs(x)
    elif isinstance(v, list):
        for x in v:
            yield from graphs(x)


def const_rank(node, side):
    p = node.get("params", {}).get(side)
    return len(p["shape"]) if p else 0


def out_rank(node, ranks):
    """Rank of a node's output from its input ranks (the vocabulary of docs/graph-format.md)."""
    op, ins = node["op"], [ranks.get(v) for v in node["inputs"]]
    if op in ("Flatten", "Gemm"):
        return 2
    if op == "Reshape":
        return len(node["attrs"]["shape"])
    if op in ("Add", "Sub", "Mul", "Div"):
        return max([r for r in ins if r] + [const_rank(node, "A"), const_rank(node, "B")])
    return ins[0]


def edits_for(graph):
    """(start, end, replacement) byte edits that make `graph` version 2."""
    spans = graph["__span__"]
    if graph["version"] != 1:
        return []
    out = [(spans["version"][0], spans["version"][1], "2")]
    ranks = {i["name"]: len(i["shape"]) for i in graph["inputs"]}
    pending = list(graph["nodes"])
    while pending:  # topological, as the reader
        for k, n in enumerate(pending):
            if all(v in ranks for v in n["inputs"]):
                break
        else:
            raise ValueError("cycle")
        n = pending.pop(k)
        rank = ranks[n["inputs"][0]]
        slopes = []
        if n["op"] == "PRelu":
            slopes.append((n["params"]["slope"], rank))
        if n["op"] == "FusedConv":
            for st in n.get("epilogue", []):
                if st.get("kind") == "activation" and st.get("op") == "PRelu":
                    slopes.append((st["params"]["slope"], 4))
        for t, r in slopes:
            shape = t["shape"]
            if len(shape) == 1 and shape[0] > 1 and r > 2:
                s, e = t["__span__"]["shape"]
                out.append((s, e, json.dumps(shape + [1] * (r - 2))))
        ranks[n["outputs"][0]] = out_rank(n, ranks)
    return out


def migrate(path):
    text = open(path, encoding="utf-8").read()
    doc, _ = parse(text, 0)
    edits = [e for g in graphs(doc) for e in edits_for(g)]
    for s, e, rep in sorted(edits, reverse=True):
        text = text[:s] + rep + text[e:]
    if edits:
        open(path, "w", encoding="utf-8").write(text)
    return len(edits)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print("%s: %d edit(s)" % (p, migrate(p)))
