"""Structural findings of the graph layer, as plain data for the lint layer.

A `Finding` sits on the offending element (an input name, an output name, the op name, a label) with absolute
offsets into the document's current text; `related` points at other places that explain it (the first
definition of a duplicated value, the nodes of a cycle). In a model without text (a binary), start and end are
-1 and `node` (and `value`) say where the finding is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlsp.graph.core import Node

UNDEFINED_VALUE = "GL201"
DUPLICATE_DEFINITION = "GL202"
USE_BEFORE_DEFINITION = "GL203"
UNKNOWN_OP = "GL204"
MISSING_OPSET_IMPORT = "GL205"
DUPLICATE_NODE_LABEL = "GL206"
UNUSED_VALUE = "GL207"
OUTPUT_NEVER_PRODUCED = "GL208"
OP_NOT_IN_OPSET = "GL209"
UNUSED_INITIALIZER = "GL210"
RUNTIME_SPECIFIC_OP = "GL211"
EXTERNAL_DATA = "GL107"
NEGATIVE_DIM = "GL110"

# code -> (kind, default severity); GL203 also has the kind "cycle" (see `Finding.kind`)
CODES: dict[str, tuple[str, str]] = {
    UNDEFINED_VALUE: ("undefined-value", "error"),
    DUPLICATE_DEFINITION: ("duplicate-definition", "error"),
    USE_BEFORE_DEFINITION: ("use-before-definition", "error"),
    UNKNOWN_OP: ("unknown-op", "error"),
    MISSING_OPSET_IMPORT: ("missing-opset-import", "error"),
    DUPLICATE_NODE_LABEL: ("duplicate-node-label", "warning"),
    UNUSED_VALUE: ("unused-value", "warning"),
    OUTPUT_NEVER_PRODUCED: ("output-never-produced", "error"),
    OP_NOT_IN_OPSET: ("op-not-in-opset", "error"),
    UNUSED_INITIALIZER: ("unused-initializer", "warning"),
    RUNTIME_SPECIFIC_OP: ("runtime-specific-op", "warning"),
    EXTERNAL_DATA: ("external-data", "error"),
    NEGATIVE_DIM: ("negative-dim", "warning"),
}
CYCLE = "cycle"


@dataclass(slots=True)
class Finding:
    """One problem. `start`/`end` are absolute offsets (-1: no text); `related` holds (message, start, end).

    `node` is the node it is about (when there is one): a binary model's findings are located by it; `detail`
    names the part of the node (`input 1`, `attribute axis`, `output 0`), or the value for a graph-level one,
    and `value` is then that value's name."""

    code: str
    message: str
    start: int = -1
    end: int = -1
    severity: str = ""
    related: list[tuple[str, int, int]] = field(default_factory=list)
    kind: str = ""
    node: Node | None = None
    detail: str = ""
    value: str = ""  # the value (or initializer) a graph-level finding is about

    def __post_init__(self) -> None:
        kind, severity = CODES.get(self.code, ("", "error"))
        if not self.severity:
            self.severity = severity
        if not self.kind:
            self.kind = kind
