"""Inference benchmark on gpt_L96: a full shape-inference pass per node next to onnx's C++ infer_shapes, and a
one-attribute edit in the middle of the file re-inferring only the changed cone.

Budgets (issue: shape engine): full pass <= 20 us per node; the edit <= 5 ms.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from bench.common import edit_line, edit_spread, verdict
from bench.models import load
from graphlsp.analysis import Analysis
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.lower import build_model

PASS_BUDGET_US = 20.0
EDIT_BUDGET_MS = 5.0


def run(runs: int = 3, edits: int = 40) -> dict[str, Any]:
    import onnx.parser
    import onnx.shape_inference

    text, source = load("gpt_L96")
    doc = SyntaxDocument(text)
    model, _ = build_model(doc)
    nodes = len(model.graph.nodes) if model.graph else 0
    ours = []
    for _ in range(runs):
        gc.collect()
        t0 = time.perf_counter()
        refiner = ShapeRefiner(model)
        refiner.run()
        ours.append(time.perf_counter() - t0)
    proto = onnx.parser.parse_model(text)
    theirs = []
    for _ in range(runs):
        t0 = time.perf_counter()
        onnx.shape_inference.infer_shapes(proto, strict_mode=False, data_prop=True)
        theirs.append(time.perf_counter() - t0)
    # one-attribute edits in the middle: a Constant's value, back and forth
    a = Analysis(text)
    edit_ms, inferred = [], []
    pos = a.doc.text.find("Constant <value: tensor = float {", len(text) // 2)
    for k in range(edits):
        start = a.doc.text.find("{", pos) + 1
        end = a.doc.text.find("}", start)
        t0 = time.perf_counter()
        report = a.apply_edit(start, end, "0.25" if k % 2 == 0 else "0.5")
        edit_ms.append((time.perf_counter() - t0) * 1000)
        inferred.append(report.inferred)
    return {
        "source": source,
        "nodes": nodes,
        "pass_s": min(ours),
        "pass_us_per_node": min(ours) / max(nodes, 1) * 1e6,
        "onnx_infer_s": min(theirs),
        "ratio": min(ours) / min(theirs),
        **edit_spread(edit_ms),
        "edit_inferred_max": max(inferred),
    }


def report(r: dict[str, Any]) -> list[str]:
    ok_pass = verdict(r["pass_us_per_node"] <= PASS_BUDGET_US)
    return [
        f"model: {r['source']} ({r['nodes']} nodes)",
        f"full inference pass: graphlsp {r['pass_s'] * 1000:.0f} ms = {r['pass_us_per_node']:.1f} us/node | "
        f"onnx infer_shapes (C++, data_prop) {r['onnx_infer_s'] * 1000:.0f} ms | ratio {r['ratio']:.1f}x | "
        f"budget {PASS_BUDGET_US:.0f} us/node: {ok_pass}",
        edit_line("one-attribute edit (a Constant's value, mid-file)", r, EDIT_BUDGET_MS,
                  f", at most {r['edit_inferred_max']} nodes re-inferred"),  # fmt: skip
    ]
