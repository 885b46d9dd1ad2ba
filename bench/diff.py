"""`python -m bench diff`: `graphlsp diff` of two gpt_L96-sized models (gpt_L96 and a copy with one Softmax's axis
changed and every node of one block renamed) as a whole process, beside `graphlsp check` of both in one process
(one job: the diff reads its two models in one process too). Best of three each, run in turn.

Budget (issue 37): the diff within 2x the check of both.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.binary import SHARED, _best_pair

RATIO_BUDGET = 2.0


def edited(source: Path, folder: Path) -> Path:
    text = source.read_text(encoding="utf-8")
    old = '["/b.46/a/Softmax"] "/b.46/a/Softmax_output_0" = Softmax <axis: int = -1>'
    assert old in text, "gpt_L96 changed: pick another node to edit"
    text = text.replace(old, old.replace("-1", "3")).replace('["/b.47/', '["/block47/')
    out = folder / "gpt_L96_edited.onnxtxt"
    out.write_text(text, encoding="utf-8")
    return out


def run(runs: int = 3) -> dict[str, Any]:
    rows = []
    source = SHARED / "bench" / "gpt_L96.onnxtxt"
    if not source.exists():
        return {"rows": rows}
    with tempfile.TemporaryDirectory(prefix="gl-bench-diff-") as tmp:
        other = edited(source, Path(tmp))
        diff, check = _best_pair(
            [sys.executable, "-m", "graphlsp", "diff", str(source), str(other)],
            [sys.executable, "-m", "graphlsp", "check", "--no-cache", "--quiet", "-j", "1", str(source), str(other)],
            runs,
        )
        rows.append({"model": source.name, "diff_s": diff[0], "diff_mb": diff[1], "diff_exit": diff[2],
                     "check_s": check[0], "ratio": diff[0] / check[0]})  # fmt: skip
    return {"rows": rows}


def report(r: dict[str, Any]) -> list[str]:
    out = [f"{'models':20} {'diff':>7} {'check both':>10} {'ratio':>6}  budget"]
    for row in r["rows"]:
        ok = row["ratio"] <= RATIO_BUDGET and row["diff_exit"] == 1  # they differ: exit 1
        out.append(f"{row['model'][:20]:20} {row['diff_s']:6.2f}s {row['check_s']:9.2f}s {row['ratio']:6.2f}  "
                   f"{RATIO_BUDGET:.0f}x check of both {'ok' if ok else 'OVER'}")  # fmt: skip
    if not r["rows"]:
        out.append("../shared/bench/gpt_L96.onnxtxt is not here: nothing measured")
    return out
