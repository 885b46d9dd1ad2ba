"""`python -m bench cost`: `graphlsp cost MODEL` as a whole process beside `graphlsp check MODEL` (run in turn, best
of five each), on gpt_L96 (9,520 nodes) and the 12.6 GiB LLM of `../shared/tools/make_big_model.py`.

Budget (issue 36): `cost` within 1.0x `check` on gpt_L96: the cost walk, the liveness sweep and the report together
cost less than the lint stages after inference. The 12.6 GiB LLM (1,128 nodes, 0.2 s of CPU a run) is shown without
a budget: there both are start-up and reading, and the ~25 ms of the cost's own work is 1.1x (best CPU time of six
runs each, 2026-11-28: check 0.19 s, cost 0.21 s).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.binary import _best_pair
from bench.graph import models

RATIO_BUDGET = 1.0


def run(runs: int = 5) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="gl-bench-cost-") as tmp:
        for model in models(Path(tmp)):
            cost, check = _best_pair([sys.executable, "-m", "graphlsp", "cost", str(model)],
                                     [sys.executable, "-m", "graphlsp", "check", "--no-cache", "--quiet", str(model)],
                                     runs)  # fmt: skip
            rows.append({"model": model.name, "cost_s": cost[0], "cost_mb": cost[1], "cost_exit": cost[2],
                         "check_s": check[0], "ratio": cost[0] / check[0]})  # fmt: skip
    return {"rows": rows}


def report(r: dict[str, Any]) -> list[str]:
    out = [f"{'model':20} {'cost':>7} {'check':>7} {'ratio':>6} {'cost MB':>8}  budget"]
    for row in r["rows"]:
        budgeted = row["model"].startswith("gpt_L96")
        ok = (row["ratio"] <= RATIO_BUDGET or not budgeted) and row["cost_exit"] == 0
        budget = f"{RATIO_BUDGET:.1f}x check" if budgeted else "(no budget)"
        out.append(f"{row['model'][:20]:20} {row['cost_s']:6.2f}s {row['check_s']:6.2f}s {row['ratio']:6.2f} "
                   f"{row['cost_mb']:8.0f}  {budget} {'ok' if ok else 'OVER'}")  # fmt: skip
    return out
