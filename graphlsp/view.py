"""A binary model as a read-only text view: what the editor shows for a `.onnx` file.

The view is the model in ONNX text, one node per line, initializers with type and shape and their data
summarised (`graphlsp.syntax.printer`, summary mode). It is analysed as a text document, so every language
feature works on it as on a text file, with one difference: the analysis takes the binary's own tensors (whose
data the view does not print), so values, folds and findings are those of the binary. Findings only the binary
reader makes (external data, negative dims, unused initializers) are placed on the view's matching line.

A view is rendered once per version of the file on disk (its size and modification time).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from graphlsp.analysis import Analysis
from graphlsp.graph.core import Graph, Model, Node, NodeOrigin
from graphlsp.graph.findings import Finding
from graphlsp.infer.sizes import InputSizes

HEADER = "# graphlsp: a read-only view of {name} (binary ONNX); weights are summarised, not shown\n"
# what a text file is told and a binary is not: an exporter's unused outputs and repeated node names are not
# something its user can act on (the binary reader does not report them either)
TEXT_ONLY = frozenset({"GL206", "GL207"})


@dataclass(slots=True)
class BinaryView:
    path: str
    stamp: tuple[int, int]  # (size, mtime_ns) of the file the view was rendered from
    text: str
    analysis: Analysis
    findings: list[Finding] = field(default_factory=list)  # the binary reader's, placed on the view
    error: str = ""  # why the model could not be read (the view then says so)
    # the binary's nodes that say where they come from (graph.core.ExportedNode), by the view's graph path and index
    origins: dict[tuple[str, int], NodeOrigin] = field(default_factory=dict)

    def origin_of(self, node: Node) -> NodeOrigin | None:
        """The binary node's origin for a node of the view (None when its exporter wrote no metadata)."""
        return self.origins.get((node.graph.path, node.index))

    def all_findings(self) -> list[Finding]:
        """What `graphlsp check` says of the binary, placed on the view."""
        # the view's text says some of what the binary reader said, elsewhere and at more length (`the model
        # imports no opset: add a header such as ...`): the reader's finding stands for both, as in `check`
        said = [(f.code, f.message) for f in self.findings]
        own = [f for f in self.analysis.findings() if f.code not in TEXT_ONLY
               and not any(f.code == code and f.message.startswith(message) for code, message in said)]  # fmt: skip
        out = own + self.findings
        out.sort(key=lambda f: (f.start, f.code))
        return out

    def current(self) -> bool:
        """Whether the file on disk is still the one the view was rendered from."""
        try:
            return _stamp(self.path) == self.stamp
        except OSError:
            return False


def _stamp(path: str) -> tuple[int, int]:
    """Raises OSError (also for a path with a NUL, which names no file: os.stat raises ValueError)."""
    try:
        st = os.stat(path)
    except ValueError as e:
        raise OSError(errno.ENOENT, f"no such file ({e})", path) from None
    return st.st_size, st.st_mtime_ns


def render(path: str, fold_size_cap: int | None = None, sizes: InputSizes | None = None) -> BinaryView:
    """Read a binary model and render its view; an unreadable file gives a view that says why."""
    from graphlsp.binary.read import read_model
    from graphlsp.runner import DEFAULT_CAP
    from graphlsp.syntax.printer import print_model

    cap = fold_size_cap if fold_size_cap is not None else DEFAULT_CAP
    stamp = _stamp(path)
    head = HEADER.format(name=Path(path).name)
    try:
        binary, found = read_model(path)
        text = head + print_model(binary, data="summary")
    except OSError:
        raise
    except Exception as e:  # protobuf's DecodeError, a model the printer cannot write
        message = f"cannot read this binary ONNX model: {type(e).__name__}: {e}"
        text = head + "# " + message.replace("\n", " ") + "\n"
        return BinaryView(path, stamp, text, Analysis(text, cap), [Finding("GL106", message, 0, 0)], message)
    analysis = Analysis(text, cap, adopt=lambda view: adopt_tensors(view, binary), sizes=sizes)
    seen = {(f.code, f.start) for f in analysis.findings()}  # the view's own text reports some of the same
    views: dict[int, Graph] = {}  # once, not once a finding (6,000 findings on 4,000 subgraphs: 65 s)
    origins: dict[tuple[str, int], NodeOrigin] = {}
    for vg, bg in _graph_pairs(analysis.model, binary):
        views.setdefault(id(bg), vg)
        for bn in bg.nodes:
            if bn.origin.metadata:
                origins[(vg.path, bn.index)] = bn.origin
    placed = [p for p in (_place(f, analysis.model, views) for f in found) if (p.code, p.start) not in seen]
    return BinaryView(path, stamp, text, analysis, placed, origins=origins)


def _pairs(view: Graph, binary: Graph) -> list[tuple[Graph, Graph]]:
    """The graphs of the view and of the binary that correspond: the same nodes in the same order."""
    out: list[tuple[Graph, Graph]] = []
    todo = [(view, binary)]
    while todo:  # not recursive: a binary's subgraphs nest as deep as it likes
        v, b = todo.pop()
        out.append((v, b))
        for vn, bn in zip(v.nodes, b.nodes, strict=False):
            for name, graphs in vn.subgraphs.items():
                todo.extend(zip(graphs, bn.subgraphs.get(name, []), strict=False))
    return out


def _graph_pairs(view: Model, binary: Model) -> list[tuple[Graph, Graph]]:
    out = []
    if view.graph is not None and binary.graph is not None:
        out.extend(_pairs(view.graph, binary.graph))
    for key, fn in view.functions.items():
        other = binary.functions.get(key)
        if fn.body is not None and other is not None and other.body is not None:
            out.extend(_pairs(fn.body, other.body))
    return out


def adopt_tensors(view: Model, binary: Model) -> None:
    """Give the view's model the binary's tensors: initializers by name, tensor attributes node by node."""
    for vg, bg in _graph_pairs(view, binary):
        for name, v in vg.initializers.items():
            b = bg.initializers.get(name)
            if b is not None and b.tensor is not None:
                v.tensor = b.tensor
        for vn, bn in zip(vg.nodes, bg.nodes, strict=False):
            if vn.op_type != bn.op_type:
                break  # the view no longer matches (it cannot: it is printed from the binary)
            for name, a in vn.attributes.items():
                b_attr = bn.attributes.get(name)
                if b_attr is not None and a.kind in ("tensor", "sparse_tensor", "tensors") and b_attr.kind == a.kind:
                    a.value = b_attr.value


def _place(f: Finding, view: Model, views: dict[int, Graph]) -> Finding:
    """A finding of the binary reader, moved onto the view's text: the node's op name, else the value's name.
    `views`: the view's graph of each of the binary's (by id)."""
    where: tuple[int, int] | None = None
    if f.node is not None:
        vg = views.get(id(f.node.graph))
        if vg is not None and f.node.index < len(vg.nodes):
            where = vg.nodes[f.node.index].op_span
    if where is None and view.graph is not None:
        name = f.value or _quoted(f.detail) or _quoted(f.message)
        v = view.graph.lookup(name) if name else None
        where = v.span if v is not None else None
    start, end = where if where is not None else (0, 0)
    return Finding(f.code, f.message, start, end, f.severity, [], f.kind, None, f.detail, f.value)


def _quoted(text: str) -> str:
    """The last 'name' quoted in a detail or message (`graph 'main' input 'x'` -> x)."""
    parts = text.split("'")
    return parts[-2] if len(parts) >= 3 else ""
