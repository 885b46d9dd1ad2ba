"""The rule table: every diagnostic code graphlsp emits, with its kebab-case name and default severity.

Codes: GL1xx syntax, GL2xx graph structure, GL3xx shapes and types, GL4xx constant folding and simplification,
GL5xx style. A code is stable once released; names may be used wherever a code is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str
    severity: str  # error, warning, info, hint
    summary: str


RULES: dict[str, Rule] = {
    r.code: r
    for r in [
        Rule("GL101", "syntax-error", "error", "The text is not valid ONNX text syntax."),
        Rule("GL102", "protobuf-text-format", "error", "The file is protobuf text format, not ONNX text syntax."),
        Rule(
            "GL103",
            "invalid-value",
            "error",
            "A well-formed token with a meaning onnx rejects (an unknown "
            "header key or attribute type, a float where an integer is required, a malformed type).",
        ),
        Rule(
            "GL104",
            "elided-tensor-data",
            "error",
            "Tensor data printed as '...' by onnx's printer, which its parser cannot read back.",
        ),
        Rule("GL105", "invalid-encoding", "error", "The file is not valid UTF-8."),
        Rule("GL106", "unreadable-model", "error", "A binary .onnx file that onnx cannot load."),
        Rule("GL201", "undefined-value", "error", "A node reads a value that nothing defines."),
        Rule("GL202", "duplicate-definition", "error", "A value is defined more than once (ONNX graphs are SSA)."),
        Rule(
            "GL203",
            "use-before-definition",
            "error",
            "A value is used before the node that produces it, or nodes form a cycle.",
        ),
        Rule(
            "GL204",
            "unknown-op",
            "error",
            "The op is neither in onnx's schemas for its domain nor a model-local function.",
        ),
        Rule("GL205", "missing-opset-import", "error", "A node uses a domain the model does not import."),
        Rule("GL206", "duplicate-node-label", "warning", "Two nodes have the same name."),
        Rule("GL207", "unused-value", "warning", "A node output that nothing consumes and that is not a graph output."),
        Rule("GL208", "output-never-produced", "error", "A graph output that nothing defines."),
        Rule("GL209", "op-not-in-opset", "error", "The op exists, but not at the imported opset version."),
    ]
}


def rule(code: str) -> Rule:
    return RULES.get(code) or Rule(code, code.lower(), "error", "")
