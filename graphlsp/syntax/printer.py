"""The IR as ONNX text: the syntax `onnx.parser.parse_model` reads, in the layout of onnx's printer.

`print_model(model)` writes a whole model: header, main graph (signature, then initializers and value_info in the
graph's `<...>` list, one per line), one node per line (a node with subgraphs spans lines), then the model-local
functions. `data="full"` writes every element of every tensor so that the text parses back to the same data
(bit for bit: the numbers are formatted by onnx's own printer, std::to_chars' shortest round-trip form);
`data="summary"` is an editor view: a tensor over a few values keeps its type and shape and loses its data (valid
syntax: `float[512,512] w = ,` is an initializer with no data), with a `#` comment that says what was left out;
`data="digest"` is the same with a digest of each left-out tensor's data in its comment (git's textconv: a changed
weight changes its line).
`node_line(node)` is one node on one line, its tensors and subgraphs elided (a label, not syntax to parse).

What onnx's parser accepts, and where (onnx/defs/parser.cc of onnx 1.23, the same rules as our grammar):

* A name is written bare when it is an identifier `[A-Za-z_][A-Za-z0-9_]*` (ASCII) that is no keyword of the
  text (a type name such as `float`, `seq`, `map`, ..., or `inf`/`nan`), else quoted (`"a.b"`, escapes: `\\"`
  and `\\\\` only; the parser copies the character after a backslash). Quotes are accepted for value names,
  node labels, the main graph's name, function names, function attribute names, `@` references and dims.
* Quotes are NOT accepted for: attribute names, op types, domains and overloads (identifiers only: a node whose
  op cannot be written raises `PrintError`; an attribute whose name cannot be written is left out, with a note),
  the name of a graph-valued attribute (`then_branch: graph = name (...) => (...) {...}`: renamed to an
  identifier, with a note; the name of a subgraph carries no meaning), and the name inside a tensor value
  (`value: tensor = float[2] name {...}`; onnx's printer writes it quoted, which onnx's parser rejects): a tensor
  name that is not an identifier is left out (onnx ignores a Constant's tensor name).
* Tensor data: float/complex64 in float_data, double/complex128 in double_data, int64 in int64_data,
  uint32/uint64 in uint64_data, strings as quoted strings, and every other type as the integers of int32_data
  (the bit patterns of float16/bfloat16/float8/float6, 0/1 for bool, the packed bytes of int4/uint4/float4e2m1
  and of int2/uint2, two or four elements a number, as onnx stores them).

What the text cannot carry (each is said in a `# graphlsp:` comment at the top of the output when it happens):
NaN payloads (only `nan` and `-nan`), strings that are not UTF-8 (written with U+FFFD), sparse tensors (written
dense; a Constant's `sparse_value` becomes `value`), the elements of `tensors`, `graphs` and `type_protos`
attributes (written, and read by our parser, but onnx's parser drops the elements of such lists), tensors whose
data cannot be read (written without data), and external data, which stays in its files: the text keeps the
`["location": ..., "offset": ..., "length": ...]` reference, relative to the model's folder. doc_strings,
metadata and producer_version are not in the IR and are not written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from graphlsp.graph.core import Attr, FuncAttr, Function, Graph, Model, Node, Ref, TypeSpec
from graphlsp.graph.enums import TensorProto
from graphlsp.graph.tensor import Tensor, TensorError
from graphlsp.syntax.semantics import ELEM_TYPES

__all__ = ["PrintError", "is_identifier", "name_text", "node_line", "print_model", "print_with_external_data",
           "type_text"]

INDENT = "   "
SUMMARY_FULL = 16  # summary mode: a tensor of at most this many elements is written in full...
DECODE_CAP = 4096  # ...and one of at most this many bytes is decoded for its summary (min, max); larger: size only
BRIEF_FULL = 8  # node_line: a tensor of at most this many elements is shown whole
BRIEF_SHOWN = 4  # node_line: the first values shown of a small tensor

ELEM_NAMES = {code: name for name, code in ELEM_TYPES.items()}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEYWORDS = frozenset(ELEM_TYPES) | {"seq", "map", "optional", "sparse_tensor", "opaque"}
_FLOAT_WORDS = {"inf", "infinity", "nan"}

_T = TensorProto
# the element types onnx's printer formats itself (raw_data or typed fields): everything numeric but complex,
# the packed sub-byte types and float6
_ONNX_PRINTS = {
    _T.FLOAT, _T.DOUBLE, _T.INT8, _T.UINT8, _T.BOOL, _T.INT16, _T.UINT16, _T.FLOAT16, _T.BFLOAT16, _T.INT32,
    _T.UINT32, _T.INT64, _T.UINT64, _T.FLOAT8E4M3FN, _T.FLOAT8E4M3FNUZ, _T.FLOAT8E5M2, _T.FLOAT8E5M2FNUZ,
    _T.FLOAT8E8M0,
}  # fmt: skip
# the integer types as numpy holds them: onnx's printer writes their elements as decimals joined by ","
_INTEGERS: dict[int, Any] = {
    _T.INT64: np.int64, _T.INT32: np.int32, _T.INT16: np.int16, _T.INT8: np.int8, _T.UINT64: np.uint64,
    _T.UINT32: np.uint32, _T.UINT16: np.uint16, _T.UINT8: np.uint8, _T.BOOL: np.bool_,
}  # fmt: skip
_PACKED = {_T.INT4, _T.UINT4, _T.FLOAT4E2M1, _T.INT2, _T.UINT2}  # int32_data holds the packed bytes
_FLOAT6 = {_T.FLOAT6E2M3, _T.FLOAT6E3M2}
_LIST_KINDS = {"ints", "floats", "strings", "tensors", "graphs", "type_protos", "sparse_tensors"}
_DROPPED_LISTS = {"tensors", "graphs", "type_protos", "sparse_tensors"}


class PrintError(ValueError):
    """The IR holds something ONNX text cannot write at all (an op type that is not an identifier)."""


# ---- names


def is_identifier(name: str) -> bool:
    """Whether `name` may stand unquoted anywhere a name may: an ASCII identifier that is no keyword."""
    return bool(_IDENT.match(name)) and name not in _KEYWORDS and name.lower() not in _FLOAT_WORDS


def quote(text: str) -> str:
    """A quoted string as onnx's parser reads it: `\\` and `"` escaped, everything else as it is."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def name_text(name: str) -> str:
    """A name where onnx's parser accepts a quoted one: bare when it is an identifier, quoted otherwise."""
    return name if is_identifier(name) else quote(name)


