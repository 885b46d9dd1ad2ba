"""Two analysed models compared: the header, nodes, inferred types, initializers, findings, contracts, kernels.

The result is plain data (`Report.data`, what `--format json` prints): every list is complete; the text output
shortens long ones. A side may be missing (git's /dev/null for a file added or deleted): then everything of the
other side is added or removed.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlsp.diff.match import DIGEST_CAP, GraphMatch, attr_key, match_graph
from graphlsp.graph.core import Attr, Graph, Model, Node, Value
from graphlsp.graph.tensor import Tensor, TensorError
from graphlsp.infer.types import declared_type, type_str

if TYPE_CHECKING:
    from graphlsp.diff.load import Side
    from graphlsp.infer.refiner import ShapeRefiner
    from graphlsp.lint.config import Settings

CHUNK = 1 << 20  # elements compared at a time: a large weight is never held twice as float64
CONTRACTS = ("GL320", "GL321")


class Report:
    """What changed; `data` is JSON-ready, `equal` whether nothing did."""

    __slots__ = ("data", "matches")

    def __init__(self, data: dict[str, Any], matches: list[GraphMatch]) -> None:
        self.data = data
        self.matches = matches

    @property
    def equal(self) -> bool:
        return count_changes(self.data) == 0


def count_changes(data: dict[str, Any]) -> int:
    nodes, inits, fn = data["nodes"], data["initializers"], data["functions"]
    lists = [data["header"], data["inputs"], data["outputs"], data["values"], nodes["added"], nodes["removed"],
             nodes["changed"], nodes["moved"], nodes["renamed"], inits["added"], inits["removed"], inits["changed"],
             data["findings"]["appeared"], data["findings"]["gone"], data["findings"]["changed"],
             data["contracts"]["appeared"],
             data["contracts"]["gone"], fn["added"], fn["removed"]]  # fmt: skip
    return sum(len(x) for x in lists)


def node_ref(node: Node) -> dict[str, Any]:
    return {"graph": node.graph.path, "name": node.name or "", "op": node.qualified_op, "index": node.index}


def node_label(node: Node) -> str:
    return f"{node.name or f'{node.op_type}_{node.index}'} ({node.qualified_op})"


def show_value(v: Any, limit: int = 60) -> str:
    """An attribute value in a line: lists shortened, tensors by type and shape."""
    if isinstance(v, Tensor):
        from graphlsp.infer.types import elem_name

        return f"{elem_name(v.dtype)}[{','.join(str(d) for d in v.shape)}] tensor"
    if isinstance(v, float):
        text = repr(v)
    elif isinstance(v, bytes):
        text = repr(v.decode("utf-8", "replace"))
    elif isinstance(v, str):
        text = repr(v)
    elif isinstance(v, list | tuple):
        text = "[" + ", ".join(show_value(x, 20) for x in v) + "]"
    else:
        text = str(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def data_difference(a: Tensor, b: Tensor) -> tuple[bool | None, float | None]:
    """(equal, max absolute difference) of two tensors of one shape; no difference when they are no numbers
    (strings); equal None when a side's data cannot be read. Read a chunk at a time (external data: mmap)."""
    try:
        x = np.asarray(a.numpy()).reshape(-1)
        y = np.asarray(b.numpy()).reshape(-1)
    except (TensorError, ValueError, TypeError, OSError):
        return None, None
    if x.size != y.size:
        return False, None
    numeric = x.dtype.kind in "biuf" and y.dtype.kind in "biuf"
    if x.dtype == y.dtype and x.dtype.kind != "O":
        same = True
        for i in range(0, x.size, CHUNK):
            if x[i : i + CHUNK].tobytes() != y[i : i + CHUNK].tobytes():
                same = False
                break
        if same:
            return True, 0.0
    elif not numeric:
        return bool(x.tolist() == y.tolist()), None
    if not numeric:
        return False, None
    worst = 0.0
    for i in range(0, x.size, CHUNK):
        d = np.abs(x[i : i + CHUNK].astype(np.float64) - y[i : i + CHUNK].astype(np.float64))
        if d.size:
            m = np.nanmax(d) if not np.isnan(d).all() else float("nan")
            worst = max(worst, float(m))
    return False, worst


