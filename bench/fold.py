"""Fold benchmark on gpt_L24 (dynamic batch and seq): `graphlsp fold` next to onnxruntime's basic graph optimizer
(the nodes left that are not Constants, and the time), and our kernels next to onnx.reference's on the tiny
tensors of shape plumbing (why we keep our own for those ops).

Acceptance (issue: CPU runner): no more non-Constant nodes after the fold than after onnxruntime's basic level.
onnxruntime is the oracle here only; graphlsp never imports it.
"""

from __future__ import annotations

import gc
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.models import load
from graphlsp.lint.fold import fold_text, non_constant_nodes


def _ort(text: str, level: str) -> tuple[float, int | None]:
    """Seconds to build an onnxruntime session at a graph optimization level, and the nodes it leaves."""
    import onnx
    import onnx.parser
    import onnxruntime as ort

    model = onnx.parser.parse_model(text).SerializeToString()
    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        so.log_severity_level = 4
        out = str(Path(tmp) / "optimized.onnx")
        so.optimized_model_filepath = out
        t0 = time.perf_counter()
        ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        seconds = time.perf_counter() - t0
        left = onnx.load(out)
    return seconds, sum(1 for n in left.graph.node if n.op_type != "Constant")


def _kernels(repeat: int = 2000) -> list[tuple[str, float, float]]:
    """(op, our kernel us/call, onnx.reference us/call) on the tensors exporters' shape plumbing carries."""
    from onnx import helper

    from graphlsp.runner import kernels
    from graphlsp.runner.reference import run_node

    shape = np.array([2, 7, 16], dtype=np.int64)
    i0, i1 = np.array(0, dtype=np.int64), np.array([0], dtype=np.int64)
    cases: list[tuple[str, list[Any], dict[str, Any]]] = [
        ("Shape", [np.zeros((2, 7, 16), np.float32)], {}),
        ("Gather", [shape, i0], {"axis": 0}),
        ("Unsqueeze", [i0, i1], {}),
        ("Concat", [i1, i1, np.array([2], np.int64), np.array([8], np.int64)], {"axis": 0}),
        ("Cast", [np.array(8, np.int64)], {"to": 1}),
        ("Div", [np.array(16, np.int64), np.array(2, np.int64)], {}),
        ("Mul", [np.array(3, np.int64), np.array(8, np.int64)], {}),
        ("Reshape", [np.arange(6, dtype=np.int64), np.array([2, 3], np.int64)], {}),
        ("Equal", [shape, shape], {}),
    ]
    rows = []
    for op, args, attrs in cases:
        fn = kernels.KERNELS[op]
        full = dict(attrs)
        if op == "Reshape":
            full["allowzero"] = 0
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn(args, full, 17)
        ours = (time.perf_counter() - t0) / repeat * 1e6
        names = [f"x{i}" for i in range(len(args))]
        node = helper.make_node(op, names, ["y"], **attrs)
        t0 = time.perf_counter()
        for _ in range(repeat // 4):
            run_node(node, args, 17, {"": 17})
        theirs = (time.perf_counter() - t0) / (repeat // 4) * 1e6
        rows.append((op, ours, theirs))
    return rows


def run(runs: int = 3) -> dict[str, Any]:
    text, source = load("gpt_L24")
    before = non_constant_nodes(text)
    times, plan_times = [], []
    folded = ""
    for _ in range(runs):
        gc.collect()
        r = fold_text(text)
        times.append(r.seconds)
        folded = r.text
    from graphlsp.analysis import Analysis
    from graphlsp.lint.fold import fold_edits

    for _ in range(runs):
        a = Analysis(text)
        t0 = time.perf_counter()
        fold_edits(a)
        plan_times.append(time.perf_counter() - t0)
    ort_basic = [_ort(text, "ORT_ENABLE_BASIC") for _ in range(runs)]
    ort_none = [_ort(text, "ORT_DISABLE_ALL") for _ in range(runs)]
    return {
        "source": source,
        "nodes": before,
        "after_fold": non_constant_nodes(folded),
        "after_ort_basic": ort_basic[0][1],
        "fold_s": min(times),
        "plan_rewrite_s": min(plan_times),
        "ort_basic_s": min(t for t, _ in ort_basic),
        "ort_none_s": min(t for t, _ in ort_none),
        "kernels": _kernels(),
    }


def report(r: dict[str, Any]) -> list[str]:
    ok = "ok" if r["after_fold"] <= r["after_ort_basic"] else "MORE THAN ONNXRUNTIME"
    lines = [
        f"model: {r['source']} ({r['nodes']} nodes that are not Constants)",
        f"left after folding: graphlsp fold {r['after_fold']} | onnxruntime basic optimizer {r['after_ort_basic']} "
        f"| {ok}",
        f"time: graphlsp fold {r['fold_s']:.2f} s (text in, text out; plan + rewrite {r['plan_rewrite_s']:.2f} s) "
        f"| onnxruntime session at basic level {r['ort_basic_s']:.2f} s (its optimizer is not timed apart: "
        f"with optimizations off the session takes {r['ort_none_s']:.2f} s)",
        "kernels on shape-plumbing tensors, us/call: " + ", ".join(
            f"{op} {ours:.1f} vs onnx.reference {theirs:.0f}" for op, ours, theirs in r["kernels"]
        ),
    ]  # fmt: skip
    return lines
