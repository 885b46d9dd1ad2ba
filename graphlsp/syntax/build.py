"""Builds `tree.py` objects from the parser's reductions (an inline transformer: no lark Tree is ever made).

Checks that the grammar leaves to the meaning of a token (an int where onnx wants an int, a known header key,
a known attribute type, map's key type) are recorded in `problems` rather than raised, so one mistake does not
lose the rest of the statement.

A token's text is read as `tok.value` (a plain str), which is cheaper than str(tok) on the str subclass.
"""

from __future__ import annotations

import math
import re
from typing import Any

from graphlsp.syntax import semantics as sem
from graphlsp.syntax import tree as t
from graphlsp.syntax.tokens import Token

ATTRIBUTE_TYPES = {
    "float", "int", "string", "tensor", "graph", "sparse_tensor", "type_proto",
    "floats", "ints", "strings", "tensors", "graphs", "sparse_tensors", "type_protos",
}  # fmt: skip
MODEL_KEYS = {
    "ir_version": "int", "opset_import": "list", "producer_name": "str", "producer_version": "str",
    "domain": "str", "model_version": "int", "doc_string": "str", "metadata_props": "list",
}  # fmt: skip
FUNCTION_KEYS = {"opset_import": "list", "doc_string": "str", "domain": "str", "overload": "str"}
# Subgraphs, and types in types, nested deeper than this are reported and cut off, so that no walk over the tree
# or the IR (lowering, inference, printing) recurses without bound. onnx's protobuf reads at most 100 nested
# messages: about 31 levels of subgraphs, and no more levels of seq(...) than that.
MAX_NESTING = 30


def unescape(quoted: str) -> str:
    """onnx's string literal rule: drop the quotes; a backslash takes the next character literally."""
    body = quoted[1:-1]
    if "\\" not in body:
        return body
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            i += 1
            ch = body[i]
        out.append(ch)
        i += 1
    return "".join(out)


_LONG_WORD = re.compile(r"[^\s']{41,}")


class _Bracketed:
    """A bracketed list before it is given its final type: items plus the bracket positions."""

    __slots__ = ("items", "start", "end")

    def __init__(self, items: list[Any], start: int, end: int) -> None:
        self.items = items
        self.start = start
        self.end = end


class _Ids:
    """A list of value names with onnx's empty slots; start/end are -1 when the list is empty."""

    __slots__ = ("items", "start", "end")

    def __init__(self, items: list[t.Name | None], start: int, end: int) -> None:
        self.items = items
        self.start = start
        self.end = end


def _start(x: Any) -> int:
    """Start offset of a token or a tree element (our lexer always sets token positions)."""
    pos: int = x.start_pos if isinstance(x, Token) else x.start  # type: ignore[assignment]
    return pos


def _end(x: Any) -> int:
    pos: int = x.end_pos if isinstance(x, Token) else x.end  # type: ignore[assignment]
    return pos


def _bracketed(children: list[Any]) -> _Bracketed:
    items = [c for c in children[1:-1] if c is not None and not (isinstance(c, Token) and c.type == "COMMA")]
    return _Bracketed(items, children[0].start_pos, children[-1].end_pos)


def _names(text: str, at: int) -> list[t.Name | None]:
    """`a, "b"`: names (plain or quoted without escapes) separated by commas, `at` the offset of text[0]."""
    if "," not in text:  # one name (most nodes), or none
        if not text:
            return []
        if text[0] == '"':
            return [t.Name(text[1:-1], at, at + len(text), True)]
        return [t.Name(text, at, at + len(text), False)]
    out: list[t.Name | None] = []
    for m in _NAME.finditer(text):
        name = m.group()
        s = at + m.start()
        if name[0] == '"':
            out.append(t.Name(name[1:-1], s, s + len(name), True))
        else:
            out.append(t.Name(name, s, s + len(name), False))
    return out


_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*|"[^"]*"')