def _tensor_type(t: Tensor) -> str:
    from graphlsp.infer.types import elem_name

    return f"{elem_name(t.dtype)}[{','.join(str(d) for d in t.shape)}]"


class _Comparer:
    def __init__(self, old: Side, new: Side, settings: Settings) -> None:
        self.old, self.new = old, new
        self.settings = settings
        self.matches: list[GraphMatch] = []
        self.node_map: dict[Node, Node] = {}
        self.changed_nodes: dict[str, list[dict[str, Any]]] = {"added": [], "removed": [], "changed": [], "moved": [],
                                                               "renamed": []}  # fmt: skip
        self.values: list[dict[str, Any]] = []
        self.inits: dict[str, Any] = {"added": [], "removed": [], "changed": [], "unread": [], "unchanged": 0}
        self.matched = 0
        self.by_structure = 0

    # ---- types
    def inferred(self, side: Side, v: Value) -> str:
        refiner: ShapeRefiner = side.analysis.refiner  # type: ignore[union-attr]
        return type_str(refiner.type_of(v))

    # ---- graphs
    def graph(self, a: Graph | None, b: Graph | None) -> None:
        if a is None or b is None:
            for n in (a.nodes if a is not None else []):
                self.changed_nodes["removed"].append(node_ref(n))
            for n in (b.nodes if b is not None else []):
                self.changed_nodes["added"].append(node_ref(n))
            if a is not None:
                self.inits["removed"] += [self.init_ref(a, v) for v in a.initializers.values()]
            if b is not None:
                self.inits["added"] += [self.init_ref(b, v) for v in b.initializers.values()]
            return
        m = match_graph(a, b)
        self.matches.append(m)
        self.node_map.update(m.nodes)
        back = m.reverse()
        for n in a.nodes:
            if n not in m.nodes:
                self.changed_nodes["removed"].append(node_ref(n))
        for n in b.nodes:
            if n not in back:
                self.changed_nodes["added"].append(node_ref(n))
        changed: set[Node] = set()
        for x, y in m.nodes.items():
            self.matched += 1
            if m.how[x] == "structure":
                self.by_structure += 1
            if (x.name or "") != (y.name or ""):
                self.changed_nodes["renamed"].append({"old": node_ref(x), "new": node_ref(y)})
            changes = self.node_changes(m, x, y)
            if changes:
                changed.add(x)
                self.changed_nodes["changed"].append({"old": node_ref(x), "new": node_ref(y), "changes": changes})
            self.output_types(x, y)
            for attr, graphs in x.subgraphs.items():
                others = y.subgraphs.get(attr, [])
                for ga, gb in zip(graphs, others, strict=False):
                    self.graph(ga, gb)
        for x in _moved(a, m):
            if x not in changed:
                self.changed_nodes["moved"].append({"old": node_ref(x), "new": node_ref(m.nodes[x])})
        self.initializers(a, b, m)

    def node_changes(self, m: GraphMatch, x: Node, y: Node) -> list[str]:
        out = []
        if (x.op_type, x.overload) != (y.op_type, y.overload):
            out.append(f"op: {x.qualified_op} -> {y.qualified_op}")
        if x.domain != y.domain:
            out.append(f"domain: {x.domain or 'ai.onnx'} -> {y.domain or 'ai.onnx'}")
        vx = x.schema.since_version if x.schema is not None else x.version
        vy = y.schema.since_version if y.schema is not None else y.version
        if vx != vy and x.op_type == y.op_type:
            out.append(f"op version: {x.op_type}({vx}) -> {y.op_type}({vy})")
        for name in sorted(set(x.attributes) | set(y.attributes)):
            ax, ay = x.attributes.get(name), y.attributes.get(name)
            if ax is not None and ay is not None and ax.kind in ("graph", "graphs") and ay.kind == ax.kind:
                continue  # the subgraphs are compared node by node
            if ax is None:
                out.append(f"attribute {name} added: {show_value(ay.value) if ay is not None else ''}")
            elif ay is None:
                out.append(f"attribute {name} removed (was {show_value(ax.value)})")
            elif attr_key(x, ax) != attr_key(y, ay):
                out.append(self.attr_change(name, ax, ay))
            elif isinstance(ax.value, Tensor) and isinstance(ay.value, Tensor) and ax.value.nbytes > DIGEST_CAP:
                equal, _ = data_difference(ax.value, ay.value)  # too large for the key: its data compared here
                if equal is not True:
                    out.append(self.attr_change(name, ax, ay))
        for i in range(max(len(x.inputs), len(y.inputs))):
            va = x.inputs[i] if i < len(x.inputs) else None
            vb = y.inputs[i] if i < len(y.inputs) else None
            if self.source_old(m, va) != self.source_new(m, vb):
                out.append(_input_change(i, va, vb))
        if len(x.outputs) != len(y.outputs):
            out.append(f"outputs: {len(x.outputs)} -> {len(y.outputs)}")
        return out

    def attr_change(self, name: str, ax: Attr, ay: Attr) -> str:
        if isinstance(ax.value, Tensor) and isinstance(ay.value, Tensor):
            ta, tb = ax.value, ay.value
            if (ta.dtype, ta.shape) != (tb.dtype, tb.shape):
                return f"attribute {name}: {_tensor_type(ta)} -> {_tensor_type(tb)}"
            equal, worst = data_difference(ta, tb)
            diff = f", max abs diff {worst:.6g}" if worst is not None else ""
            what = "data not read" if equal is None else "other data"
            return f"attribute {name}: {what} ({_tensor_type(ta)}{diff})"
        return f"attribute {name}: {show_value(ax.value)} -> {show_value(ay.value)}"

    def source_old(self, m: GraphMatch, v: Value | None) -> Any:
        if v is None:
            return None
        p = v.producer
        if p is not None and p.graph is m.old:
            q = m.nodes.get(p)
            return ("node", id(q), v.output_index) if q is not None else ("removed", id(p))
        if v.name in m.old.initializers and m.old.initializers[v.name] is v:
            return ("value", m.initializers.get(v.name, "\0" + v.name))
        if v.graph is m.old:
            return ("value", m.inputs.get(v.name, "\0" + v.name))
        return ("outer", v.name)

    def source_new(self, m: GraphMatch, v: Value | None) -> Any:
        if v is None:
            return None
        p = v.producer
        if p is not None and p.graph is m.new:
            return ("node", id(p), v.output_index)
        if v.graph is m.new:
            return ("value", v.name)
        return ("outer", v.name)

    def output_types(self, x: Node, y: Node) -> None:
        for va, vb in zip(x.outputs, y.outputs, strict=False):
            if va is None or vb is None:
                continue
            ta, tb = self.inferred(self.old, va), self.inferred(self.new, vb)
            if ta != tb:
                self.values.append({"name": vb.name, "old_name": va.name, "node": node_ref(y), "old": ta, "new": tb})

    def initializers(self, a: Graph, b: Graph, m: GraphMatch) -> None:
        paired = set(m.initializers.values())
        for name, v in a.initializers.items():
            if name not in m.initializers:
                self.inits["removed"].append(self.init_ref(a, v))
        for name, v in b.initializers.items():
            if name not in paired:
                self.inits["added"].append(self.init_ref(b, v))
        for name_a, name_b in m.initializers.items():
            va, vb = a.initializers[name_a], b.initializers[name_b]
            ta, tb = va.tensor, vb.tensor
            if ta is None or tb is None:
                continue
            entry: dict[str, Any] = {"graph": b.path, "name": name_b, "old_name": name_a, "old": _tensor_type(ta),
                                     "new": _tensor_type(tb)}  # fmt: skip
            if ta.shape != tb.shape:
                entry["change"] = "shape"
            else:
                equal, worst = data_difference(ta, tb)
                if equal is None:  # not proved either way: said, not counted as a difference
                    self.inits["unread"].append(entry)
                    continue
                if equal and ta.dtype == tb.dtype:
                    if name_a != name_b:
                        entry["change"] = "renamed"
                        self.inits["changed"].append(entry)
                    else:
                        self.inits["unchanged"] += 1
                    continue
                entry["change"] = "type" if ta.dtype != tb.dtype else "data"
                entry["max_abs_diff"] = worst
            self.inits["changed"].append(entry)

    @staticmethod
    def init_ref(g: Graph, v: Value) -> dict[str, Any]:
        return {"graph": g.path, "name": v.name, "type": _tensor_type(v.tensor) if v.tensor is not None else "?"}

    # ---- the header
    def header(self, a: Model | None, b: Model | None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if a is None or b is None:
            return [{"what": "file", "old": "(none)" if a is None else self.old.name,
                     "new": "(none)" if b is None else self.new.name}]  # fmt: skip
        if a.ir_version != b.ir_version:
            out.append({"what": "ir_version", "old": a.ir_version, "new": b.ir_version})
        for domain in sorted(set(a.opset_imports) | set(b.opset_imports)):
            x, y = a.opset_imports.get(domain), b.opset_imports.get(domain)
            if x != y:
                out.append({"what": f"opset {domain or 'ai.onnx'}", "old": x, "new": y})
        if a.producer != b.producer and a.producer and b.producer:  # ONNX text does not carry it to the IR
            out.append({"what": "producer", "old": a.producer, "new": b.producer})
        return out

    def signature(self, a: Graph | None, b: Graph | None, outputs: bool, m: GraphMatch | None) -> list[dict[str, Any]]:
        """The graph inputs (declared types) or outputs (declared and inferred) that changed."""
        if a is None or b is None:
            return []

        def declared(g: Graph) -> dict[str, str]:
            if outputs:
                return {i.name: type_str(declared_type(i.type)) for i in g.output_infos}
            return {v.name: type_str(declared_type(v.type)) for v in g.inputs if not v.is_initializer}

        da, db = declared(a), declared(b)
        pairs = dict(m.inputs) if (m is not None and not outputs) else {}
        if outputs:
            names_b = list(db)
            pairs = {n: n for n in da if n in db}
            rest_a = [n for n in da if n not in db]
            rest_b = [n for n in names_b if n not in da]
            if len(rest_a) == len(rest_b):
                pairs.update(zip(rest_a, rest_b, strict=True))
        out: list[dict[str, Any]] = []
        for name, ty in da.items():
            other = pairs.get(name)
            if other is None or other not in db:
                out.append({"name": name, "change": "removed", "old": ty, "new": None})
                continue
            entry = {"name": other, "old_name": name, "old": ty, "new": db[other]}
            if outputs:
                va, vb = a.lookup(name), b.lookup(other)
                if va is not None and vb is not None:
                    entry["old_inferred"] = self.inferred(self.old, va)
                    entry["new_inferred"] = self.inferred(self.new, vb)
            if ty != db[other] or name != other or entry.get("old_inferred") != entry.get("new_inferred"):
                entry["change"] = "renamed" if ty == db[other] and name != other else "type"
                out.append(entry)
        for name, ty in db.items():
            if name not in pairs.values():
                out.append({"name": name, "change": "added", "old": None, "new": ty})
        return out

    # ---- findings, contracts, kernels
    def findings(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        a_paths = _paths(self.old.model)
        b_paths = _paths(self.new.model)

        a_lines = _nodes_by_line(self.old.model)
        b_lines = _nodes_by_line(self.new.model)

        def key_old(d: Any) -> Any:
            n = _node_at(a_paths, d.graph, d.node_index) or (a_lines.get(d.line - 1) if d.line else None)
            if n is not None:
                m = self.node_map.get(n)
                return (d.code, ("node", m.graph.path, m.index) if m is not None else ("gone", d.node_index))
            return (d.code, d.message)

        def key_new(d: Any) -> Any:
            n = _node_at(b_paths, d.graph, d.node_index) or (b_lines.get(d.line - 1) if d.line else None)
            if n is not None:
                return (d.code, ("node", n.graph.path, n.index))
            return (d.code, d.message)

        # hints are for the editor (check leaves them out unless asked): not what changed in a model
        olds = [(key_old(d), d) for d in self.old.diagnostics if d.severity != "hint"]
        news = [(key_new(d), d) for d in self.new.diagnostics if d.severity != "hint"]
        left = Counter(k for k, _ in olds)
        right = Counter(k for k, _ in news)
        gone, appeared = [], []
        seen: Counter[Any] = Counter()
        kept: dict[Any, list[Any]] = {}
        for k, d in olds:
            seen[k] += 1
            if seen[k] > right.get(k, 0):
                gone.append(_diag(d))
            else:
                kept.setdefault(k, []).append(d)
        seen.clear()
        changed = []
        for k, d in news:
            seen[k] += 1
            if seen[k] > left.get(k, 0):
                appeared.append(_diag(d))
                continue
            before = kept[k][seen[k] - 1]
            # the same finding on the same node, saying something else (a limit that moved); a renamed node's
            # message names other values, which is no change of the finding
            if before.message != d.message and (before.node or "") == (d.node or ""):
                changed.append({"old": _diag(before), "new": _diag(d)})
        findings = {"appeared": appeared, "gone": gone, "changed": changed, "old": len(olds), "new": len(news)}
        coverage = self.coverage()
        contracts = self.contracts(appeared, gone, changed)
        return findings, coverage, contracts

    def coverage(self) -> dict[str, Any]:
        """Per target: what the kernel check (GL701-GL703) counts, before and after."""
        out: dict[str, Any] = {}
        for target in self.settings.targets:
            out[target] = {"old": _coverage_count(self.old, target), "new": _coverage_count(self.new, target)}
        return out

    def contracts(self, appeared: list[dict[str, Any]], gone: list[dict[str, Any]],
                  changed: list[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
        """What the models require of their input sizes: the requirements (as `graphlsp shapes` lists them) and the
        GL320/GL321 findings that came or went."""
        from graphlsp.infer.contracts import input_requirements

        def reqs(side: Side, rename: dict[str, str]) -> Counter[str]:
            if side.analysis is None or side.model is None or side.model.graph is None:
                return Counter()
            return Counter(f"{rename.get(r.input, r.input)} dim {r.dim} ({r.symbol}): {r.requirement}"
                           for r in input_requirements(side.analysis.refiner))  # fmt: skip

        rename = self.matches[0].inputs if self.matches else {}
        a, b = reqs(self.old, rename), reqs(self.new, {})
        return {"appeared": sorted((b - a).elements()), "gone": sorted((a - b).elements()),
                "findings_appeared": [d for d in appeared if d["code"] in CONTRACTS],
                "findings_gone": [d for d in gone if d["code"] in CONTRACTS],
                "findings_changed": [c for c in changed if c["new"]["code"] in CONTRACTS]}  # fmt: skip

    # ---- cost
    def cost(self) -> dict[str, Any]:
        """The cost formulas (graphlsp/cost) that changed: FLOPs, MACs, bytes read and written as formulas in the
        input dims before, after and their difference; parameters (elements, bytes); the activation peak."""
        from graphlsp.cost.formula import Total
        from graphlsp.cost.model import ModelCost, model_cost

        def of(side: Side) -> ModelCost | None:
            if side.analysis is None or side.model is None or side.model.graph is None:
                return None
            try:
                return model_cost(side.model, side.analysis.refiner)
            except Exception:  # a cost rule's bug must not cost the diff: the cost is then left out
                return None

        a, b = of(self.old), of(self.new)
        if a is None or b is None:
            return {}
        out: dict[str, Any] = {}
        for what in ("flops", "macs", "read", "written"):
            x, y = getattr(a, what), getattr(b, what)
            if str(x) == str(y) and x.unknown == y.unknown:
                continue
            delta = Total()
            delta.poly = {m: y.poly.get(m, 0) - x.poly.get(m, 0) for m in {*x.poly, *y.poly}}
            out[what] = {"old": str(x), "new": str(y), "delta": str(delta), "old_unknown": x.unknown,
                         "new_unknown": y.unknown}  # fmt: skip
        if (a.params.count, a.params.bytes) != (b.params.count, b.params.bytes):
            out["parameters"] = {"old": [a.params.count, a.params.bytes], "new": [b.params.count, b.params.bytes]}

        def peak(c: ModelCost) -> str:
            shown = [str(x) for x, _ in c.peak.candidates]
            return shown[0] if len(shown) == 1 else f"max({', '.join(shown)})" if shown else "unknown"

        if peak(a) != peak(b):
            out["peak"] = {"old": peak(a), "new": peak(b)}
        return out

    # ---- the whole
    def run(self) -> Report:
        a, b = self.old.model, self.new.model
        ga = a.graph if a is not None else None
        gb = b.graph if b is not None else None
        header = self.header(a, b)
        self.graph(ga, gb)
        m = self.matches[0] if self.matches else None
        functions: dict[str, list[str]] = {"added": [], "removed": []}
        if a is not None and b is not None:
            for key, fn in a.functions.items():
                other = b.functions.get(key)
                if other is None:
                    functions["removed"].append(":".join(p for p in key if p))
                else:
                    self.graph(fn.body, other.body)
            functions["added"] = [":".join(p for p in k if p) for k in b.functions if k not in a.functions]
        findings, coverage, contracts = self.findings()
        data: dict[str, Any] = {
            "old": self.old.name, "new": self.new.name, "header": header,
            "inputs": self.signature(ga, gb, False, m), "outputs": self.signature(ga, gb, True, m),
            "nodes": {**self.changed_nodes, "matched": self.matched, "matched_by_structure": self.by_structure},
            "values": self.values, "initializers": self.inits, "findings": findings, "coverage": coverage,
            "contracts": contracts, "functions": functions, "cost": self.cost(),
        }  # fmt: skip
        data["equal"] = count_changes(data) == 0
        return Report(data, self.matches)


def _input_change(i: int, va: Value | None, vb: Value | None) -> str:
    def name(v: Value | None) -> str:
        return v.name if v is not None else "(none)"

    if va is None or vb is None or va.name != vb.name:
        return f"input {i}: {name(va)} -> {name(vb)}"

    def origin(v: Value) -> str:
        return node_label(v.producer) if v.producer is not None else v.kind

    return f"input {i} ({va.name}): from {origin(va)} -> from {origin(vb)}"


def _coverage_count(side: Side, target: str) -> dict[str, int]:
    """On one target: the nodes without a kernel (GL701), on CPU instead of the target's GPU (GL702), run in float32
    through inserted Casts (float16 on CPU), and whether the runtime is too old for the model (GL703)."""
    out = {"no_kernel": 0, "cpu_fallback": 0, "float32_casts": 0, "too_old": 0}
    if side.analysis is None or side.model is None or side.model.graph is None:
        return out
    from graphlsp.lint.deployment import DeploymentCheck
    from graphlsp.runtime.kernels import TargetError

    try:
        check = DeploymentCheck(side.model, side.analysis.refiner, [target])
        out["too_old"] = len(check.model_findings())
        for node in side.model.graph.all_nodes():
            codes = {("float32_casts" if v.rescued else "cpu_fallback" if v.code == "GL702" else "no_kernel")
                     for v in check.verdicts(node) if v.code in ("GL701", "GL702")}  # fmt: skip
            for c in codes:
                out[c] += 1
    except TargetError:
        pass
    return out


def _moved(a: Graph, m: GraphMatch) -> list[Node]:
    """Matched nodes whose place among the other matched nodes changed: those off a longest run kept in order."""
    from bisect import bisect_left

    pairs = [(x, m.nodes[x].index) for x in a.nodes if x in m.nodes]
    tails: list[int] = []
    tail_at: list[int] = []
    prev = [-1] * len(pairs)
    for i, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(i)
        else:
            tails[k] = j
            tail_at[k] = i
        prev[i] = tail_at[k - 1] if k > 0 else -1
    keep = set()
    i = tail_at[-1] if tail_at else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return [x for i, (x, _) in enumerate(pairs) if i not in keep]


def _nodes_by_line(model: Model | None) -> dict[int, Node]:
    """A text model's nodes by the 0-based line they start on (a finding of a text is placed by its line)."""
    out: dict[int, Node] = {}
    if model is None or not model.source.text:
        return out
    for g in model.graphs():
        for n in g.nodes:
            span = n.span
            line = model.source.line_of(span[0]) if span is not None else None
            if line is not None:
                out.setdefault(line, n)
    return out


def _paths(model: Model | None) -> dict[str, Graph]:
    return {g.path: g for g in model.graphs()} if model is not None else {}


def _node_at(paths: dict[str, Graph], graph: str | None, index: int | None) -> Node | None:
    if graph is None or index is None:
        return None
    g = paths.get(graph)
    return g.nodes[index] if g is not None and 0 <= index < len(g.nodes) else None


def _diag(d: Any) -> dict[str, Any]:
    out = {"code": d.code, "severity": d.severity, "message": d.message, "node": d.node, "op": d.op,
           "graph": d.graph}  # fmt: skip
    if d.line is not None:
        out["line"] = d.line
    return out


def compare(old: Side, new: Side, settings: Settings) -> Report:
    """What changed from `old` to `new`."""
    return _Comparer(old, new, settings).run()
