"""Cost rules by op: what a rule reads (`Call`) and what it answers (`Work`), registered per (domain, op).

A rule is a function of a `Call` (the node's input and output shapes, element types, attributes and the known
elements of small int inputs) returning the node's `Work`: FLOPs (a multiply-add counts 2) and MACs (the
multiply-adds of its contractions). It works on dims, so the same rule gives a formula over inferred symbolic
shapes and a number over the concrete shapes of a run (the oracle in tests/cost). It never guesses: a size it
needs and does not have makes the count unknown (None). The families (one module each) register their rules on
import; `lookup` imports them on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from graphlsp.infer.dims import Dim
from graphlsp.infer.types import Shape

FAMILIES = ("linalg", "conv", "attention", "normalization", "elementwise", "movement")


class Call:
    """One node as a cost rule sees it. `inputs`/`outputs`: a shape per slot (None: absent or unknown rank);
    `present`: which input slots are given; `values`: the elements of small int inputs as dims, when known."""

    __slots__ = ("op", "domain", "inputs", "outputs", "elems", "attrs", "present", "values")

    def __init__(self, op: str, domain: str, inputs: list[Shape], outputs: list[Shape], elems: list[int | None],
                 attrs: dict[str, Any], present: list[bool], values: list[tuple[Dim, ...] | None]) -> None:  # fmt: skip
        self.op = op
        self.domain = domain
        self.inputs = inputs
        self.outputs = outputs
        self.elems = elems
        self.attrs = attrs
        self.present = present
        self.values = values

    def shape(self, i: int) -> Shape:
        return self.inputs[i] if i < len(self.inputs) else None

    def out(self, i: int = 0) -> Shape:
        return self.outputs[i] if i < len(self.outputs) else None

    def has(self, i: int) -> bool:
        return i < len(self.present) and self.present[i]

    def value(self, i: int) -> tuple[Dim, ...] | None:
        return self.values[i] if i < len(self.values) else None

    def attr(self, name: str, default: Any = None) -> Any:
        v = self.attrs.get(name)
        return default if v is None else v


class Work:
    """What a node computes: FLOPs and MACs (None: unknown), and a word on how it was counted."""

    __slots__ = ("flops", "macs", "note")

    def __init__(self, flops: Dim, macs: Dim = 0, note: str = "") -> None:
        self.flops = flops
        self.macs = None if flops is None else macs  # unknown work has unknown multiply-adds too
        self.note = note

    def __repr__(self) -> str:
        return f"Work({self.flops}, {self.macs}, {self.note!r})"


Rule = Callable[[Call], Work]
_RULES: dict[tuple[str, str], Rule] = {}
_loaded = False


def cost_fn(*ops: str, domain: str = "") -> Callable[[Rule], Rule]:
    """Register a rule for ops of a domain ("" is ai.onnx; com.microsoft for onnxruntime's)."""

    def register(fn: Rule) -> Rule:
        for op in ops:
            _RULES[(domain, op)] = fn
        return fn

    return register


def lookup(domain: str, op: str) -> Rule | None:
    global _loaded
    if not _loaded:
        for family in FAMILIES:
            importlib.import_module(f"graphlsp.cost.{family}")
        _loaded = True
    return _RULES.get((domain if domain != "ai.onnx" else "", op))
