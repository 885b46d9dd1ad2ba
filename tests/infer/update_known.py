"""Rewrite known_node_failures.txt and known_oracle_gaps.txt from the current state, and print the per-op table.

    python -m tests.infer.update_known [--table]

Run it after a change that fixes cases (the acceptance tests fail until the lists are updated) and review the diff:
a case that leaves a list is progress, a case that joins one is a regression to explain.
"""

from __future__ import annotations

import sys
import warnings

import onnx.parser

from tests.infer.node_cases import cases, run_case
from tests.infer.oracle import compare
from tests.infer.test_node_cases import KNOWN_FILE as NODE_FILE
from tests.infer.test_node_cases import per_op_table
from tests.infer.test_oracle import KNOWN_FILE as ORACLE_FILE
from tests.infer.test_oracle import models


def main(argv: list[str]) -> int:
    warnings.simplefilter("ignore")
    results = [run_case(n, m) for n, m in cases()]
    lines = ["# node test cases graphlsp does not infer exactly yet: name<TAB>why"]
    lines += [f"{r.name}\t[{r.op}] {r.detail}" for r in results if not r.ok]
    NODE_FILE.write_text("\n".join(lines) + "\n")
    gaps = ["# models where graphlsp is less precise than onnx's infer_shapes: name<TAB>first gap"]
    for name, model in models():
        r = compare(model)
        if r.less_precise:
            gaps.append(f"{name}\t{r.less_precise[0]}")
    from bench.models import load

    r = compare(onnx.parser.parse_model(load("gpt_L24")[0]))
    if r.less_precise or r.unresolved:
        gaps.append(f"gpt_L24\t{(r.less_precise or r.unresolved)[0]}")
    ORACLE_FILE.write_text("\n".join(gaps) + "\n")
    passed = sum(r.ok for r in results)
    print(f"node cases: {passed}/{len(results)}; oracle gaps: {len(gaps) - 1}")
    if "--table" in argv:
        print("| op | cases | inferred exactly |\n|---|---|---|")
        for op, ok, total in per_op_table(results):
            print(f"| {op} | {total} | {ok} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
