"""The body oracle behind tools/body_shapes.py (its docstring says what is judged, and how): values computed inside
If / Loop / Scan bodies, observed at every run of every body, judged against graphlsp's types.
    bodies.py   the subgraphs of a model and a copy with each one tagged
    dims.py     dim texts evaluated under an assignment of the input symbols
    feeds.py    input symbols, candidate assignments, feeds, degenerate runs
    engines.py  onnxruntime and the recording reference evaluator
    claims.py   graphlsp's types of the body values, and the peers' (--peers)
    judge.py    EXACT / PARTIAL / UNKNOWN / WRONG of one value; the result of one model
    oracle.py   one model: runs found, values judged (evaluate)
    cli.py      the command line
"""

from __future__ import annotations

from . import oracle
from .claims import graphlsp_types
from .cli import main
from .dims import Evaluator
from .judge import CLASSES, Result, Verdict, judge
from .oracle import evaluate

__all__ = ["CLASSES", "Evaluator", "Result", "Verdict", "evaluate", "graphlsp_types", "judge", "main", "oracle"]