def _escapes_only(s: str) -> bool:
    """Whether every surrogate in `s` is a surrogate escape of a byte (U+DC80..U+DCFF, Python's surrogateescape)."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in s)


def _identifier(name: str) -> str:
    """An identifier made of `name` (for the places where onnx's parser takes no quoted name)."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not out or out[0].isdigit():
        out = "_" + out
    return out if is_identifier(out) else out + "_"


# ---- types


def _dims_text(dims: tuple[int | str | None, ...] | None) -> str:
    if dims is None:
        return "[]"  # unknown rank
    if not dims:
        return ""  # a scalar
    return "[" + ",".join("?" if d is None else str(d) if isinstance(d, int) else name_text(d) for d in dims) + "]"


def type_text(ty: TypeSpec | None) -> str | None:
    """A type in ONNX text, or None when the text has no way to write it (no element type, seq of nothing)."""
    if ty is None:
        return None
    kind = ty.kind
    if kind in ("tensor", "sparse_tensor"):
        elem = ELEM_NAMES.get(ty.elem or 0)
        if elem is None:
            return None
        text = elem + _dims_text(ty.dims)
        return text if kind == "tensor" else f"sparse_tensor({text})"
    if kind in ("seq", "optional"):
        arg = type_text(ty.arg)
        return f"{kind}({arg})" if arg is not None else None
    if kind == "map":
        key, value = ELEM_NAMES.get(ty.elem or 0), type_text(ty.arg)
        return f"map({key}, {value})" if key is not None and value is not None else None
    if kind == "opaque":
        domain, name = ty.opaque or ("", "")
        if domain and not all(_IDENT.match(p) for p in domain.split(".")):
            return None
        if name and not _IDENT.match(name):
            return None
        if domain:
            return f"opaque({domain}, {name})" if name else None
        return f"opaque({name})"
    return None


def _tensor_type(t: Tensor) -> str | None:
    elem = ELEM_NAMES.get(t.dtype)
    if elem is None:
        return None
    return elem + ("[" + ",".join(str(d) for d in t.shape) + "]" if t.shape else "")


# ---- numbers


def _float32(v: float) -> str:
    with np.errstate(over="ignore"):
        x = np.float32(v)
    if np.isnan(x):
        return "-nan" if np.signbit(x) else "nan"
    return str(x)  # numpy's shortest round-trip form for float32 ("1.0", "1e-05", "inf")


def _number(x: Any) -> str:
    if isinstance(x, float | np.floating):
        if np.isnan(x):
            return "-nan" if np.signbit(x) else "nan"
        return repr(float(x)) if isinstance(x, float | np.float64) else str(x)
    if isinstance(x, bool | np.bool_):
        return "1" if x else "0"
    return str(x)


def _proto(t: Tensor) -> Any:
    """The tensor's TensorProto (onnx's): its own (binary), its literal's (text), or one made from its elements."""
    import onnx
    from onnx import TensorProto, numpy_helper

    make = getattr(t, "to_proto", None)
    if make is not None:
        p = make()
        if isinstance(p, TensorProto):
            return p
    arr = np.asarray(t.numpy())
    p = numpy_helper.from_array(arr)
    if t.dtype and t.dtype != p.data_type and t.dtype in ELEM_NAMES:
        p = numpy_helper.from_array(arr.astype(onnx.helper.tensor_dtype_to_np_dtype(t.dtype)))
    return p


def _is_sparse(t: Tensor) -> bool:
    if getattr(t, "sparse", False) is True:  # the binary reader's sparse tensor
        return True
    if getattr(t, "msg", None) is not None:  # the binary reader's dense tensor (its `proto` would parse one)
        return False
    p = getattr(t, "proto", None)
    if p is None:
        return False
    from onnx import SparseTensorProto

    return isinstance(p, SparseTensorProto)


def _onnx_numbers(p: Any) -> str:
    """`{...}` of a numeric TensorProto as onnx's printer writes it (std::to_chars: shortest, round-trips)."""
    import onnx.printer
    from onnx import GraphProto

    holder = GraphProto(name="g")
    q = holder.initializer.add()
    q.CopyFrom(p)
    q.name = ""
    q.ClearField("doc_string")
    text = onnx.printer.to_text(holder)
    start = text.index("{")
    end = text.index("}", start)
    body = text[start + 1 : end]
    if "..." in body:  # onnx's printer could not format this type (cannot happen for _ONNX_PRINTS)
        raise TensorError("onnx's printer cannot format this tensor's data")
    return "{" + body + "}"


def _ints(values: Iterable[Any]) -> str:
    return "{" + ",".join(str(int(v)) for v in values) + "}"


# ---- the printer


class _Printer:
    """Writes one model (or one node) and gathers notes on what the text cannot carry."""

    def __init__(self, data: str, source: str = "") -> None:
        self.data = data  # "full", "summary", "digest" or "brief" (node_line)
        self.source = source  # where the weights left out are (said at the top)
        self.sink: Any = None  # data="external": takes a large tensor's TensorProto, gives its `[...]` reference
        self.notes: dict[str, int] = {}
        self.renamed: list[tuple[str, str]] = []

    def note(self, message: str) -> None:
        self.notes[message] = self.notes.get(message, 0) + 1

    def header_notes(self) -> list[str]:
        out = []
        if self.data in ("summary", "digest") and self.source:
            out.append(f"# graphlsp: tensors over {SUMMARY_FULL} values are written without their data; the weights "
                       f"are in {self.source} (`graphlsp convert --weights inline` writes them all)")
        elif self.data in ("summary", "digest"):
            out.append(
                f"# graphlsp: data=summary: tensors over {SUMMARY_FULL} values are written without their data (the "
                "comment on the line says what was left out); this text is a view, not the model"
            )
        if self.renamed:
            shown = ", ".join(f"{quote(a)} -> {b}" for a, b in self.renamed[:3])
            more = f" and {len(self.renamed) - 3} more" if len(self.renamed) > 3 else ""
            out.append(f"# graphlsp: {len(self.renamed)} subgraph name(s) are not identifiers and onnx's parser "
                       f"takes no quoted subgraph name: written renamed ({shown}{more})")  # fmt: skip
        for message, count in list(self.notes.items())[:30]:
            out.append(f"# graphlsp: {message}" + (f" ({count} times)" if count > 1 else ""))
        if len(self.notes) > 30:
            out.append(f"# graphlsp: ... and {len(self.notes) - 30} more notes")
        return [line.replace("\n", " ").replace("\r", " ") for line in out]

    # ---- strings
    def string(self, s: str | bytes) -> str:
        """A quoted string; one that is not UTF-8 (bytes, or the IR's surrogate escapes of them) gets U+FFFD."""
        if isinstance(s, str):
            try:
                s.encode("utf-8")
                return quote(s)
            except UnicodeEncodeError:
                raw = s.encode("utf-8", "surrogateescape" if _escapes_only(s) else "replace")
        else:
            raw = s
        try:
            return quote(raw.decode("utf-8"))
        except UnicodeDecodeError:
            self.note("a string that is not UTF-8 is written with U+FFFD for its bad bytes")
            return quote(raw.decode("utf-8", "replace"))

    def name(self, n: str) -> str:
        return n if is_identifier(n) else self.string(n)

    def slot(self, v: Any) -> str:
        return '""' if v is None else self.name(v.name)

    def typed(self, ty: TypeSpec | None, n: str) -> str:
        text = type_text(ty)
        if text is None and ty is not None:
            self.note(f"a type of {ty.kind} that ONNX text cannot write is left out (the name stays, untyped)")
        return f"{text} {self.name(n)}" if text is not None else self.name(n)

    # ---- model
    def model(self, model: Model) -> str:
        if model.graph is None:
            raise PrintError("the model has no graph")
        lines = ["<"]
        entries = []
        if model.ir_version is not None:
            entries.append(f"{INDENT}ir_version: {model.ir_version}")
        imports = ", ".join(f"{quote(d)} : {v}" for d, v in model.opset_imports.items())
        entries.append(f"{INDENT}opset_import: [{imports}]")
        if model.producer:
            entries.append(f"{INDENT}producer_name: {self.string(model.producer)}")
        lines.append(",\n".join(entries))
        lines.append(">")
        lines.append(self.graph(model.graph, "", top=True))
        for fn in model.functions.values():
            lines.append("")
            lines.append(self.function(fn))
        body = "\n".join(lines) + "\n"
        notes = self.header_notes()
        return "\n".join(notes) + "\n" + body if notes else body

    # ---- graphs
    def graph_name(self, g: Graph, top: bool) -> str:
        if top:
            return self.name(g.name)
        if is_identifier(g.name):
            return g.name
        new = _identifier(g.name)
        self.renamed.append((g.name, new))
        return new

    def graph(self, g: Graph, indent: str, top: bool = False) -> str:
        """`name (inputs) => (outputs) <initializers, value_info> {nodes}`; the first line is not indented."""
        ins = ", ".join(self.typed(v.type, v.name) for v in g.inputs)
        outs = ", ".join(self.typed(info.type, info.name) for info in g.output_infos)
        sig = f"{self.graph_name(g, top)} ({ins}) => ({outs})"
        inner = indent + INDENT
        entries: list[tuple[str, str]] = []  # (text, comment)
        for v in g.initializers.values():
            if v.tensor is not None:
                entries.append(self.initializer(v.name, v.tensor))
        for info in g.value_infos.values():
            entries.append((self.typed(info.type, info.name), ""))
        lines = [sig]
        if entries:
            lines.append(f"{inner}<")
            for i, (text, comment) in enumerate(entries):
                sep = "," if i < len(entries) - 1 else ""
                if text.endswith("=") and sep:
                    text += " "
                lines.append(f"{inner}{INDENT}{text}{sep}" + (f"  # {comment}" if comment else ""))
            lines.append(f"{inner}>")
            lines.append(f"{indent}{{")
        else:
            lines[0] += " {"
        for node in g.nodes:
            lines.append(self.node(node, inner))
        lines.append(f"{indent}}}")
        return "\n".join(lines)

    def initializer(self, name: str, t: Tensor) -> tuple[str, str]:
        ty = _tensor_type(t)
        if ty is None:
            self.note(f"an initializer of element type {t.dtype}, which ONNX text cannot name, is left out")
            return self.name(name), "initializer of an element type ONNX text cannot name"
        data, comment = self.tensor_data(t)
        return f"{ty} {self.name(name)} =" + (f" {data}" if data else ""), comment

    # ---- functions
    def function(self, fn: Function) -> str:
        header = [f"{INDENT}domain: {quote(fn.domain)}"]
        if fn.overload:
            header.append(f"{INDENT}overload: {quote(fn.overload)}")
        imports = ", ".join(f"{quote(d)} : {v}" for d, v in fn.opset_imports.items())
        header.append(f"{INDENT}opset_import: [{imports}]")
        lines = ["<", ",\n".join(header), ">"]
        attrs = ", ".join(self.func_attr(fa) for fa in fn.attributes)
        body = fn.body
        ins = ", ".join(self.typed(v.type, v.name) for v in body.inputs) if body is not None else ""
        outs = ", ".join(self.typed(i.type, i.name) for i in body.output_infos) if body is not None else ""
        sig = f"{self.name(fn.name)}" + (f" <{attrs}>" if attrs else "") + f" ({ins}) => ({outs})"
        infos = [self.typed(i.type, i.name) for i in body.value_infos.values()] if body is not None else []
        if infos:
            sig += "\n" + INDENT + "<" + ", ".join(infos) + ">"
        lines.append(sig)
        lines.append("{")
        for node in body.nodes if body is not None else []:
            lines.append(self.node(node, INDENT))
        lines.append("}")
        return "\n".join(lines)

    def func_attr(self, fa: FuncAttr) -> str:
        n = self.name(fa.name)
        if not fa.has_default:
            return f"{n}: {fa.kind}" if fa.kind in _ATTR_KINDS else n
        text = self.attr_value(None, Attr(fa.name, fa.kind, fa.default), "")
        if text is None:
            return f"{n}: {fa.kind}" if fa.kind in _ATTR_KINDS else n
        return f"{n}{text}"

    # ---- nodes
    def node(self, node: Node, indent: str) -> str:
        line, comments = self.node_text(node, indent)
        if comments:
            line += "  # " + "; ".join(comments)
        return line

    def op_text(self, node: Node) -> str:
        parts = [*node.domain.split("."), node.op_type] if node.domain else [node.op_type]
        if node.overload:
            parts.append(node.overload)
        if not all(_IDENT.match(p) for p in parts):
            if self.data == "brief":
                return node.qualified_op
            raise PrintError(f"op '{node.qualified_op}' cannot be written in ONNX text: its domain, type and "
                             "overload must be identifiers")  # fmt: skip
        return node.qualified_op

    def node_text(self, node: Node, indent: str) -> tuple[str, list[str]]:
        comments: list[str] = []
        head = indent
        if node.name is not None:
            head += f"[{self.name(node.name)}] "
        outs = ", ".join(self.slot(v) for v in node.outputs)
        head += (outs + " = " if outs else "= ") + self.op_text(node)
        attrs: list[str] = []
        for attr in node.attributes.values():
            text = self.attribute(node, attr, indent, comments)
            if text is not None:
                attrs.append(text)
        ins = "(" + ", ".join(self.slot(v) for v in node.inputs) + ")"
        if not attrs:
            return f"{head} {ins}", comments
        for i in range(len(attrs) - 1):
            if attrs[i].endswith("="):
                attrs[i] += " "
        if attrs[-1].endswith("="):
            attrs[-1] += " "  # never `=>`
        listed = "<" + ", ".join(attrs) + ">"
        if node.subgraphs:  # as onnx's printer: attributes after the inputs when a subgraph is among them
            return f"{head} {ins} {listed}", comments
        return f"{head} {listed} {ins}", comments

    def attribute(self, node: Node, attr: Attr, indent: str, comments: list[str]) -> str | None:
        if not _IDENT.match(attr.name) and self.data != "brief":
            self.note(f"attribute {quote(attr.name)} of a {node.op_type} node is left out: onnx's parser takes "
                      "only an identifier as an attribute's name")  # fmt: skip
            return None
        name = attr.name if _IDENT.match(attr.name) else quote(attr.name)  # quoted: node_line only
        if attr.kind in ("sparse_tensor", "sparse_tensors") and not isinstance(attr.value, Ref):
            if attr.kind == "sparse_tensor" and node.op_type == "Constant" and not node.domain:
                self.note("a Constant's sparse_value is written as a dense `value` (ONNX text has no sparse data)")
                name = "value"
                attr = Attr(name, "tensor", attr.value)
            else:
                self.note(f"attribute '{attr.name}' ({attr.kind}) is left out: ONNX text has no sparse tensors")
                return None
        if attr.kind in _DROPPED_LISTS - {"sparse_tensors"} and not isinstance(attr.value, Ref) and attr.value:
            self.note(f"attribute '{attr.name}' ({attr.kind}) is written, but onnx's parser drops the elements of "
                      "tensor, graph and type lists (our parser keeps them)")  # fmt: skip
        text = self.attr_value(node, attr, indent, comments)
        if text is None:
            return None
        return name + text

    def attr_value(self, node: Node | None, attr: Attr, indent: str, comments: list[str] | None = None) -> str | None:
        """`: kind = value` of one attribute, or None when it cannot be written (noted)."""
        kind, value = attr.kind, attr.value
        if isinstance(value, Ref):
            return (f": {kind}" if kind in _ATTR_KINDS else "") + f" = @{self.name(value.name)}"
        if kind not in _ATTR_KINDS:
            self.note(f"attribute '{attr.name}' has no attribute type and is left out")
            return None
        try:
            text = self.value_text(node, attr, kind, value, indent, comments)
        except (TypeError, ValueError) as e:
            self.note(f"attribute '{attr.name}' ({kind}) is left out: its value cannot be written ({e})")
            return None
        return None if text is None else f": {kind} = {text}"

    def value_text(self, node: Node | None, attr: Attr, kind: str, value: Any, indent: str,
                   comments: list[str] | None) -> str | None:  # fmt: skip
        if kind == "int":
            return str(int(value))
        if kind == "float":
            return _float32(value)
        if kind == "string":
            return self.string(value)
        if kind == "ints":
            return "[" + ", ".join(str(int(x)) for x in value) + "]"
        if kind == "floats":
            return "[" + ", ".join(_float32(x) for x in value) + "]"
        if kind == "strings":
            return "[" + ", ".join(self.string(x) for x in value) + "]"
        if kind == "tensor":
            return self.tensor_value(value, attr.name, comments)
        if kind == "tensors":
            return "[" + ", ".join(self.tensor_value(t, attr.name, comments) for t in value) + "]"
        if kind == "type_proto":
            text = type_text(value)
            if text is None:
                self.note(f"attribute '{attr.name}' holds a type ONNX text cannot write and is left out")
            return text
        if kind == "type_protos":
            texts = [type_text(x) for x in value]
            if any(x is None for x in texts):
                self.note(f"attribute '{attr.name}' holds a type ONNX text cannot write and is left out")
                return None
            return "[" + ", ".join(t for t in texts if t is not None) + "]"
        if kind in ("graph", "graphs"):
            graphs = node.subgraphs.get(attr.name, []) if node is not None else []
            if self.data == "brief":
                return "{...}" if kind == "graph" else "[" + ", ".join("{...}" for _ in graphs) + "]"
            if kind == "graph":
                if not graphs:
                    self.note(f"graph attribute '{attr.name}' has no graph and is left out")
                    return None
                return self.graph(graphs[0], indent)
            return "[" + ", ".join(self.graph(g, indent) for g in graphs) + "]"
        return None

    # ---- tensors
    def tensor_value(self, t: Tensor, attr: str, comments: list[str] | None) -> str:
        """A tensor as an attribute value: `float[2,3] name {...}` (name only when it is an identifier)."""
        ty = _tensor_type(t)
        if ty is None:
            raise ValueError(f"element type {t.dtype} has no name in ONNX text")
        # onnx's parser reads the name of a tensor value only unquoted (ParseSingleAttributeValue looks for an
        # identifier after the type); a name that needs quotes is left out: onnx ignores a Constant's tensor name.
        name = t.name if t.name and is_identifier(t.name) else ""
        if self.data == "brief":
            return ty + (f" {name}" if name else "") + " " + self.brief_data(t)
        data, comment = self.tensor_data(t)
        if comment and comments is not None:
            comments.append(f"{attr}: {comment}")
        if data:
            # without a name, external data needs `=`: `float[2] [...]` would read as a type and a list
            return ty + (f" {name}" if name else " =" if data.startswith("[") else "") + f" {data}"
        return ty + (f" {name}" if name else " =")  # no data: `float[2] name` or `float[2] =` (still a tensor)

    def tensor_data(self, t: Tensor) -> tuple[str, str]:
        """(`{...}` or `[external data]` or "" for none, a comment) in this printer's data mode."""
        try:
            if t.external:
                self.note("external data stays in its files: the text keeps the references, relative to the folder "
                          "of the model (keep the text beside them)")  # fmt: skip
                return self.external(t), ""
            if self.data in ("summary", "digest") and not self.small(t):
                return "", self.summary(t)
            if self.sink is not None and not self.small(t):
                p = _proto(t)
                if p.HasField("raw_data"):
                    return self.sink(p.raw_data), ""
            if _is_sparse(t):
                self.note("a sparse initializer is written dense (ONNX text has no sparse data)")
            return self.elements(t), ""
        except Exception as e:  # TensorError, or onnx's printer on malformed raw data (a size that does not fit)
            self.note(f"the data of tensor {quote(t.name)} cannot be read ({e}): written without data")
            return "", "data could not be read"

    def small(self, t: Tensor) -> bool:
        return t.size <= SUMMARY_FULL and t.nbytes <= DECODE_CAP

    def external(self, t: Tensor) -> str:
        p = _proto(t)
        entries = ", ".join(f"{self.string(e.key)}: {self.string(e.value)}" for e in p.external_data)
        return f"[{entries}]"

    def summary(self, t: Tensor) -> str:
        n = t.size
        what = "values" if t.dtype != _T.STRING else "strings"
        if self.data == "digest":
            return f"{n} {what} ({_size(t.nbytes)}) not shown, {_digest(t)}"
        if t.nbytes > DECODE_CAP:
            return f"{n} {what} ({_size(t.nbytes)}) not shown"
        try:
            arr = np.asarray(t.numpy())
        except (TensorError, ValueError, TypeError):
            return f"{n} {what} not shown (data could not be read)"
        text = f"{n} {what} not shown"
        if arr.dtype.kind == "b":
            arr = arr.astype(np.uint8)
        if arr.size and arr.dtype.kind in "fiu":
            finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr.reshape(-1)
            if finite.size:
                text += f": min {_number(finite.min())}, max {_number(finite.max())}"
        return text

    def brief_data(self, t: Tensor) -> str:
        """node_line's data: the whole of a tiny tensor, the first values of a small one, `{...}` otherwise."""
        if t.external:
            return "[external data]"
        if t.size > BRIEF_FULL and t.nbytes > DECODE_CAP:
            return "{...}"
        try:
            arr = np.asarray(t.numpy()).reshape(-1)
        except (TensorError, ValueError, TypeError):
            return "{...}"
        shown = arr[: BRIEF_FULL if arr.size <= BRIEF_FULL else BRIEF_SHOWN]
        items = [self.string(x) if isinstance(x, str | bytes) else _number(x) for x in shown]
        if arr.size > len(shown):
            items.append("...")
        return "{" + ", ".join(items) + "}"

    def elements(self, t: Tensor) -> str:
        """Every element of a tensor as `{...}` literals that onnx's parser stores back as they were."""
        dtype = t.dtype
        whole = _INTEGERS.get(dtype)
        if whole is not None and not _is_sparse(t):
            arr = np.asarray(t.numpy())
            if arr.dtype == whole:  # onnx's printer writes these as plain decimals; no need to import onnx
                return _ints(arr.reshape(-1).view(np.uint8) if whole == np.bool_ else arr.reshape(-1).tolist())
        import onnx
        from onnx import numpy_helper

        if _is_sparse(t):
            arr = np.asarray(t.numpy())
            p = numpy_helper.from_array(arr.astype(onnx.helper.tensor_dtype_to_np_dtype(dtype)))
        else:
            p = _proto(t)
        if dtype == _T.STRING:
            return "{" + ", ".join(self.string(s) for s in p.string_data) + "}"
        raw = p.HasField("raw_data")
        if dtype in _ONNX_PRINTS:
            if dtype in (_T.FLOAT, _T.DOUBLE):
                self.check_nan(t, p)
            return _onnx_numbers(p)
        if dtype in (_T.COMPLEX64, _T.COMPLEX128):
            base = np.float32 if dtype == _T.COMPLEX64 else np.float64
            if raw:
                parts = np.frombuffer(p.raw_data, dtype=np.dtype(base).newbyteorder("<"))
            else:
                parts = np.asarray(p.float_data if dtype == _T.COMPLEX64 else p.double_data, dtype=base)
            return _onnx_numbers(numpy_helper.from_array(parts.astype(base)))
        if dtype in _PACKED:
            return _ints(np.frombuffer(p.raw_data, dtype=np.uint8) if raw else p.int32_data)
        if dtype in _FLOAT6:
            if not raw:
                return _ints(p.int32_data)
            return _ints(np.asarray(numpy_helper.to_array(p)).view(np.uint8).reshape(-1))
        raise TensorError(f"element type {dtype} has no data syntax in ONNX text")

    def check_nan(self, t: Tensor, p: Any) -> None:
        from onnx import numpy_helper

        if p.data_type == _T.FLOAT:
            arr = np.asarray(t.numpy() if not _is_sparse(t) else numpy_helper.to_array(p), dtype=np.float32)
            bits, quiet = arr.reshape(-1).view(np.uint32), 0x7FC00000
            mask = 0x7FFFFFFF
        else:
            arr = np.asarray(t.numpy() if not _is_sparse(t) else numpy_helper.to_array(p), dtype=np.float64)
            bits, quiet, mask = arr.reshape(-1).view(np.uint64), 0x7FF8000000000000, 0x7FFFFFFFFFFFFFFF
        nan = np.isnan(arr.reshape(-1))
        if nan.any() and bool(((bits[nan] & mask) != quiet).any()):
            self.note("a NaN with a payload is written as nan (ONNX text has only nan and -nan)")


_ATTR_KINDS = {
    "int", "float", "string", "tensor", "graph", "type_proto", "sparse_tensor", "ints", "floats", "strings",
    "tensors", "graphs", "type_protos", "sparse_tensors",
}  # fmt: skip


def _digest(t: Tensor) -> str:
    """A short digest of a tensor's data (its bytes as numpy holds them), the same for the same data."""
    import hashlib

    try:
        arr = np.ascontiguousarray(np.asarray(t.numpy()))
    except (TensorError, ValueError, TypeError, OSError):
        return "data could not be read"
    raw = arr.tobytes() if arr.dtype.kind != "O" else repr(arr.tolist()).encode("utf-8", "replace")
    return "sha256 " + hashlib.sha256(raw).hexdigest()[:16]


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} bytes"


