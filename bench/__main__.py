"""`python -m bench [parse] [infer] [lsp] [lint] [fold] [binary] [scale] [graph] [--json]`: each figure next to
its budget and onnx's time; no name runs them all."""

from __future__ import annotations

import json
import sys

from bench import binary, fold, graph, infer, lint, lsp, parse, scale

BENCHES = {"parse": parse, "infer": infer, "lsp": lsp, "lint": lint, "fold": fold, "binary": binary,
           "scale": scale, "graph": graph}  # fmt: skip


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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
