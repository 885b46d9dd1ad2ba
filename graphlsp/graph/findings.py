"""Structural findings of the graph layer, as plain data for the lint layer.

A `Finding` sits on the offending element (an input name, an output name, the op name, a label) with absolute
offsets into the document's current text; `related` points at other places that explain it (the first
definition of a duplicated value, the nodes of a cycle). In a model without text (a binary), start and end are
-1 and `node` (and `value`) say where the finding is.
"""

from __future__ import annotations

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
    RUNTIME_SPECIFIC_OP: ("runtime-specific-op", "info"),
    EXTERNAL_DATA: ("external-data", "error"),
    NEGATIVE_DIM: ("negative-dim", "info"),
}
CYCLE = "cycle"


class Finding:
    """One problem. `start`/`end` are absolute offsets (-1: no text); `related` holds (message, start, end).

    `node` is the node it is about (when there is one): a binary model's findings are located by it; `detail`
    names the part of the node (`input 1`, `attribute axis`, `output 0`), or the value for a graph-level one,
    and `value` is then that value's name. `cause` is the node a finding elsewhere comes from (GL321 on an input:
    the node that fixes the dim), whose Python origin the finding carries too."""

    __slots__ = ("code", "message", "start", "end", "severity", "related", "kind", "node", "detail", "value", "cause")

    code: str
    message: str
    start: int
    end: int
    severity: str
    related: list[tuple[str, int, int]]
    kind: str
    node: Node | None
    detail: str
    value: str  # the value (or initializer) a graph-level finding is about
    cause: Node | None

    def __init__(
        self,
        code: str,
        message: str,
        start: int = -1,
        end: int = -1,
        severity: str = "",
        related: list[tuple[str, int, int]] | None = None,
        kind: str = "",
        node: Node | None = None,
        detail: str = "",
        value: str = "",
        cause: Node | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.start = start
        self.end = end
        self.severity = severity
        self.related = [] if related is None else related
        self.kind = kind
        self.node = node
        self.detail = detail
        self.value = value
        self.cause = cause
        kind, severity = CODES.get(self.code, ("", "error"))
        if not self.severity:
            self.severity = severity
        if not self.kind:
            self.kind = kind

    def __repr__(self) -> str:
        return (
            f"Finding(code={self.code!r}, message={self.message!r}, start={self.start!r}, end={self.end!r}, "
            f"severity={self.severity!r}, related={self.related!r}, kind={self.kind!r}, node={self.node!r}, "
            f"detail={self.detail!r}, value={self.value!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not Finding:
            return NotImplemented
        mine = (self.code, self.message, self.start, self.end, self.severity, self.related, self.kind, self.node,
                self.detail, self.value)
        theirs = (other.code, other.message, other.start, other.end, other.severity, other.related, other.kind,
                  other.node, other.detail, other.value)
        return mine == theirs