def simple_node(m: re.Match[str], attributes: list[t.Attribute]) -> t.Node:
    """The node of a match of the lexer's SIMPLE_NODE (on the whole text) and its attributes (built by the lexer),
    as the rules below build it from the same statement token by token."""
    outs, op_text, ins, label_text = m.group("outs", "op", "ins", "label")
    op_start = m.start("op")
    dot = op_text.rfind(".")
    op = t.OpRef(op_text[:dot] if dot >= 0 else "", op_text[dot + 1 :], "", op_start, op_start + len(op_text),
                 op_start + dot + 1)  # fmt: skip
    outputs = _names(outs, m.start("outs"))
    inputs = _names(ins, m.start("ins"))
    if m.start("lsq") < 0:
        return t.Node(None, outputs, op, attributes, inputs, m.start(), m.end(), inputs_start=m.start("lpar"))
    label = _names(label_text, m.start("label"))[0] if label_text is not None else None  # `[]`: a label, unnamed
    return t.Node(label, outputs, op, attributes, inputs, m.start(), m.end(), inputs_start=m.start("lpar"),
                  has_label=True)  # fmt: skip


def _flat(items: list[Any]) -> list[Any]:
    """Nodes, with a run of simple nodes (one SIMPLE_NODE token, a list) spread out."""
    if not any(type(x) is list for x in items):
        return items
    out: list[Any] = []
    for x in items:
        if type(x) is list:
            out.extend(x)
        else:
            out.append(x)
    return out


