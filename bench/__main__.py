"""`python -m bench [parse] [infer] [lsp] [lint] [fold] [binary] [scale] [graph] [diff] [stages] [cost] [--json]`:
each figure next to its budget and onnx's time; no name runs them all."""

from __future__ import annotations

import json
import sys

from bench import binary, cost, diff, fold, graph, infer, lint, lsp, parse, scale, stages

# binary first: a process's peak memory (ru_maxrss) counts its parent's at the fork, and the other benches grow this
# process (by 170 MB after lsp), which every model's figure then showed
BENCHES = {"binary": binary, "parse": parse, "infer": infer, "lsp": lsp, "lint": lint, "fold": fold,
           "scale": scale, "graph": graph, "diff": diff, "stages": stages, "cost": cost}  # fmt: skip


def main(argv: list[str]) -> int:
    which = [a for a in argv if not a.startswith("-")] or list(BENCHES)
    unknown = [w for w in which if w not in BENCHES]
    if unknown:
        print(f"unknown bench {', '.join(unknown)}: the benches are {', '.join(BENCHES)}", file=sys.stderr)
        return 2
    results = {}
    for name, bench in BENCHES.items():
        if name in which:
            results[name] = r = bench.run()
            print(f"== {name}")
            for line in bench.report(r):
                print(line)
    if "--json" in argv:
        print(json.dumps(results, indent=2))
    return 1 if any(r.get("failed") for r in results.values()) else 0  # a guard (stages) found a cliff


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
