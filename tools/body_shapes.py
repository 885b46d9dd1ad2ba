"""Shapes inside If / Loop / Scan bodies judged against execution (a test-time oracle).

    python tools/body_shapes.py [--json OUT] [--show N] [--timeout S] MODEL...
    python tools/body_shapes.py --node-tests [NAME_SUBSTRING ...]

`../shared/tools/runtime_shapes.py` judges the values of a model's main graph; this judges the values computed
inside the bodies of its control-flow nodes (If branches, Loop and Scan bodies, and bodies nested in those), on the
branch actually taken, at every iteration. For each model:

1. Runs. The graph inputs are fed as runtime_shapes.py feeds them (the same candidate assignments of the input
   symbols, tried in order, the same random floats and small ints, masks of ones, position ids as a range) until
   two runs succeed that differ in every symbol, are not degenerate (a Conv or pooling window of the main graph
   larger than its padded input) and agree with onnxruntime (below). That is one scenario; a model with control
   inputs gets two: every bool scalar input True, then False; an `sr` / sample rate input 16000, then 8000. So both
   sides of an If on `use_cache_branch` (optimum's merged decoders) or on the sample rate (silero) are run. With
   --node-tests, each of onnx's node test cases that has a subgraph runs once, on its own inputs.
2. Truth. Each run executes in `onnx.reference.ReferenceEvaluator`, whose subgraph evaluators are subclassed to
   keep every intermediate result of every body run: each node output of each body is recorded with its dtype and
   shape each time the body runs (every Loop / Scan iteration, every taken branch, in nested bodies too). The same
   feeds run in onnxruntime with every main-graph node output exposed; a run whose main-graph values (shape and
   dtype of each, and the values of the conditions and trip counts fed to If and Loop) differ between the two
   engines is not used, so a reference-evaluator bug does not become the truth (a node test is checked against its
   expected outputs instead where onnxruntime cannot load it). Values that are not tensors at run time (sequences,
   absent optionals) are not counted; body inputs are not counted (node outputs only, as runtime_shapes.py does).
3. Judge. graphlsp's types are read in-process (`ModelAnalysis` on `read_model`, or `Analysis` on text): the
   refiner keeps the types of body values after inference (a Loop body's from its last, stable round; a branch a
   known condition rules out is forgotten). Each body value observed at run time is judged over every run in which
   it ran, like runtime_shapes.py:
     EXACT    rank right and every dim evaluates (under the run's assignment of the input symbols) to the runtime
              size, or is unresolved where the runtime size differs between iterations of one run (no fixed dim
              is right there);
     PARTIAL  rank right, no dim contradicted, some dim unresolved (null, or a symbol that is no input symbol)
              where the runtime size is the same at every iteration;
     UNKNOWN  no type, or unknown rank (EXACT when the rank itself differs between iterations);
     WRONG    rank differs, a dim evaluates to another number (or to a number where the size differs between
              iterations), or the dtype differs.
   A value that ran in only one run is still judged (and counted apart: a dim that equals a constant in that one
   run proves less). Values of a branch that never ran are not judged.
4. One line per model: body values judged, E/P/U/W, the runs; then the WRONG values (--show). Exit 1 if any WRONG.

What it does not cover: bodies of function calls (model-local functions and schema function bodies are expanded
by graphlsp, not judged here), ops outside onnx's reference implementation (com.microsoft contrib ops) in a
model with a body, and Scan with axes or directions the reference implementation refuses.

The code is the package tools/body_oracle/ beside this file (one module per step above); this is its entry point.
"""

from __future__ import annotations

import sys

from body_oracle.cli import main  # tools/ is sys.path[0] when this file runs

if __name__ == "__main__":
    sys.exit(main())
