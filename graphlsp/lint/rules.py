"""The rule table: every diagnostic code graphlsp emits, with its kebab-case name and default severity.

Codes: GL1xx syntax, GL2xx graph structure, GL3xx shapes and types, GL4xx constant folding and simplification,
GL5xx style, GL6xx op library files (`*.onnxop`), GL7xx deployment (will the model load on its targets). A code
is stable once released; names may be used wherever a code is accepted.
"""

from __future__ import annotations

from graphlsp.frozen import Frozen


class Rule(Frozen):
    """A lint rule: its code, name, default severity and one-line summary."""

    __slots__ = ("code", "name", "severity", "summary")

    code: str
    name: str
    severity: str  # error, warning, info, hint
    summary: str

    def __init__(
        self,
        code: str,
        name: str,
        severity: str,
        summary: str,
    ) -> None:
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "severity", severity)
        object.__setattr__(self, "summary", summary)

    def __repr__(self) -> str:
        return f"Rule(code={self.code!r}, name={self.name!r}, severity={self.severity!r}, summary={self.summary!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Rule:
            return NotImplemented
        mine = (self.code, self.name, self.severity, self.summary)
        theirs = (other.code, other.name, other.severity, other.summary)
        return mine == theirs

    def __hash__(self) -> int:
        return hash((self.code, self.name, self.severity, self.summary))


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
        Rule("GL107", "external-data", "error", "External tensor data outside the model's folder, missing or too "
             "short."),
        Rule("GL110", "negative-dim", "info", "A declared dim of -1 (some exporters' way to write a dynamic dim)."),
        Rule("GL201", "undefined-value", "error", "A node reads a value that nothing defines."),
        Rule("GL202", "duplicate-definition", "error", "A value is defined more than once (ONNX graphs are SSA)."),
        Rule(
            "GL203",
            "use-before-definition",
            "error",
            "A value is used before the node that produces it, or nodes form a cycle (a warning where the main "
            "graph's nodes are only out of order: onnxruntime sorts them, onnx's checker refuses them).",
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
        Rule("GL210", "unused-initializer", "warning", "An initializer that no node reads and that is not a graph "
             "output."),
        Rule("GL211", "runtime-specific-op", "info", "An op that only one runtime defines, in a domain the ONNX "
             "standard owns (onnxruntime's SimplifiedLayerNormalization): other runtimes reject the model."),
        Rule("GL301", "broadcast-incompatible", "error", "Inputs whose shapes do not broadcast."),
        Rule("GL302", "contraction-mismatch", "error", "MatMul/Gemm inner dimensions differ."),
        Rule("GL303", "concat-dim-mismatch", "error", "Concat inputs differ outside the concatenation axis."),
        Rule("GL304", "reshape-element-count", "error", "Reshape to a shape with a different element count."),
        Rule("GL305", "conv-channel-mismatch", "error", "Conv input channels disagree with the weight and group."),
        Rule("GL306", "kernel-too-large", "error", "A kernel larger than the padded input."),
        Rule("GL307", "invalid-perm", "error", "Transpose perm of the wrong length or with bad values."),
        Rule("GL308", "split-size-mismatch", "error", "Split sizes that do not add up to the dimension."),
        Rule("GL309", "axis-out-of-range", "error", "An axis outside the input's rank."),
        Rule("GL310", "index-out-of-range", "error", "A known index outside the dimension it indexes."),
        Rule("GL311", "type-constraint", "error", "An input type the op's type constraints do not allow."),
        Rule("GL312", "input-arity", "error", "Too few or too many inputs for the op."),
        Rule("GL313", "missing-attribute", "error", "A required attribute is missing."),
        Rule("GL314", "attribute-type", "error", "An attribute of the wrong type, or one the op does not have."),
        Rule("GL315", "declared-type-conflict", "error", "A declared type (graph output, value info) that "
             "contradicts the inferred one."),
        Rule("GL316", "no-shape-inference", "info", "graphlsp has no shape rule for this op, or no schema and "
             "no op library declares it (a custom domain); its outputs are of unknown shape."),
        Rule("GL317", "shape-error", "error", "Another shape or type inconsistency."),
        Rule("GL320", "shape-condition", "info", "A node whose shapes agree only at some sizes of an input dim "
             "(a multiple of 32, at most 128), with sizes at which it fails."),
        Rule("GL321", "fixed-dynamic-dim", "warning", "An input dim declared dynamic that a node fixes to one "
             "size."),
        Rule("GL399", "inference-internal-error", "warning", "A shape rule failed inside graphlsp (a bug)."),
        Rule("GL401", "constant-foldable", "hint", "A node whose outputs are compile-time constants: it can be "
             "a Constant."),
        Rule("GL402", "reshape-target-foldable", "hint", "A Reshape target computed at run time that can be a "
             "constant (0 copies a dim)."),
        Rule("GL403", "constant-evaluation-error", "error", "A node that fails on its constant inputs (division "
             "by zero, index out of range)."),
        Rule("GL501", "unused-suppression", "warning", "A `# noqa` comment that suppresses nothing."),
        Rule("GL601", "op-library-syntax", "error", "An op library file (`*.onnxop`) that does not parse."),
        Rule("GL602", "op-declaration-error", "error", "An op declaration graphlsp cannot use (an unknown type or "
             "function, a name the shape contract cannot resolve): the op is left out of the library."),
        Rule("GL603", "op-declaration-warning", "warning", "An op declaration graphlsp uses that is probably not "
             "what was meant (an unused type constraint, onnx already defines the op)."),
        Rule("GL701", "no-kernel", "error", "The target runtime has no kernel for the node: its op at its schema "
             "version with its element types (a warning where onnxruntime runs a float16 node in float32)."),
        Rule("GL702", "ep-fallback", "warning", "No kernel on the target's GPU execution provider, but one on CPU: "
             "the node runs on CPU, its data copied there and back."),
        Rule("GL703", "runtime-too-old", "error", "The model's IR version or an opset import is newer than the "
             "target runtime release loads."),
    ]
}


def rule(code: str) -> Rule:
    return RULES.get(code) or Rule(code, code.lower(), "error", "")