# ---- the API


def print_model(model: Model, *, data: str = "full", source: str = "") -> str:
    """The model as ONNX text that onnx.parser.parse_model and our parser read.

    data="full": every tensor element, so the text parses back to the same model (what the text cannot carry is
    listed in `# graphlsp:` comments at the top). data="summary": tensors over a few values keep type and shape
    and lose their data, with a comment on the line (a view for an editor; no large tensor is decoded);
    data="digest": the same, each comment with a digest of the data. `source`: the file the data left out is in,
    said at the top.
    Raises PrintError when the model has something ONNX text cannot write at all (an op that is no identifier).
    """
    if data not in ("full", "summary", "digest"):
        raise ValueError(f"data must be 'full', 'summary' or 'digest', not {data!r}")
    return _Printer(data, source).model(model)


def print_with_external_data(model: Model, location: str) -> tuple[str, bytes]:
    """The model as ONNX text whose tensors over a few values are written to one data file, `location` (relative
    to the text's folder), which the text refers to as external data: (text, the data file's bytes). Tensors
    already in external files keep their references."""
    printer = _Printer("full")
    chunks: list[bytes] = []
    offset = 0

    def sink(raw: bytes) -> str:
        nonlocal offset
        start = offset
        chunks.append(raw)
        offset += len(raw)
        pad = -offset % 64  # each tensor at a 64-byte boundary, as onnx's own writer aligns large ones
        chunks.append(b"\0" * pad)
        offset += pad
        return (f"[{printer.string('location')}: {printer.string(location)}, {printer.string('offset')}: "
                f"{printer.string(str(start))}, {printer.string('length')}: {printer.string(str(len(raw)))}]")

    printer.sink = sink
    return printer.model(model), b"".join(chunks)


def node_line(node: Node, limit: int = 200) -> str:
    """One node as one line of ONNX text, its tensors summarised and subgraphs elided (`{...}`), at most `limit`
    characters (cut with `…`). For display: the elisions make it text no parser reads back."""
    printer = _Printer("brief")
    line, _ = printer.node_text(node, "")
    line = line.replace("\n", " ").replace("\r", " ")
    if len(line) > limit:
        return line[: max(limit - 1, 0)] + "…" if limit > 0 else ""
    return line
