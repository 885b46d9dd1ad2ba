"""`python -m bench stages`: a per-stage profile of `check` on every real model here (corpus/models,
corpus/ultralytics, ../shared/realworld), a guard against the next cliff.

Each model is checked in this process (imports and op tables warm, as after the first model of a `check` run), its
stages timed one by one in CPU time (this process's: other work on a shared machine weighs on it far less than on
wall time), best of three: reading the protobuf, inference, the refiner's findings, the judgement of
declared dims (GL315), the input-size conditions (GL320/GL321), the fold plan, and the report (deployment rules and
diagnostics). A stage's cost per entry (a node, an initializer or a `value_info` entry: files that declare every
value, as onnxslim's do, five times over, hold more to read per node) is compared with the median model's cost per
entry for that stage: a stage that takes more than 3x its share of the median model, and at least `FLOOR_S` (tiny
models' fixed costs are not cliffs), is OVER, and `python -m bench` exits with status 1. The nudenet YOLOv8n's
declaration stage took 97% of its check (4.9 s on 323 nodes) before it was judged symbolically, and PP-OCRv4 rec's
condition stage 0.11 s (a grid of sizes substituted into expressions) before its witness was evaluated as integers:
such stages are what this catches.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
STAGES = ("read", "infer", "refiner", "declared", "conditions", "fold", "report")
LIMIT = 3.0  # times the median model's cost per entry
FLOOR_S = 0.05  # a stage under this is never OVER
RUNS = 3


def models() -> list[Path]:
    return (sorted((SHARED / "realworld").glob("*.onnx")) + sorted((ROOT / "corpus" / "models").glob("*.onnx"))
            + sorted((ROOT / "corpus" / "ultralytics").glob("*.onnx")))  # fmt: skip


def _clear_caches() -> None:
    from graphlsp.infer import contracts, declared

    declared.judge.cache_clear()
    contracts.witness.cache_clear()
    contracts._solved.cache_clear()


def profile(path: Path) -> dict[str, Any]:
    """Each stage's best time over RUNS runs, and the model's node count (subgraphs' nodes included)."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model
    from graphlsp.infer.contracts import condition_findings, declaration_findings
    from graphlsp.lint.config import Settings
    from graphlsp.lint.diagnostics import collect_binary

    best = dict.fromkeys(STAGES, float("inf"))
    nodes = 0
    for _ in range(RUNS):
        _clear_caches()
        times: dict[str, float] = {}
        t0 = time.process_time()
        model, found = read_model(str(path))
        t1 = time.process_time()
        analysis = ModelAnalysis(model, found)
        t2 = time.process_time()
        analysis.refiner.findings()
        t3 = time.process_time()
        declaration_findings(analysis.refiner)
        t4 = time.process_time()
        _clear_caches()
        t5 = time.process_time()
        condition_findings(analysis.refiner)  # the declarations again (caches cleared), then the conditions
        t6 = time.process_time()
        analysis.fold_plan().findings()
        t7 = time.process_time()
        collect_binary(analysis, str(path), Settings())
        t8 = time.process_time()
        times = {"read": t1 - t0, "infer": t2 - t1, "refiner": t3 - t2, "declared": t4 - t3,
                 "conditions": max(0.0, (t6 - t5) - (t4 - t3)), "fold": t7 - t6, "report": t8 - t7}  # fmt: skip
        best = {k: min(best[k], times[k]) for k in STAGES}
        if model.graph is not None:
            nodes = sum(1 for _ in model.graph.all_nodes())
    return {"model": path.name, "nodes": nodes, "entries": nodes + _declarations(path), "stages": best}


def _declarations(path: Path) -> int:
    """The value_info entries and initializers of the model's main graph as the file holds them, duplicates too
    (onnxslim writes 2,064 value_info entries for yolo11n's 430 values): the reader decodes each."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    return len(graph.value_info) + len(graph.initializer)


def judge(rows: list[dict[str, Any]]) -> list[tuple[str, str, float, float]]:
    """(model, stage, seconds, the seconds its share of the median model would be) of every stage OVER."""
    over = []
    for stage in STAGES:
        per_entry = [r["stages"][stage] / max(1, r["entries"]) for r in rows]
        median = statistics.median(per_entry) if per_entry else 0.0
        for r in rows:
            share = median * max(1, r["entries"])
            t = r["stages"][stage]
            if t > LIMIT * share and t > FLOOR_S:
                over.append((r["model"], stage, t, share))
    return over


def run(paths: list[Path] | None = None) -> dict[str, Any]:
    rows = [profile(p) for p in (models() if paths is None else paths)]
    over = judge(rows)
    return {"rows": rows, "over": over, "failed": bool(over)}


def report(r: dict[str, Any]) -> list[str]:
    out = [f"{'model':44} {'nodes':>6} {'entries':>7} " + " ".join(f"{s:>10}" for s in STAGES)]
    for row in r["rows"]:
        out.append(f"{row['model'][:44]:44} {row['nodes']:6d} {row['entries']:7d} "
                   + " ".join(f"{row['stages'][s] * 1000:8.1f}ms" for s in STAGES))  # fmt: skip
    for model, stage, t, share in r["over"]:
        out.append(f"OVER: {model} {stage} took {t:.3f} s, {t / share if share else float('inf'):.1f}x its share of "
                   f"the median model ({share:.3f} s; the limit is {LIMIT:g}x)")  # fmt: skip
    out.append(f"stages over {len(r['rows'])} models: "
               + (f"every stage within {LIMIT:g}x of the median model's per entry"
                  if not r["over"] else f"{len(r['over'])} OVER"))  # fmt: skip
    return out
