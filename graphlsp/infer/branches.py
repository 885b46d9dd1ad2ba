"""If cases: the nodes that fail when an If takes one of its branches, and the relation of input dims that decides it.

torch's exporter writes `x.squeeze(d)` on a dynamic dim as `If(Equal(Shape(x)[d], 1), Squeeze, Identity)`: the If's
output has one rank less when that dim is 1. With the dim unknown, inference relaxes the branches to an unknown rank,
and a node that reads the output (silero VAD's LSTM, which takes only 3-D input) is not judged. An If like that is
noted by its shape rule (`ShapeRefiner.splits`, with the relation of dims its condition is); here it is inferred
taking each branch in turn, in a fork of the refiner that re-infers only the If's downstream cone. A node with an
error in one case only needs the relation that decides the other: a condition like the ones shape rules assume,
reported as GL320 with a witness (contracts.py). A node failing in both cases is not a condition of sizes.
"""

from __future__ import annotations

from graphlsp.graph.core import Node
from graphlsp.infer.conditions import Condition
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.refiner import ShapeRefiner

MAX_SPLITS = 8  # Ifs inferred case by case per model (each case re-infers the If's downstream cone once), at most
_NOT_A_FAILURE = ("GL315",)  # a declaration inference contradicts: onnxruntime warns and runs on


def branch_conditions(refiner: ShapeRefiner) -> dict[Node, list[Condition]]:
    """The condition each node needs of the input dims for an If before it to take the branch it can run after.
    Kept while the same Ifs split and none of them, nor any node their cases inferred, is inferred again: an edit
    elsewhere cannot change a case (a node the cases did not reach reads the same inputs in both), and the editor
    asks at every edit."""
    if not refiner.splits:
        return {}
    kept = refiner.kept.get("branches")
    if kept is not None and kept[0] == refiner.splits and all(refiner.stamps.get(n, 0) <= kept[1] for n in kept[2]):
        got: dict[Node, list[Condition]] = kept[3]
        return got
    out: dict[Node, list[Condition]] = {}
    watched: set[Node] = set(refiner.splits)
    budget = len(refiner.contexts)  # node inferences for all the cases: about one pass over the model more
    for node, (when_true, when_false) in list(refiner.splits.items())[:MAX_SPLITS]:
        if node not in refiner.contexts:
            continue
        if budget <= 0:
            break
        try:
            fails_true, spent = _failing(refiner, node, True, watched)
            fails_false, more = _failing(refiner, node, False, watched)
        except Exception:  # a case that cannot be inferred says nothing: the rest of the analysis stands
            import logging  # (here: logging imports threading, which a check does not need otherwise)

            logging.getLogger(__name__).exception("the cases of %s could not be inferred", node.name or node.op_type)
            continue
        budget -= spent + more
        for n in fails_true:
            if n not in fails_false:
                out.setdefault(n, []).append(when_false)
        for n in fails_false:
            if n not in fails_true:
                out.setdefault(n, []).append(when_true)
    refiner.kept["branches"] = (dict(refiner.splits), refiner.generation, watched, out)
    return out


def _failing(refiner: ShapeRefiner, node: Node, branch: bool, watched: set[Node]) -> tuple[dict[Node, None], int]:
    """The nodes with an error when `node` (an If) takes `branch` that they do not have otherwise, in the order
    the refiner first inferred them; and how many nodes were inferred to find them (added to `watched`)."""
    fork = refiner.fork()
    fork.assumed[node] = branch
    fork.touched = set()
    fork.rerun([node])
    watched |= fork.touched
    out: dict[Node, None] = {}
    for n, ctx in fork.contexts.items():
        if n in fork.touched and n is not node and _errors(ctx) - _errors(refiner.contexts.get(n)):
            out[n] = None
    return out, len(fork.touched)


def _errors(ctx: InferenceContext | None) -> set[str]:
    if ctx is None:
        return set()
    return {p.code for p in ctx.problems if p.severity == "error" and p.code not in _NOT_A_FAILURE}
