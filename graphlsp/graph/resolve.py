"""Op resolution: which model-local function or onnx schema a node calls, at which opset version.

A model-local function is looked up first, by (domain, name, overload); then onnx's schema for the version the
model (or the function holding the node) imports for the domain. What cannot be resolved is returned as an
issue (code, message, range) for the builder to report: missing-opset-import, op-not-in-opset, unknown-op.
"""

from __future__ import annotations

from collections.abc import Callable

from graphlsp.graph import findings as F
from graphlsp.graph import ops
from graphlsp.graph.core import Function, FunctionKey, Node, Span

Issue = tuple[str, str, Span | None]
SUGGESTED_OPSET = 21  # what messages suggest importing for ai.onnx: widely supported by runtimes

# Ops onnx has no schema for, declared in op libraries (a runtime's contrib ops, a project's `.onnxop` files):
# `graphlsp.oplib.catalog` installs its answer here, (declared, issue) for a node and its importer.
library: Callable[[Node, str], tuple[bool, Issue | None]] | None = None


def resolve_op(node: Node, imports: dict[str, int], functions: dict[FunctionKey, Function], local_checked: bool,
               importer: str) -> Issue | None:  # fmt: skip
    """Set node.version, node.function and node.schema; return what is wrong, if anything.

    `local_checked`: whether an op missing from a non-onnx domain with model-local functions is an error (False
    when some function did not parse: it may be the one named). `importer` is "model" or "function".
    """
    dom, op_type, overload = node.domain, node.op_type, node.overload
    fn = functions.get((dom, op_type, overload))
    node.function = fn
    version = node.version = imports.get(dom)
    if version is None:
        if dom:
            where = node.origin.domain_span()
            return F.MISSING_OPSET_IMPORT, f"domain '{dom}' is not imported: add `\"{dom}\" : 1` to the {importer}'s " \
                "opset_import", where  # fmt: skip
        msg = f'the default domain (ai.onnx) is not imported: add `"" : {SUGGESTED_OPSET}` to the {importer}\'s '
        return F.MISSING_OPSET_IMPORT, msg + "opset_import", node.op_span
    if fn is not None:
        return None
    if overload:
        return F.UNKNOWN_OP, f"no model-local function '{node.qualified_op}': a call with an overload (`:name`) " \
            "needs a function with that domain, name and overload", node.op_span  # fmt: skip
    schema = node.schema = ops.schema_for(op_type, version, dom)
    if schema is not None:
        if schema.deprecated:
            return F.OP_NOT_IN_OPSET, f"'{op_type}' was removed from {ops.domain_label(dom)} in opset " \
                f"{schema.since_version}; the {importer} imports opset {version}", node.op_span  # fmt: skip
        return None
    history = ops.op_versions(op_type, dom)
    if not history and library is not None:
        declared, issue = library(node, importer)
        if declared:
            return issue
    if history:
        return F.OP_NOT_IN_OPSET, f"'{op_type}' is not in opset {version} of {ops.domain_label(dom)}: it was " \
            f"added in opset {history[0][0]}", node.op_span  # fmt: skip
    local = any(f.domain == dom for f in functions.values())
    if dom not in ops.known_domains() and not (local and local_checked):
        return None  # a custom domain (a runtime's contrib ops): nothing to check against
    candidates = ops.op_names(dom) + [f.name for f in functions.values() if f.domain == dom]
    hint = ops.closest(op_type, candidates)
    msg = f"unknown op '{op_type}'" + (f" in domain '{dom}'" if dom else "")
    msg += ": no operator schema or model-local function has this name"
    return F.UNKNOWN_OP, msg + (f"; did you mean '{hint}'?" if hint else ""), node.op_span
