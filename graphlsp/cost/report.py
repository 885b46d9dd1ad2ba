"""A model's cost as tables: totals, then rows by name scope, by op type or per node, largest first; as text,
JSON or CSV (`graphlsp cost`), and the short lines the editor shows.

Each row holds formulas (FLOPs, MACs, bytes read and written, parameter bytes of the initializers it reads
first) and, when sizes are bound, their numbers. Rows are ordered by their FLOPs at the bound sizes, an unbound
dim taken as SORT_SIZE for the ordering alone (said in the output).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from graphlsp.cost.formula import Total, human, show
from graphlsp.cost.model import ModelCost, NodeCost
from graphlsp.graph.core import Node

SORT_SIZE = 512
BY = ("scope", "op", "node")


def node_label(node: Node) -> str:
    return node.name or f"{node.op_type}_{node.index}"


def scope_of(node: Node, depth: int) -> str:
    """The exporter's module path of a node (`/model/layers.3/self_attn/q_proj/MatMul` at depth 2:
    `/model/layers.3`), or the modules torch.export wrote in its metadata (`pkg.torch.onnx.name_scopes`, read by
    graphlsp/provenance); nodes without either share `(top)`."""
    name = node.name or ""
    if name.startswith("/"):
        parts = name.split("/")[1:-1]
    else:
        from graphlsp.provenance.modules import scope_parts
        from graphlsp.provenance.trace import of_node

        try:
            src = of_node(node) if node.origin.metadata else None
            parts = scope_parts(src.modules) if src is not None and src.modules else []
        except (ValueError, TypeError, AttributeError, KeyError):  # metadata it cannot read: no scope
            parts = []
    return "/" + "/".join(parts[:depth]) if parts else "(top)"


class Row:
    __slots__ = ("name", "nodes", "flops", "macs", "read", "written", "params", "note")

    def __init__(self, name: str) -> None:
        self.name = name
        self.nodes = 0
        self.flops, self.macs, self.read, self.written = Total(), Total(), Total(), Total()
        self.params = 0
        self.note = ""

    def add(self, n: NodeCost, params: int) -> None:
        self.nodes += 1
        self.flops.add(n.flops)
        self.macs.add(n.macs)
        self.read.add(n.read)
        self.written.add(n.written)
        self.params += params


def first_reads(cost: ModelCost) -> dict[Node, int]:
    """Initializer bytes by the node that reads them first (a scope's weights)."""
    from graphlsp.cost.formula import bytes_of

    out: dict[Node, int] = {}
    seen: set[object] = set()
    for n in cost.nodes:
        for v in n.node.inputs:
            if v is not None and v.tensor is not None and v.kind in ("initializer", "input") and v not in seen:
                seen.add(v)
                b = bytes_of(v.tensor.dtype, v.tensor.size)
                out[n.node] = out.get(n.node, 0) + (b if isinstance(b, int) else 0)
    return out


def rows(cost: ModelCost, by: str, depth: int = 2) -> list[Row]:
    weights = first_reads(cost)
    table: dict[str, Row] = {}
    for n in cost.nodes:
        if by == "scope":
            key = scope_of(n.node, depth)
        elif by == "op":
            key = n.node.qualified_op
        else:
            key = node_label(n.node)
        row = table.get(key)
        if row is None:
            row = table[key] = Row(key)
            if by == "node":
                row.note = n.note
        row.add(n, weights.get(n.node, 0))
    return list(table.values())


def ordered(table: list[Row], env: Mapping[str, int], symbols: list[str]) -> list[Row]:
    sort_env = {s: env.get(s, SORT_SIZE) for s in symbols}

    def key(r: Row) -> int:
        v = r.flops.value(sort_env)
        return -(v if v is not None else -1)

    return sorted(table, key=key)


def _n(total: Total, env: Mapping[str, int]) -> int | None:
    return total.value(env) if env else None


Number = Callable[[Total, str, "str | None"], "int | None"]


def numbers(cost: ModelCost, env: Mapping[str, int], by: str, depth: int, bound: ModelCost | None) -> Number:
    """The number of a total (`kind`: flops, macs, read, written) or of a row's: from `bound`, the cost of an
    analysis run at the given sizes (exact where a dim has no name to bind, as `--input-shape` gives it), else the
    formula evaluated at `env`."""
    if bound is None:
        return lambda total, kind, row: _n(total, env)
    table = {r.name: r for r in rows(bound, by, depth)}

    def number(total: Total, kind: str, row: str | None) -> int | None:
        source: Any = bound if row is None else table.get(row)
        got = getattr(source, kind).value({}) if source is not None else None
        return got if got is not None else _n(total, env)

    return number


def peak_number(cost: ModelCost, env: Mapping[str, int], bound: ModelCost | None) -> tuple[int | None, Node | None]:
    if bound is not None:
        got = bound.peak.value({})
        if got[0] is not None:
            return got
    return cost.peak.value(env) if env else (None, None)


def _formula(total: Total) -> str:
    text = str(total)
    return f"{text} + ? ({total.unknown} unknown)" if total.unknown else text


def to_data(cost: ModelCost, by: str, env: Mapping[str, int], depth: int = 2,
            bound: ModelCost | None = None) -> dict[str, Any]:  # fmt: skip
    """Everything, as JSON data: formulas as text, numbers when `env` binds every symbol they use (or from
    `bound`, the cost at the given sizes)."""
    num = numbers(cost, env, by, depth, bound)

    def pair(t: Total, kind: str) -> dict[str, Any]:
        return {"formula": str(t), "value": num(t, kind, None), "unknown_parts": t.unknown}

    peak_value, peak_node = peak_number(cost, env, bound)
    params = cost.params
    data: dict[str, Any] = {
        "symbols": cost.symbols,
        "bound": dict(env),
        "nodes": len(cost.nodes),
        "totals": {"flops": pair(cost.flops, "flops"), "macs": pair(cost.macs, "macs"),
                   "bytes_read": pair(cost.read, "read"), "bytes_written": pair(cost.written, "written")},  # fmt: skip
        "parameters": {
            "elements": params.count, "bytes": params.bytes,
            "by_type": [{"kind": k, "type": _elem(e), "elements": v[0], "bytes": v[1]}
                        for (k, e), v in sorted(params.by_type.items())],
        },  # fmt: skip
        "peak_activations": {
            "candidates": [{"formula": str(x), "node": node_label(n) if n is not None else None}
                           for x, n in cost.peak.candidates],
            "value": peak_value, "node": node_label(peak_node) if peak_node is not None else None,
            "with_weights": peak_value + params.bytes if peak_value is not None else None,
            "unsized_values": cost.peak.unsized, "why_unknown": cost.peak.why or None,
        },  # fmt: skip
        "unknown": [{"node": node_label(n.node), "op": n.node.qualified_op, "why": n.note} for n in cost.unknown()],
        "by": by,
        "rows": [],
    }
    for r in ordered(rows(cost, by, depth), env, cost.symbols):
        data["rows"].append({
            "name": r.name, "nodes": r.nodes, "flops": str(r.flops), "flops_value": num(r.flops, "flops", r.name),
            "macs": str(r.macs), "macs_value": num(r.macs, "macs", r.name), "bytes_read": str(r.read),
            "bytes_written": str(r.written), "parameter_bytes": r.params, "unknown_parts": r.flops.unknown,
            **({"note": r.note} if by == "node" else {}),
        })  # fmt: skip
    return data


def _elem(e: int) -> str:
    from graphlsp.infer.types import elem_name

    return elem_name(e)


def format_json(cost: ModelCost, by: str, env: Mapping[str, int], depth: int = 2,
                bound: ModelCost | None = None) -> str:  # fmt: skip
    import json

    return json.dumps(to_data(cost, by, env, depth, bound), indent=2) + "\n"


def format_csv(cost: ModelCost, by: str, env: Mapping[str, int], depth: int = 2,
               bound: ModelCost | None = None) -> str:  # fmt: skip
    import csv
    import io

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([by, "nodes", "flops", "flops_value", "macs", "macs_value", "bytes_read", "bytes_written",
                "parameter_bytes"])  # fmt: skip
    for r in to_data(cost, by, env, depth, bound)["rows"]:
        w.writerow([r["name"], r["nodes"], r["flops"], r["flops_value"], r["macs"], r["macs_value"],
                    r["bytes_read"], r["bytes_written"], r["parameter_bytes"]])  # fmt: skip
    return out.getvalue()


def _with_value(formula: str, value: int | None, unit: str) -> str:
    if value is None:
        return formula
    shown = human(value, unit)
    return f"{formula}  = {value:,}" + (f" ({shown})" if shown != f"{value}" and shown != f"{value} {unit}" else "")


def summary_lines(cost: ModelCost, env: Mapping[str, int], bound: ModelCost | None = None) -> list[tuple[str, str]]:
    """(label, text) lines of the totals: what the text report starts with."""
    num = numbers(cost, env, "op", 1, bound)
    lines = [
        ("FLOPs", _with_value(_formula(cost.flops), num(cost.flops, "flops", None), "FLOPs")),
        ("MACs", _with_value(_formula(cost.macs), num(cost.macs, "macs", None), "MACs")),
    ]
    p = cost.params
    kinds = []
    for (kind, e), (count, size) in sorted(p.by_type.items()):
        kinds.append(f"{kind}s {_elem(e)} {count:,} ({human(size, 'B')})")
    lines.append(("parameters", f"{p.count:,} elements, {p.bytes:,} bytes ({human(p.bytes, 'B')})"
                  + (f": {'; '.join(kinds)}" if kinds else "")))  # fmt: skip
    lines.append(("bytes read", _with_value(_formula(cost.read), num(cost.read, "read", None), "B")))
    lines.append(("bytes written", _with_value(_formula(cost.written), num(cost.written, "written", None), "B")))
    peak = cost.peak
    if peak.candidates:
        if len(peak.candidates) == 1:
            x, node = peak.candidates[0]
            text = f"{x} at {node_label(node) if node is not None else 'the inputs'}"
        else:
            text = "max(" + ", ".join(f"{x} at {node_label(n) if n else 'the inputs'}"
                                      for x, n in peak.candidates) + ")"  # fmt: skip
        value, at = peak_number(cost, env, bound)
        if value is not None:
            text += f"  = {value:,} ({human(value, 'B')}) at {node_label(at) if at else 'the inputs'}; with the " \
                    f"weights {human(value + p.bytes, 'B')}"  # fmt: skip
        if peak.unsized:
            text += f" ({peak.unsized} value{'s' if peak.unsized != 1 else ''} of unknown size left out)"
    else:
        text = f"unknown: {peak.why}"
    lines.append(("peak activations", text))
    return lines


def format_text(cost: ModelCost, by: str, env: Mapping[str, int], path: str, depth: int = 2,
                bound: ModelCost | None = None) -> str:  # fmt: skip
    shown = ", ".join(f"{k}={v}" for k, v in env.items() if k in cost.symbols)
    at = f" (bound: {shown})" if shown else " (at the sizes given)" if env or bound is not None else ""
    out = [f"{path}: {len(cost.nodes)} nodes" + (f"; dims {', '.join(cost.symbols)}" if cost.symbols else "") + at]
    width = 17
    for label, text in summary_lines(cost, env, bound):
        out.append(f"  {label:<{width}}{text}")
    unknown = cost.unknown()
    if unknown:
        ops: dict[str, str] = {}
        for n in unknown:
            ops.setdefault(n.node.qualified_op, n.note)
        out.append(f"  {len(unknown)} node{'s' if len(unknown) != 1 else ''} of unknown cost (the totals are at "
                   f"least the formulas): " + "; ".join(f"{op} ({why})" for op, why in ops.items()))  # fmt: skip
    num = numbers(cost, env, by, depth, bound)
    table = ordered(rows(cost, by, depth), env, cost.symbols)
    total = cost.flops.value({s: env.get(s, SORT_SIZE) for s in cost.symbols})
    heading = {"scope": f"by name scope (depth {depth})", "op": "by op type", "node": "by node"}[by]
    unbound = [s for s in cost.symbols if s not in env]
    order = f", ordered as if {', '.join(unbound)} = {SORT_SIZE}" if unbound else ""
    out.append(f"\n{heading}, largest FLOPs first{order}:")
    name_w = min(max((len(r.name) for r in table), default=4), 60)
    for r in table:
        share = ""
        v = r.flops.value({s: env.get(s, SORT_SIZE) for s in cost.symbols})
        if v is not None and total:
            share = f"{100 * v / total:5.1f}%"
        value = num(r.flops, "flops", r.name)
        number = f"  = {human(value, 'FLOPs')}" if value is not None else ""
        note = f"  [{r.note}]" if r.note else ""
        count = f"{r.nodes} node{'s' if r.nodes != 1 else ''}" if by != "node" else ""
        out.append(f"  {r.name:<{name_w}}  {share:>6}  {_formula(r.flops)}{number}  {count}{note}".rstrip())
    return "\n".join(out) + "\n"




# ---- the editor's lines (graphlsp/query.py: hovers and the graph header's inlay hint)
def analysis_cost(a: Any) -> ModelCost:
    """The cost of an analysed document, kept in its cache until the next edit."""
    from graphlsp.cost.model import kept_cost

    got = a.cache.get("cost")
    if not isinstance(got, ModelCost):
        got = a.cache["cost"] = kept_cost(a.model, a.refiner)
    return got


def node_index(cost: ModelCost) -> dict[Node, NodeCost]:
    out: dict[Node, NodeCost] = {}
    stack = list(cost.nodes)
    while stack:
        n = stack.pop()
        out.setdefault(n.node, n)
        stack.extend(n.body)
    return out


def node_markdown(a: Any, node: Node) -> str:
    """The cost section of a node's hover: FLOPs (MACs), how they were counted, bytes read and written."""
    cost = analysis_cost(a)
    index = a.cache.get("cost_index")
    if not isinstance(index, dict):
        index = a.cache["cost_index"] = node_index(cost)
    n = index.get(node)
    if n is None:
        return ""
    lines = [f"FLOPs `{show(n.flops)}`" + (f", MACs `{show(n.macs)}`" if n.macs not in (0, None) else "")]
    if n.note:
        lines.append(f"counted: {n.note}")
    lines.append(f"reads `{show(n.read)}` bytes, writes `{show(n.written)}`")
    return "**cost**: " + "; ".join(lines)


def value_markdown(a: Any, value: Any) -> str:
    """A value's size in bytes; for a graph output, what computing it costs (its producer's FLOPs)."""
    from graphlsp.cost.formula import value_bytes

    size = value_bytes(a.refiner.type_of(value))
    out = f"size: `{show(size)}` bytes" if size is not None else ""
    if value.graph_outputs and value.producer is not None:
        node = node_markdown(a, value.producer)
        if node:
            out += f"\n\ngraph output of `{value.producer.op_type}`, whose {node}"
    return out


HEADER_WIDTH = 60  # characters of a formula the header's hint shows; the rest is in `graphlsp cost`


def header_label(a: Any) -> str:
    """The model's totals as the graph header's inlay hint: ` FLOPs 65792*batch*seq · 32.90 k params (128.50 KiB)`
    (the peak is left to `graphlsp cost`: the hint is asked for at every edit)."""
    cost = analysis_cost(a)
    flops = _formula(cost.flops)
    if len(flops) > HEADER_WIDTH:
        flops = flops[: HEADER_WIDTH - 1] + "…"
    return f" FLOPs {flops} · {human(cost.params.count)} params ({human(cost.params.bytes, 'B')})"
