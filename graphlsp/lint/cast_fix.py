"""The quick fix of no-kernel (GL701): Casts around a node that has a kernel for a wider type, where that is
plain: every input and output of the missing type cast to one the target's kernel takes (float for float16 and
bfloat16, int32 for the narrow integers, ...), and the outputs cast back. Unsafe: the node then computes in
another type."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from graphlsp.infer.types import ELEM_BY_NAME
from graphlsp.lint.deployment import _elem_type
from graphlsp.runtime.kernels import table_for

if TYPE_CHECKING:
    from graphlsp.analysis import Analysis
    from graphlsp.graph.core import Node
    from graphlsp.graph.findings import Finding

WIDER = {
    "float16": ["float"], "bfloat16": ["float"], "int8": ["int32"], "int16": ["int32"], "uint8": ["int32"],
    "uint16": ["int32"], "uint32": ["int64"], "int32": ["int64"], "uint64": ["int64"], "double": ["float"],
    "bool": ["int32"],
}  # fmt: skip
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def cast_fixes(a: Analysis, f: Finding, targets: list[str]) -> list[tuple[str, list[tuple[int, int, str]]]]:
    """(title, edits) for a GL701 finding on a node written in the text; nothing where the fix is not plain."""
    node = f.node
    if node is None or node.function is not None or node.subgraphs or node.version is None or node.span is None:
        return []
    text = a.doc.text if a.doc is not None else ""
    ins = [_elem_type(a.refiner.type_of(v)) if v is not None else None for v in node.inputs]
    outs = [_elem_type(a.refiner.type_of(v)) if v is not None else None for v in node.outputs]
    for spec in targets:
        table = table_for(spec)
        if not table.checks_kernels:
            continue
        since = table.since_version(node.domain, node.op_type, node.version)
        if since is None:
            continue
        got = table.lookup(node.domain, node.op_type, since, ins, outs)
        if got.status != "missing" or got.failed is None:
            continue
        bad = got.failed[1]
        for wide in WIDER.get(bad, []):
            if table.lookup(node.domain, node.op_type, since, _swap(ins, bad, wide), _swap(outs, bad, wide)).status \
                    != "ok":  # fmt: skip
                continue
            edits = _edits(node, text, ins, outs, bad, wide)
            if edits:
                return [(f"Cast {node.op_type} to {wide} and back to {bad}", edits)]
    return []


def _swap(types: list[str | None], bad: str, wide: str) -> list[str | None]:
    return [wide if t == bad else t for t in types]


def _name(name: str) -> str:
    return name if _PLAIN_NAME.match(name) else '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _edits(node: Node, text: str, ins: list[str | None], outs: list[str | None], bad: str,
           wide: str) -> list[tuple[int, int, str]]:  # fmt: skip
    from graphlsp.syntax.positions import line_end_at as end_at
    from graphlsp.syntax.positions import line_start_at as start_at

    assert node.span is not None
    s, e = node.span
    start = start_at(text, s)
    indent = text[start:s]
    if indent.strip():
        return []  # another statement before it on the line
    _, next_line = end_at(text, e)
    taken = set(node.graph.values)

    def fresh(base: str) -> str:
        name, k = f"{base}_{wide}", 1
        while name in taken or node.graph.lookup(name) is not None:
            k += 1
            name = f"{base}_{wide}{k}"
        taken.add(name)
        return name

    edits: list[tuple[int, int, str]] = []
    before, after = [], []
    done: dict[str, str] = {}
    for i, (v, t) in enumerate(zip(node.inputs, ins, strict=False)):
        if v is None or t != bad:
            continue
        span = node.input_span(i)
        if span is None:
            return []
        if v.name not in done:
            done[v.name] = fresh(v.name)
            before.append(f"{indent}{_name(done[v.name])} = Cast <to = {ELEM_BY_NAME[wide]}> ({_name(v.name)})\n")
        edits.append((span[0], span[1], _name(done[v.name])))
    for i, (v, t) in enumerate(zip(node.outputs, outs, strict=False)):
        if v is None or t != bad:
            continue
        span = node.output_span(i)
        if span is None:
            return []
        tmp = fresh(v.name)
        edits.append((span[0], span[1], _name(tmp)))
        after.append(f"{indent}{_name(v.name)} = Cast <to = {ELEM_BY_NAME[bad]}> ({_name(tmp)})\n")
    if before:
        edits.append((start, start, "".join(before)))
    if after:
        lead = "" if next_line > 0 and text[next_line - 1] in "\r\n" else "\n"
        edits.append((next_line, next_line, lead + "".join(after)))
    return edits
