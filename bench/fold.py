"""Fold benchmark on gpt_L24 (dynamic batch and seq): `graphlsp fold` next to onnxruntime's basic graph optimizer
(the nodes left that are not Constants, and the time), and our kernels next to onnx.reference's on the tiny
tensors of shape plumbing (why we keep our own for those ops).

Acceptance (issue: CPU runner): no more non-Constant nodes after the fold than after onnxruntime's basic level.
Issue 33: `graphlsp fold FILE -o OUT` as a whole process within onnxruntime's (a process that parses the same text
with onnx and saves the model its basic optimizer makes), the median of five runs each, interleaved; the folded
model's outputs equal the original's in onnxruntime. onnxruntime is the oracle here only; graphlsp never imports it.
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
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


ORT_JOB = """
import sys, onnx.parser, onnxruntime as ort
model = onnx.parser.parse_model(open(sys.argv[1], encoding="utf-8").read()).SerializeToString()
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
so.log_severity_level = 4
so.optimized_model_filepath = sys.argv[2]
ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
"""


def _process_seconds(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _whole_process(path: str, runs: int = 5) -> tuple[float, float, str]:
    """Median seconds of `graphlsp fold` and of onnxruntime's basic optimizer as whole processes, run in turn,
    and the folded text."""
    ours, theirs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "folded.onnxtxt")
        for _ in range(runs):
            ours.append(_process_seconds([sys.executable, "-m", "graphlsp", "fold", path, "-o", out]))
            theirs.append(_process_seconds([sys.executable, "-c", ORT_JOB, path, str(Path(tmp) / "ort.onnx")]))
        folded = Path(out).read_text(encoding="utf-8")
    return statistics.median(ours), statistics.median(theirs), folded


def _outputs_equal(text: str, folded: str) -> bool:
    """Whether onnxruntime gives the same outputs for the model and its fold (batch 2, 7 tokens; no optimizer)."""
    import onnx.parser
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    runs: list[Any] = []
    feeds: dict[str, Any] = {}
    for t in (text, folded):
        model = onnx.parser.parse_model(t).SerializeToString()
        session = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        for i in session.get_inputs():  # the weights are inputs too: random, the same for both models
            if i.name not in feeds:
                shape = [d if isinstance(d, int) else {"batch": 2, "seq": 7}[d] for d in i.shape]
                feeds[i.name] = (rng.integers(0, 50, size=shape) if i.type == "tensor(int64)"
                                 else rng.standard_normal(shape).astype(np.float32))  # fmt: skip
        runs.append(session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()}))
    return all(np.array_equal(a, b) for a, b in zip(*runs, strict=True))


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
    whole_ours, whole_ort, whole_folded = _whole_process(source) if Path(source).exists() else (0.0, 0.0, folded)
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
        "process_fold_s": whole_ours,
        "process_ort_basic_s": whole_ort,
        "outputs_equal": _outputs_equal(text, whole_folded),
        "process_same_text": whole_folded == folded,
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
        f"whole process, median of 5: graphlsp fold {r['process_fold_s']:.2f} s | onnxruntime basic optimizer "
        f"{r['process_ort_basic_s']:.2f} s | ratio {r['process_fold_s'] / max(r['process_ort_basic_s'], 1e-9):.2f} "
        f"(budget 1.0: {'ok' if r['process_fold_s'] <= r['process_ort_basic_s'] else 'OVER'}); outputs "
        f"{'equal' if r['outputs_equal'] else 'DIFFER'} in onnxruntime"
        f"{'' if r['process_same_text'] else '; the process wrote another text than fold_text'}",
        "kernels on shape-plumbing tensors, us/call: " + ", ".join(
            f"{op} {ours:.1f} vs onnx.reference {theirs:.0f}" for op, ours, theirs in r["kernels"]
        ),
    ]  # fmt: skip
    return lines
