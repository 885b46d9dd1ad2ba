"""Structural findings of the graph layer, as plain data for the lint layer.

A `Finding` sits on the offending element (an input name, an output name, the op name, a label) with absolute
offsets into the document's current text; `related` points at other places that explain it (the first
definition of a duplicated value, the nodes of a cycle).
"""

from __future__ import annotations

from dataclasses import dataclass, field

UNDEFINED_VALUE = "GL201"
DUPLICATE_DEFINITION = "GL202"
USE_BEFORE_DEFINITION = "GL203"
UNKNOWN_OP = "GL204"
MISSING_OPSET_IMPORT = "GL205"
DUPLICATE_NODE_LABEL = "GL206"
UNUSED_VALUE = "GL207"
OUTPUT_NEVER_PRODUCED = "GL208"
OP_NOT_IN_OPSET = "GL209"

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
}
CYCLE = "cycle"


@dataclass(slots=True)
class Finding:
    """One structural problem. `start`/`end` are absolute offsets; `related` holds (message, start, end)."""

    code: str
    message: str
    start: int
    end: int
    severity: str = ""
    related: list[tuple[str, int, int]] = field(default_factory=list)
    kind: str = ""

    def __post_init__(self) -> None:
        kind, severity = CODES.get(self.code, ("", "error"))
        if not self.severity:
            self.severity = severity
        if not self.kind:
            self.kind = kind
