"""`python -m bench binary`: `graphlsp check model.onnx` as a whole process, beside onnx's own load + check_model
+ infer_shapes as a whole process, on every real binary model here (corpus/models, corpus/ultralytics,
../shared/realworld) and on the LLM-sized models that `../shared/tools/make_big_model.py` writes (12.6 GiB of
sparse external weights, and 0.6 GB inline).

Each figure is the best of five runs (three for the LLM-sized models: wall time, and the peak resident memory of
that process), the two tools' runs interleaved (graphlsp, onnx, graphlsp, ...) so that a busy machine weighs on
both alike; the ratio is graphlsp's time over onnx's (with three runs, a 0.2 s process's best still moved by 10-25%
between runs on this shared machine, either way). Budgets (issue 25): at most 1.0x onnx on every model and on the
external-data LLM (within 300 MB: its weights never read); the inline one within 5 s and 1.5 GB.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MAKE_BIG = SHARED / "tools" / "make_big_model.py"

ONNX_JOB = """
import sys, onnx, onnx.checker, onnx.shape_inference
path = sys.argv[1]
model = onnx.load(path, load_external_data=False)
onnx.checker.check_model(path)
onnx.shape_inference.infer_shapes(model)
"""


# both sides run as an installed tool does: with their bytecode cached (some shells set this variable)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _timed(cmd: list[str]) -> tuple[float, int, int]:
    """(seconds, peak RSS in MB, exit status) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    return seconds, usage.ru_maxrss // 1024, os.waitstatus_to_exitcode(status)


def _best(cmd: list[str], runs: int = 3) -> tuple[float, int, int]:
    results = [_timed(cmd) for _ in range(runs)]
    return min(results, key=lambda r: r[0])


def _best_pair(a: list[str], b: list[str], runs: int = 3) -> tuple[tuple[float, int, int], tuple[float, int, int]]:
    """The best run of each of two commands, run in turn (a, b, a, b, ...)."""
    ra, rb = [], []
    for _ in range(runs):
        ra.append(_timed(a))
        rb.append(_timed(b))
    return min(ra, key=lambda r: r[0]), min(rb, key=lambda r: r[0])


def graphlsp_cmd(path: Path) -> list[str]:
    return [sys.executable, "-m", "graphlsp", "check", "--no-cache", "--quiet", str(path)]


def onnx_cmd(path: Path) -> list[str]:
    return [sys.executable, "-c", ONNX_JOB, str(path)]


def models() -> list[Path]:
    found = sorted((SHARED / "realworld").glob("*.onnx")) + sorted((ROOT / "corpus" / "models").glob("*.onnx"))
    return found + sorted((ROOT / "corpus" / "ultralytics").glob("*.onnx"))  # tools/make_ultralytics.py


def big_models(folder: Path) -> list[Path]:
    """The two LLM-sized models, written into `folder` (sparse: the 12.6 GiB data file takes no disk)."""
    if not MAKE_BIG.exists():
        return []
    subprocess.run([sys.executable, str(MAKE_BIG), str(folder)], check=True, capture_output=True)
    subprocess.run([sys.executable, str(MAKE_BIG), str(folder), "--inline", "--layers", "3", "--hidden", "2048",
                    "--ffn", "8192"], check=True, capture_output=True)  # fmt: skip
    return [folder / "big_llm.onnx", folder / "big_llm_inline.onnx"]


def run(runs: int = 5, big_runs: int = 3) -> dict[str, Any]:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "graphlsp")], env=ENV, capture_output=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="gl-bench-big-") as tmp:
        for path, n in [*((p, runs) for p in models()), *((p, big_runs) for p in big_models(Path(tmp)))]:
            ours, theirs = _best_pair(graphlsp_cmd(path), onnx_cmd(path), n)
            rows.append({
                "model": path.name, "bytes": path.stat().st_size, "graphlsp_s": ours[0], "graphlsp_mb": ours[1],
                "graphlsp_exit": ours[2], "onnx_s": theirs[0], "onnx_mb": theirs[1], "onnx_exit": theirs[2],
                "ratio": ours[0] / theirs[0] if theirs[0] else None,
            })  # fmt: skip
    return {"rows": rows}


def report(r: dict[str, Any]) -> list[str]:
    out = [f"{'model':44} {'size':>9} {'graphlsp':>9} {'MB':>6} {'onnx':>8} {'MB':>6} {'ratio':>6}  budget"]
    for row in r["rows"]:
        name = row["model"]
        if name == "big_llm.onnx":
            budget = row["ratio"] <= 1 and row["graphlsp_mb"] <= 300
            what = "1x, 300 MB"
        elif name == "big_llm_inline.onnx":
            budget = row["graphlsp_s"] <= 5 and row["graphlsp_mb"] <= 1536
            what = "5 s, 1.5 GB"
        else:
            budget = row["ratio"] <= 1
            what = "1x"
        flag = "ok" if budget and row["graphlsp_exit"] <= 1 else "OVER" if row["graphlsp_exit"] <= 1 else "EXIT 2"
        onnx_note = "" if row["onnx_exit"] == 0 else " (onnx failed)"
        out.append(
            f"{name[:44]:44} {row['bytes'] / 1e6:8.1f}M {row['graphlsp_s']:8.2f}s {row['graphlsp_mb']:6d} "
            f"{row['onnx_s']:7.2f}s {row['onnx_mb']:6d} {row['ratio']:6.2f}  {what} {flag}{onnx_note}"
        )
    ratios = sorted(row["ratio"] for row in r["rows"] if row["ratio"] is not None)
    if ratios:
        at_most = sum(x <= 1 for x in ratios)
        out.append(f"graphlsp/onnx over {len(ratios)} models: median {ratios[len(ratios) // 2]:.2f}x, "
                   f"best {ratios[0]:.2f}x, worst {ratios[-1]:.2f}x; {at_most} at most 1.0x")  # fmt: skip
    return out
