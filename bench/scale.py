"""`python -m bench scale`: how cost grows with size, each command as a whole process beside onnx's parser on the
same text (also a whole process).

Texts, written to a temporary folder:

- chain: 100,000 nodes `x1 = Relu (x0)` ... (2.5 MB): `graphlsp check` within 3 s;
- line: a 10 MB model on one line, a Constant of 1.2 million floats: `check` and `shapes` within 3 s and 500 MB;
- literal: one 10 MB float literal (an initializer) that folds nothing: `fold` within 3 s and 500 MB (the literal
  is read once: one string in the syntax tree, its numbers converted at once when checked; a second run of the
  same command counts the conversions of a `{...}` list to numbers, which must be 1).
- the literal with one syntax error, in the node after it or a stray character inside it: `check` within 3 s and
  500 MB (recovery costs about what the clean parse does).

Each figure is the best of `runs` runs (wall time, and that process's peak resident memory), so that a busy
machine shows less. onnx's figure is `onnx.parser.parse_model` on the same text: parsing only, no checks.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

H = '<ir_version: 10, opset_import: ["" : 21]>\n'
BUDGET_S = 3.0
BUDGET_MB = 500

ONNX_JOB = """
import sys, onnx.parser
onnx.parser.parse_model(open(sys.argv[1], encoding="utf-8").read())
"""
# graphlsp's command in this process, counting the conversions of a list of numbers (tree.Numbers) to values
COUNT_JOB = """
import sys
import graphlsp.syntax.semantics as sem
import graphlsp.syntax.tree as t
count = [0]
numbers_array, numbers_iter = sem.numbers_array, t.Numbers.__iter__
def counted_array(*a, **k):
    count[0] += 1
    return numbers_array(*a, **k)
def counted_iter(self):
    count[0] += 1
    return numbers_iter(self)
sem.numbers_array, t.Numbers.__iter__ = counted_array, counted_iter
from graphlsp.cli import main
code = main(sys.argv[1:])
print(count[0])
sys.exit(code)
"""
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def chain(n: int = 100_000) -> str:
    lines = [H + f"chain (float[N, 16] x0) => (float[N, 16] x{n}) {{"]
    lines += [f"  x{i + 1} = Relu (x{i})" for i in range(n)]
    return "\n".join(lines) + "\n}\n"


def _floats(n: int) -> str:
    rng = random.Random(0)
    return ", ".join(f"{rng.random():.6f}" for _ in range(n))


def one_line(n: int = 1_200_000) -> str:
    """A whole model on one line, its Constant holding n floats (~10 MB)."""
    return (H + f"g (float[{n}] x) => (float[{n}] y) {{ c = Constant <value = float[{n}] {{{_floats(n)}}}> () "
            "y = Add (x, c) }\n")  # fmt: skip


def literal(n: int = 1_200_000) -> str:
    """One initializer of n floats (~10 MB) on its line, and nothing that folds."""
    return H + f"g (float[{n}] x) => (float[{n}] y)\n<float[{n}] w = {{{_floats(n)}}}>\n{{\n  y = Add (x, w)\n}}\n"


def _timed(cmd: list[str]) -> tuple[float, int, int]:
    """(seconds, peak RSS in MB, exit status) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t0, usage.ru_maxrss // 1024, os.waitstatus_to_exitcode(status)


def _best(cmd: list[str], runs: int) -> tuple[float, int, int]:
    return min((_timed(cmd) for _ in range(runs)), key=lambda r: r[0])


def _conversions(cmd: list[str]) -> int:
    """How many times the command converts a list of numbers to values (COUNT_JOB); -1 if it failed."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    lines = proc.stdout.split()
    return int(lines[-1]) if proc.returncode <= 1 and lines else -1


def run(runs: int = 3) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="gl-bench-scale-") as tmp:
        folder = Path(tmp)
        cases = [
            ("chain 100k nodes", "chain.onnxtxt", chain(), [["check", "--no-cache", "--quiet"]], BUDGET_S, None),
            ("10 MB single line", "line.onnxtxt", one_line(),
             [["check", "--no-cache", "--quiet"], ["shapes"]], BUDGET_S, BUDGET_MB),
            ("10 MB float literal", "literal.onnxtxt", literal(), [["fold", "-o", str(folder / "folded.onnxtxt")]],
             BUDGET_S, BUDGET_MB),
            ("10 MB literal, 1 error", "broken.onnxtxt", literal().replace("(x, w)", "(x, w"),
             [["check", "--no-cache", "--quiet"]], BUDGET_S, BUDGET_MB),
            ("10 MB literal, 1 stray", "stray.onnxtxt", literal().replace(", ", ", $", 1),
             [["check", "--no-cache", "--quiet"]], BUDGET_S, BUDGET_MB),
        ]  # fmt: skip
        for title, name, text, commands, seconds, mb in cases:
            path = folder / name
            path.write_text(text, encoding="utf-8")
            theirs = _best([sys.executable, "-c", ONNX_JOB, str(path)], runs)
            for command in commands:
                cmd = [sys.executable, "-m", "graphlsp", command[0], str(path), *command[1:]]
                ours = _best(cmd, runs)
                conversions = None
                if name == "literal.onnxtxt":
                    conversions = _conversions([sys.executable, "-c", COUNT_JOB, command[0], str(path), *command[1:]])
                rows.append({
                    "case": title, "command": command[0], "bytes": len(text.encode()), "graphlsp_s": ours[0],
                    "graphlsp_mb": ours[1], "graphlsp_exit": ours[2], "onnx_parser_s": theirs[0],
                    "onnx_parser_mb": theirs[1], "budget_s": seconds, "budget_mb": mb, "literal_reads": conversions,
                })  # fmt: skip
    return {"rows": rows}


def report(r: dict[str, Any]) -> list[str]:
    out = [f"{'case':22} {'command':8} {'size':>7} {'graphlsp':>9} {'MB':>6} {'onnx.parser':>12} {'MB':>6}  budget"]
    for row in r["rows"]:
        mb_ok = row["budget_mb"] is None or row["graphlsp_mb"] <= row["budget_mb"]
        reads = row.get("literal_reads")
        ok = row["graphlsp_s"] <= row["budget_s"] and mb_ok and reads in (None, 1)
        budget = f"{row['budget_s']:.0f} s" + (f", {row['budget_mb']} MB" if row["budget_mb"] else "")
        budget += f", literal read {reads}x (1)" if reads is not None else ""
        flag = "EXIT 2" if row["graphlsp_exit"] > 1 else "ok" if ok else "OVER"
        out.append(
            f"{row['case']:22} {row['command']:8} {row['bytes'] / 1e6:6.1f}M {row['graphlsp_s']:8.2f}s "
            f"{row['graphlsp_mb']:6d} {row['onnx_parser_s']:11.2f}s {row['onnx_parser_mb']:6d}  {budget}: {flag}"
        )
    return out