class TreeBuilder:
    """The reductions' callbacks, one per grammar rule (and alias), by the rule's name (grammar.py and lark both
    look them up so; a rule without one makes a tree that its parent spreads out)."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, int, int]] = []
        # while one text is parsed more than once (a full parse that fails, then its statements): the problems of
        # each long list of numbers (NUMBERS) by its place and type, so that its numbers are converted once
        self.numbers_checked: dict[tuple[int, int, str], list[tuple[str, int, int]]] | None = None

    def _problem(self, message: str, start: int, end: int) -> None:
        # a 5,000-digit literal is quoted by its ends, not in full
        message = _LONG_WORD.sub(lambda m: m.group()[:16] + "..." + m.group()[-8:], message)
        self.problems.append((message, start, end))

    # ---- literals and names
    def qname(self, c: list[Any]) -> t.Name:
        tok = c[0]
        if tok.type == "STRING":
            return t.Name(unescape(tok.value), tok.start_pos, tok.end_pos, True)
        return t.Name(tok.value, tok.start_pos, tok.end_pos, False)

    def literal(self, c: list[Any]) -> t.Literal:
        tok = c[-1]
        digits: str = tok.value
        start = c[0].start_pos
        if tok.type == "STRING":
            return t.Literal("string", digits, unescape(digits), start, tok.end_pos)
        neg = len(c) == 2
        text = "-" + digits if neg else digits
        if neg and c[0].end_pos != tok.start_pos:
            # onnx keeps what lies between the sign and the number in the literal, and then cannot convert it
            self._problem("no space is allowed after '-' in a number", start, tok.end_pos)
        if tok.type == "FLOAT_WORD":
            return t.Literal("float", text, float(text), start, tok.end_pos)
        return t.number_literal(text, start, tok.end_pos)

    def signed_int(self, c: list[Any]) -> t.Literal:
        lit = self.literal(c)
        if lit.kind != "int":
            self._problem(f"expected an integer, found {lit.text}", lit.start, lit.end)
            value = float(lit.value)
            lit = t.Literal("int", lit.text, int(value) if math.isfinite(value) else 0, lit.start, lit.end)
        elif not sem.INT64_MIN <= lit.value <= sem.INT64_MAX:  # type: ignore[operator]
            self._problem(f"{lit.text} is out of range for int64", lit.start, lit.end)
        return lit

    # ---- headers
    def header(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def header_entry(self, c: list[Any]) -> t.HeaderEntry:
        key, value = c
        name = t.Name(key.value, key.start_pos, key.end_pos)
        if isinstance(value, Token):  # STRING
            value = t.Literal("string", value.value, unescape(value.value), _start(value), _end(value))
        elif isinstance(value, _Bracketed):
            value_end = value.end
            value = value.items
            return t.HeaderEntry(name, value, key.start_pos, value_end)
        return t.HeaderEntry(name, value, key.start_pos, value.end)

    def kv_list(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def kv(self, c: list[Any]) -> t.KeyValue:
        key, value = c
        k = t.Literal("string", key.value, unescape(key.value), key.start_pos, key.end_pos)
        if isinstance(value, Token):
            value = t.Literal("string", value.value, unescape(value.value), _start(value), _end(value))
        return t.KeyValue(k, value, k.start, value.end)

    def check_model_header(self, entries: list[t.HeaderEntry]) -> None:
        self._check_header(entries, MODEL_KEYS, "model")

    def _check_header(self, entries: list[t.HeaderEntry], keys: dict[str, str], what: str) -> None:
        for e in entries:
            kind = keys.get(e.key.value)
            if kind is None:
                self._problem(f"unknown {what} header key '{e.key.value}'", e.key.start, e.key.end)
            elif kind == "list" and not isinstance(e.value, list):
                self._problem(f"'{e.key.value}' takes a [...] list", e.start, e.end)
            elif kind != "list" and isinstance(e.value, list):
                self._problem(f"'{e.key.value}' takes a single value, not a list", e.start, e.end)
            elif kind == "int" and isinstance(e.value, t.Literal) and e.value.kind != "int":
                self._problem(f"'{e.key.value}' takes an integer", e.value.start, e.value.end)
            elif kind == "str" and isinstance(e.value, t.Literal) and e.value.kind != "string":
                self._problem(f"'{e.key.value}' takes a quoted string", e.value.start, e.value.end)
            elif kind == "list" and isinstance(e.value, list):
                want = "string" if e.key.value == "metadata_props" else "int"
                shape = '"key": "value"' if want == "string" else '"domain": version'
                for kv in e.value:
                    if kv.value.kind != want:
                        self._problem(f"'{e.key.value}' entries are {shape}", kv.start, kv.end)

    # ---- types
    def prim_type(self, c: list[Any]) -> Token:
        return c[0]

    def type_ctor(self, c: list[Any]) -> Token:
        return c[0]

    def shape(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def dim(self, c: list[Any]) -> t.Dim:
        x = c[0]
        if isinstance(x, t.Literal):
            return t.Dim("value", int(x.value), x.start, x.end)
        if x.type == "QMARK":
            return t.Dim("unknown", None, x.start_pos, x.end_pos)
        if x.type == "STRING":
            return t.Dim("param", unescape(x.value), x.start_pos, x.end_pos)
        return t.Dim("param", x.value, x.start_pos, x.end_pos)

    def tensor_type(self, c: list[Any]) -> t.TypeRef:
        prim = c[0]
        if len(c) > 1 and c[1] is not None:
            sh: _Bracketed = c[1]
            dims = sh.items if sh.items else None
            return t.TypeRef("tensor", prim.start_pos, sh.end, elem=prim.value, elem_start=prim.start_pos, dims=dims)
        return t.TypeRef("tensor", prim.start_pos, prim.end_pos, elem=prim.value, elem_start=prim.start_pos, dims=[])

    def dotted_name(self, c: list[Any]) -> t.Name:
        return t.Name(".".join(x.value for x in c if x.type == "IDENT"), c[0].start_pos, c[-1].end_pos)

    def ctor_type(self, c: list[Any]) -> t.TypeRef:
        ctor = c[0]
        args = [x for x in c[2:-1] if x is not None and not (isinstance(x, Token) and x.type == "COMMA")]
        start, end = ctor.start_pos, c[-1].end_pos
        kind: str = ctor.value
        nested = max((a.depth for a in args if isinstance(a, t.TypeRef)), default=0)
        if nested >= MAX_NESTING:  # cut: the type keeps its constructor, not what it holds
            if nested == MAX_NESTING:
                self._problem(f"types nested more than {MAX_NESTING} deep: onnx's protobuf cannot hold them",
                              start, end)  # fmt: skip
            return t.TypeRef(kind, start, end, depth=nested + 1)

        def as_type(x: Any) -> t.TypeRef | None:
            if isinstance(x, t.TypeRef):
                return x
            self._problem(f"{kind}(...) expects a type here", _start(x), _end(x))
            return None

        if kind in ("seq", "optional"):
            if len(args) != 1:
                self._problem(f"{kind}(...) takes exactly one type", start, end)
                return t.TypeRef(kind, start, end)
            arg = as_type(args[0])
            return t.TypeRef(kind, start, end, args=[arg] if arg else [], depth=nested + 1)
        if kind == "map":
            if len(args) != 2:
                self._problem("map(...) takes a key type and a value type: map(int64, float)", start, end)
                return t.TypeRef(kind, start, end)
            key = as_type(args[0])
            if key is not None and (key.kind != "tensor" or key.dims != []):
                self._problem("map key type must be a primitive type such as int64 or string", key.start, key.end)
            value = as_type(args[1])
            return t.TypeRef(
                kind, start, end, elem=key.elem if key else None, elem_start=_start(args[0]),
                args=[value] if value else [], depth=nested + 1,
            )  # fmt: skip
        if kind == "sparse_tensor":
            if len(args) != 1 or not isinstance(args[0], t.TypeRef) or args[0].kind != "tensor":
                self._problem("sparse_tensor(...) takes a tensor type: sparse_tensor(float[N, 4])", start, end)
                return t.TypeRef(kind, start, end)
            inner = args[0]
            return t.TypeRef(kind, start, end, elem=inner.elem, elem_start=inner.elem_start, dims=inner.dims)
        # opaque(), opaque(name), opaque(domain, name)
        names = []
        for a in args:
            if isinstance(a, t.Name):
                names.append(a.value)
            elif isinstance(a, t.TypeRef) and a.kind == "tensor" and a.dims == [] and a.elem:
                names.append(a.elem)
            else:
                self._problem("opaque(...) takes a name, or a domain and a name", _start(a), _end(a))
        if len(names) > 2:
            self._problem("opaque(...) takes at most a domain and a name", start, end)
        if len(names) == 2:
            if "." in names[1]:
                self._problem("opaque(domain, name): the name cannot contain '.'", start, end)
            opaque = (names[0], names[1])
        elif len(names) == 1:
            opaque = ("", names[0])
        else:
            opaque = ("", "")
        return t.TypeRef(kind, start, end, opaque=opaque)

    def type(self, c: list[Any]) -> t.TypeRef:  # the ctor_type alternative
        return c[0]  # type: ignore[no-any-return]

    def type_arg(self, c: list[Any]) -> Any:
        return c[0]

    # ---- value infos and graph signatures
    def value_info(self, c: list[Any]) -> t.ValueInfo:
        if len(c) == 2:
            ty, name = c
            return t.ValueInfo(ty, name, ty.start, name.end)
        name = c[0]
        return t.ValueInfo(None, name, name.start, name.end)

    def graph_input(self, c: list[Any]) -> t.ValueInfo:
        vi: t.ValueInfo = c[0]
        if len(c) > 1:
            vi.has_init = True
            data = c[2] if len(c) > 2 else None
            vi.init = data
            vi.end = data.end if data is not None else c[1].end_pos
            for message, start, end in sem.tensor_problems(vi.type, data, vi.start, vi.end):
                self._problem(message, start, end)
        return vi

    def graph_inputs(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def vi_list(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def value_infos(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def func_value_infos(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def graph_sig_tail(self, c: list[Any]) -> tuple[list[t.ValueInfo], list[t.ValueInfo], list[t.ValueInfo], int]:
        inputs: list[t.ValueInfo] = []
        i = 0
        if isinstance(c[0], _Bracketed):
            inputs = c[0].items
            i = 1
        outputs: _Bracketed = c[i + 1]
        vis: list[t.ValueInfo] = []
        end = outputs.end
        if len(c) > i + 2 and c[i + 2] is not None:
            vis = c[i + 2].items
            end = c[i + 2].end
        return inputs, outputs.items, vis, end

    def graph_sig(self, c: list[Any]) -> t.GraphSig:
        name, (inputs, outputs, vis, end) = c[0], c[1]
        if len(c) > 2:  # the `{` of a separately parsed signature
            end = c[2].end_pos
        return t.GraphSig(name, inputs, outputs, vis, name.start, end)

    def node_block(self, c: list[Any]) -> _Bracketed:
        return _bracketed(_flat(c))

    def graph(self, c: list[Any]) -> t.Graph:
        name, tail, block = c
        sig = self.graph_sig([name, tail])
        return t.Graph(sig, block.items, name.start, block.end)

    # ---- nodes
    def node_seq(self, c: list[t.Node]) -> list[t.Node]:
        c = _flat(c)
        self._bound_nesting(c)
        return c

    def _bound_nesting(self, nodes: list[t.Node]) -> None:
        """Top-level nodes: a subgraph nested more than MAX_NESTING deep is reported, and its body dropped."""
        stack = [(n, 1) for n in nodes if n.attributes]
        while stack:
            node, depth = stack.pop()
            for a in node.attributes:
                v = a.value
                for gv in v.items if isinstance(v, t.ListValue) else [v]:
                    if not isinstance(gv, t.GraphValue):
                        continue
                    g = gv.graph
                    if depth <= MAX_NESTING:
                        stack.extend((n, depth + 1) for n in g.nodes if n.attributes)
                    elif g.nodes:
                        message = f"subgraphs nested more than {MAX_NESTING} deep: onnx's protobuf cannot hold them"
                        self._problem(message + " (deeper graphs are not analysed)", g.sig.name.start, g.sig.name.end)
                        g.nodes = []

    def label(self, c: list[Any]) -> tuple[t.Name | None, int, int]:
        name = c[1] if len(c) == 3 else None
        return (name, c[0].start_pos, c[-1].end_pos)

    def ids(self, c: list[Any]) -> _Ids:
        if len(c) == 1:  # one name, or none (most nodes)
            x = c[0]
            return _Ids([x], x.start, x.end) if x is not None else _Ids([], -1, -1)
        # onnx: entries are separated by commas, an entry may be empty, a trailing empty entry is dropped.
        items: list[t.Name | None] = []
        current: t.Name | None = None
        start = end = -1
        for x in c:
            if x is None:
                continue
            if start < 0:
                start = _start(x)
            end = _end(x)
            if isinstance(x, Token):  # COMMA
                items.append(current)
                current = None
            else:
                current = x
        items.append(current)
        if items[-1] is None:
            items.pop()
        return _Ids(items, start, end)

    def op_ref(self, c: list[Any]) -> t.OpRef:
        if len(c) == 1:  # no domain, no overload (most nodes)
            tok = c[0]
            return t.OpRef("", tok.value, "", tok.start_pos, tok.end_pos, tok.start_pos)
        parts: list[str] = []
        overload = ""
        i = 0
        while i < len(c):
            tok = c[i]
            if tok.type == "IDENT":
                parts.append(tok.value)
            elif tok.type == "COLON":
                overload = c[i + 1].value
                i += 1
            i += 1
        ident_toks = [x for x in c if x.type == "IDENT"]
        op_tok = ident_toks[len(parts) - 1]
        return t.OpRef(".".join(parts[:-1]), parts[-1], overload, c[0].start_pos, c[-1].end_pos, op_tok.start_pos)

    def attrs(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def node(self, c: list[Any]) -> t.Node | list[t.Node]:
        if len(c) == 1:  # one SIMPLE_NODE token: a run of simple nodes, built by the lexer (spread by _flat)
            nodes: list[t.Node] = c[0].nodes
            return nodes
        i = 0
        label = None
        has_label = isinstance(c[0], tuple)
        if has_label:
            label = c[0][0]
            start = c[0][1]
            i = 1
        outputs: _Ids = c[i]
        if not has_label:
            start = outputs.start if outputs.start >= 0 else c[i + 1].start_pos
        op: t.OpRef = c[i + 2]
        i += 3
        attributes: list[t.Attribute] = []
        attrs_before = True
        attrs_twice = False
        if isinstance(c[i], _Bracketed):
            attributes = c[i].items
            i += 1
        lpar = c[i]
        inputs: _Ids = c[i + 1]
        rpar = c[i + 2]
        end = rpar.end_pos
        if len(c) > i + 3 and c[i + 3] is not None:
            after: _Bracketed = c[i + 3]
            end = after.end
            if attributes:
                attrs_twice = True
                self._problem(
                    "attributes are given both before and after the inputs; onnx accepts only one list",
                    after.start,
                    after.end,
                )
            else:
                attributes = after.items
                attrs_before = False
        return t.Node(
            label, outputs.items, op, attributes, inputs.items, start, end,
            attrs_before=attrs_before, attrs_twice=attrs_twice, inputs_start=lpar.start_pos,
            has_label=has_label,
        )  # fmt: skip

    # ---- attributes
    def attr(self, c: list[Any]) -> t.Attribute:
        name_tok = c[0]
        name = t.Name(name_tok.value, name_tok.start_pos, name_tok.end_pos)
        declared = None
        value = c[-1]
        if len(c) == 3:
            d = c[1]
            declared = t.Name(d.value, d.start_pos, d.end_pos)
            if declared.value not in ATTRIBUTE_TYPES:
                self._problem(f"unknown attribute type '{declared.value}'", d.start_pos, d.end_pos)
        value = self._as_value(value)
        message = sem.attribute_problem(declared, value)
        if message is not None:
            self._problem(message, value.start, value.end)
        return t.Attribute(name, declared, value, name.start, value.end)

    def _as_value(self, v: Any) -> t.AttrValue:
        if isinstance(v, t.Literal):
            return t.LiteralValue(v, v.start, v.end)
        return v  # type: ignore[no-any-return]

    def value_list(self, c: list[Any]) -> t.ListValue:
        b = _bracketed(c)
        return t.ListValue([self._as_value(x) for x in b.items], b.start, b.end)

    def type_value(self, c: list[Any]) -> t.TypeValue:
        return t.TypeValue(c[0], c[0].start, c[0].end)

    def tensor_name(self, c: list[Any]) -> t.Name:
        return t.Name(c[0].value, c[0].start_pos, c[0].end_pos)

    def tensor_value(self, c: list[Any]) -> t.TensorValue:
        ty = c[0]
        name = None
        data = None
        end = ty.end
        for x in c[1:]:
            if isinstance(x, t.Name):
                name = x
                end = x.end
            elif isinstance(x, t.TensorData):
                data = x
                end = x.end
        memo = self.numbers_checked
        if memo is not None and data is not None and isinstance(data.values, t.Numbers) and ty.elem is not None:
            key = (ty.start, data.end, ty.elem)
            found = memo.get(key)
            if found is None:
                found = memo[key] = sem.tensor_problems(ty, data, ty.start, end)
        else:
            found = sem.tensor_problems(ty, data, ty.start, end)
        for message, start, stop in found:
            self._problem(message, start, stop)
        return t.TensorValue(ty, name, data, ty.start, end)

    def brace_data(self, c: list[Any]) -> t.TensorData:
        if len(c) == 1:  # one NUMBERS token: a long list of plain numbers, read when asked for
            tok = c[0]
            return t.TensorData(tok.start_pos, tok.end_pos, values=t.Numbers(tok.value, tok.start_pos))
        b = _bracketed(c)
        return t.TensorData(b.start, b.end, values=b.items)

    def external_data(self, c: list[Any]) -> t.TensorData:
        b = _bracketed(c)
        return t.TensorData(b.start, b.end, external=b.items)

    def graph_value(self, c: list[Any]) -> t.GraphValue:
        graph: t.Graph = c[0]
        if graph.sig.name.quoted:
            # onnx reads a value that starts with '"' as a string literal
            self._problem("a graph-valued attribute's name cannot be quoted", graph.sig.name.start, graph.sig.name.end)
        return t.GraphValue(graph, graph.start, graph.end)

    def ref_value(self, c: list[Any]) -> t.RefValue:
        name: t.Name = c[0]
        return t.RefValue(name, name.start - 1, name.end)

    # ---- functions
    def func_attr(self, c: list[Any]) -> t.FuncAttr:
        name: t.Name = c[0]
        declared = None
        default = None
        for x in c[1:]:
            if isinstance(x, Token):
                declared = t.Name(x.value, _start(x), _end(x))
                if declared.value not in ATTRIBUTE_TYPES:
                    self._problem(f"unknown attribute type '{declared.value}'", declared.start, declared.end)
            elif x is not None:
                default = self._as_value(x)
        end = default.end if default else (declared.end if declared else name.end)
        if default is not None:
            message = sem.attribute_problem(declared, default, in_function=True)
            if message is not None:
                self._problem(message, default.start, default.end)
        return t.FuncAttr(name, declared, default, declared is not None or default is not None, name.start, end)

    def func_attrs(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def func_param(self, c: list[Any]) -> t.ValueInfo:
        return self.value_info(c)

    def func_params(self, c: list[Any]) -> _Bracketed:
        return _bracketed(c)

    def function_sig(self, c: list[Any]) -> t.FunctionSig:
        i = 0
        header: list[t.HeaderEntry] = []
        start = _start(c[0])
        if isinstance(c[0], _Bracketed):
            header = c[0].items
            self._check_header(header, FUNCTION_KEYS, "function")
            i = 1
        elif c[0] is None:
            i = 1
            start = c[1].start
        name: t.Name = c[i]
        i += 1
        attributes: list[t.FuncAttr] = []
        if c[i] is None:
            i += 1
        elif isinstance(c[i], _Bracketed) and c[i + 1] is not None and isinstance(c[i + 1], _Bracketed):
            # two bracketed lists in a row: the first is <attributes>, the second (params)
            first_items = c[i].items
            if first_items and isinstance(first_items[0], t.FuncAttr):
                attributes = first_items
                i += 1
        inputs: _Bracketed = c[i]
        outputs: _Bracketed = c[i + 2]
        end = outputs.end
        vis: list[t.ValueInfo] = []
        if len(c) > i + 3 and c[i + 3] is not None:
            vis = c[i + 3].items
            end = c[i + 3].end
        return t.FunctionSig(header, name, attributes, inputs.items, outputs.items, vis, start, end)

    def function(self, c: list[Any]) -> t.Function:
        sig, block = c
        self._bound_nesting(block.items)
        return t.Function(sig, block.items, sig.start, block.end)

    def model(self, c: list[Any]) -> t.Model:
        header: list[t.HeaderEntry] = []
        i = 0
        start = 0
        if isinstance(c[0], _Bracketed):
            header = c[0].items
            self._check_header(header, MODEL_KEYS, "model")
            start = c[0].start
            i = 1
        elif c[0] is None:
            i = 1
        graph: t.Graph = c[i]
        self._bound_nesting(graph.nodes)
        if not header:
            start = graph.start
        functions = [f for f in c[i + 1 :] if f is not None]
        end = functions[-1].end if functions else graph.end
        return t.Model(header, graph, functions, start, end)
