"""`python -m bench [parse] [infer] [lsp] [lint] [fold] [binary] [scale] [graph] [--json]`: each figure next to
its budget and onnx's time; no name runs them all."""

from __future__ import annotations

import json
import sys

from bench import binary, fold, graph, infer, lint, lsp, parse, scale


def main(argv: list[str]) -> int:
    every = ["parse", "infer", "lsp", "lint", "fold", "binary", "scale", "graph"]
    which = [a for a in argv if not a.startswith("-")] or every
    results = {}
    if "parse" in which:
        r = parse.run()
        results["parse"] = r
        print("== parse")
        for line in parse.report(r):
            print(line)
    if "infer" in which:
        r = infer.run()
        results["infer"] = r
        print("== infer")
        for line in infer.report(r):
            print(line)
    if "lsp" in which:
        r = lsp.run()
        results["lsp"] = r
        print("== lsp")
        for line in lsp.report(r):
            print(line)
    if "lint" in which:
        r = lint.run()
        results["lint"] = r
        print("== lint")
        for line in lint.report(r):
            print(line)
    if "fold" in which:
        r = fold.run()
        results["fold"] = r
        print("== fold")
        for line in fold.report(r):
            print(line)
    if "binary" in which:
        r = binary.run()
        results["binary"] = r
        print("== binary")
        for line in binary.report(r):
            print(line)
    if "scale" in which:
        r = scale.run()
        results["scale"] = r
        print("== scale")
        for line in scale.report(r):
            print(line)
    if "graph" in which:
        r = graph.run()
        results["graph"] = r
        print("== graph")
        for line in graph.report(r):
            print(line)
    if "--json" in argv:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
