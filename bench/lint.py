"""Linter benchmark: `graphlsp check` on 200 files (copies of the examples plus gpt_L24), cold and then warm from
the result cache, through the real command line (process pool included)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.models import load

ROOT = Path(__file__).resolve().parents[1]


def run(files: int = 200) -> dict[str, Any]:
    examples = sorted((ROOT / "examples").glob("*.onnxtxt"))
    gpt, source = load("gpt_L24")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "graphlsp.toml").write_text("")  # the cache lives next to it
        (folder / "gpt_L24.onnxtxt").write_text(gpt)
        for i in range(files - 1):
            src = examples[i % len(examples)]
            # distinct contents, so the cold run cannot share results between copies
            (folder / f"m{i:03d}_{src.name}").write_text(src.read_text() + f"\n# copy {i}\n")
        cmd = [sys.executable, "-m", "graphlsp.cli", "check", "-q", "--format", "concise", str(folder)]
        t0 = time.perf_counter()
        cold = subprocess.run(cmd, capture_output=True, text=True)
        cold_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        warm = subprocess.run(cmd, capture_output=True, text=True)
        warm_s = time.perf_counter() - t0
        same = cold.stdout == warm.stdout
        shutil.rmtree(folder / ".graphlsp_cache", ignore_errors=True)
    return {"files": files, "source": source, "cold_s": cold_s, "warm_s": warm_s, "same_output": same,
            "diagnostics": cold.stdout.count("\n")}  # fmt: skip


def report(r: dict[str, Any]) -> list[str]:
    return [
        f"check {r['files']} files (examples + gpt_L24 from {r['source']}): cold {r['cold_s']:.2f} s, "
        f"warm (cache) {r['warm_s']:.2f} s; {r['diagnostics']} diagnostics, warm output identical: {r['same_output']}",
    ]
