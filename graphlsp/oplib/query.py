"""Answers about an op library file (`*.onnxop`) for an editor: its problems, what a position holds (hover), where
a name is declared or bound (definition), what may be typed at a position (completion), its outline (symbols);
and a declared op's declaration and documentation, for a hover on a node of it in a model.

Pure analysis over offsets into the text, no LSP types: `graphlsp/lsp/opdocs.py` translates positions and calls
these. A library is parsed with recovery (`parser.parse_library`) and checked (`checker.check_library`); an op that
does not parse as a whole, or that has an error, still shows in the outline, hovers and completion, from the
statements of it that parse.

Names inside an op resolve as the checker resolves them: an attribute's name stands for its value; any other name
in an input's shape is a dim symbol, bound by the first input that has it; `*N` is a run of dims bound the same
way; `let` names an expression; the first argument of `has`, `rank`, `dim`, `len` and `value` names an input, an
output or an attribute.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graphlsp.oplib import model as m
from graphlsp.oplib.checker import ATTR_TYPES, FUNCTIONS, NAMED, check_library, children, element_types
from graphlsp.oplib.parser import ITEM_KEYWORDS, MEMBER_KEYWORDS, SYNTAX, _tokens, parse_library

Span = tuple[int, int]

DECLARATION = "GL602"  # an error in a declaration (the op is left out)
WARNING = "GL603"  # a declaration graphlsp uses, that is probably not what was meant


def problem_code(p: m.Problem) -> str:
    """The rule code of a library's problem: GL601 syntax, GL602 declaration error, GL603 warning."""
    return p.code or (WARNING if p.severity == "warning" else DECLARATION)


# ---- the document
@dataclass(slots=True)
class OpDocument:
    """An op library's text, analysed: `library` holds the ops without errors (what the catalog uses) and every
    problem; `ops` every op declaration of the text in order, those with errors and those typed halfway included."""

    text: str
    path: str
    library: m.Library
    ops: list[m.OpDecl]
    _index: list[_Occ] | None = None

    def occurrences(self) -> list[_Occ]:
        if self._index is None:
            self._index = [o for op in self.ops for o in _occurrences(op)]
        return self._index


def analyse(text: str, path: str) -> OpDocument:
    every: list[m.OpDecl] = []
    lib = check_library(parse_library(text, path, every=every))
    return OpDocument(text, path, lib, every)


# ---- names in an op
@dataclass(slots=True)
class _Binding:
    loc: m.Loc  # where the first input that has it names it
    param: str  # that input
    index: int  # the dim's position in its shape, negative (from the end) after a run; a run's: where it starts
    pattern: m.Loc  # the shape it is in


@dataclass(slots=True)
class _Occ:
    """A name written in an op: `kind` is op, input, output, attr, type, dtype, dim, run, let, function or
    unknown; `target` where it is declared or bound (None: nowhere)."""

    start: int
    end: int
    kind: str
    name: str
    op: m.OpDecl
    target: m.Loc | None = None


def _bindings(op: m.OpDecl) -> tuple[dict[str, _Binding], dict[str, _Binding]]:
    """The op's dim symbols and runs, each with the place that binds it (as the checker binds them)."""
    dims: dict[str, _Binding] = {}
    runs: dict[str, _Binding] = {}
    for p in op.inputs:
        for pat in p.patterns:
            run = pat.run
            for i, d in enumerate(pat.dims):
                if isinstance(d, m.Run):
                    if d.name is not None and d.name not in runs:
                        runs[d.name] = _Binding(d.loc, p.name, i, pat.loc)
                elif isinstance(d, m.Name) and d.id != "_" and d.id not in op.attrs and d.id not in dims:
                    at = i - len(pat.dims) if run is not None and run < i else i
                    dims[d.id] = _Binding(d.loc, p.name, at, pat.loc)
    return dims, runs


def _names(e: m.Expr, naming: bool = False) -> Iterator[tuple[m.Expr, bool]]:
    """The names and calls in an expression; `naming` for the first argument of has/rank/dim/len/value (it names an
    input, output or attribute)."""
    if isinstance(e, (m.Name, m.Call)):
        yield e, naming
    for sub, names in children(e):
        yield from _names(sub, names)


def _occurrences(op: m.OpDecl) -> list[_Occ]:
    dims, runs = _bindings(op)
    params = {p.name: ("input", p.loc) for p in op.inputs} | {p.name: ("output", p.loc) for p in op.outputs}
    out: list[_Occ] = []

    def add(loc: m.Loc, kind: str, name: str, target: m.Loc | None) -> None:
        if loc.line:
            out.append(_Occ(loc.start, loc.end, kind, name, op, target))

    def expr(e: m.Expr) -> None:
        for x, naming in _names(e):
            if isinstance(x, m.Call):
                if x.fn in FUNCTIONS or x.fn == "broadcast":
                    add(m.Loc(x.loc.line, x.loc.col, x.loc.line, x.loc.col + len(x.fn), x.loc.start,
                              x.loc.start + len(x.fn)), "function", x.fn, None)  # fmt: skip
                continue
            assert isinstance(x, m.Name)
            name = x.id
            if name == "_":
                continue
            if naming and name in params:
                add(x.loc, params[name][0], name, params[name][1])
            elif name in op.attrs:
                add(x.loc, "attr", name, op.attrs[name].loc)
            elif name in op.lets:
                add(x.loc, "let", name, op.let_locs.get(name))
            elif name in dims:
                add(x.loc, "dim", name, dims[name].loc)
            elif name in runs:
                add(x.loc, "run", name, runs[name].loc)
            elif name in params:
                add(x.loc, params[name][0], name, params[name][1])
            else:
                add(x.loc, "unknown", name, None)

    def source(loc: m.Loc) -> str:
        return _slice(op, loc)

    add(op.loc, "op", op.name, op.loc)
    for kind, ps in (("input", op.inputs), ("output", op.outputs)):
        for p in ps:
            add(p.loc, kind, p.name, p.loc)
            type_name = source(p.type_loc)
            if type_name in op.types:
                add(p.type_loc, "type", type_name, op.types[type_name].loc)
            elif type_name:
                add(p.type_loc, "dtype", type_name, None)
            for pat in p.patterns:
                for d in pat.dims:
                    if isinstance(d, m.Run):
                        if d.name is not None:
                            add(d.loc, "run", d.name, runs[d.name].loc if d.name in runs else None)
                    else:
                        expr(d)
            if p.same is not None:
                if isinstance(p.same, m.Call) and p.same.fn == "broadcast":
                    expr(m.Call(p.same.loc, "broadcast", ()))
                    for arg in p.same.args:
                        if isinstance(arg, m.Name) and arg.id in params:
                            add(arg.loc, params[arg.id][0], arg.id, params[arg.id][1])
                elif isinstance(p.same, m.Name) and p.same.id in params:
                    add(p.same.loc, params[p.same.id][0], p.same.id, params[p.same.id][1])
            if p.when is not None:
                expr(p.when)
    for a in op.attrs.values():
        add(a.loc, "attr", a.name, a.loc)
    for t in op.types.values():
        add(t.loc, "type", t.name, t.loc)
        for type_loc in t.type_locs:
            add(type_loc, "dtype", source(type_loc), None)
    for s in op.symbols.values():
        if s.name in dims:
            add(s.loc, "dim", s.name, dims[s.name].loc)
        elif s.name in runs:
            add(s.loc, "run", s.name, runs[s.name].loc)
        else:
            add(s.loc, "unknown", s.name, None)
    for name, e in op.lets.items():
        let_loc = op.let_locs.get(name)
        if let_loc is not None:
            add(let_loc, "let", name, let_loc)
        expr(e)
    for r in op.requires:
        expr(r.expr)
    if op.shape is not None:
        for e in op.shape.attrs.values():
            expr(e)
    out.sort(key=lambda o: (o.start, o.end))
    return out


def _slice(op: m.OpDecl, loc: m.Loc) -> str:
    """The text of `loc` inside the op's declaration."""
    base = op.block.start
    if not loc.line or loc.start < base or loc.end > base + len(op.source):
        return ""
    return op.source[loc.start - base : loc.end - base]


def _op_at(doc: OpDocument, offset: int) -> m.OpDecl | None:
    for op in doc.ops:
        if op.block.start <= offset <= op.block.end:
            return op
    return None


def _occ_at(doc: OpDocument, offset: int) -> _Occ | None:
    found = None
    for o in doc.occurrences():
        if o.start <= offset <= o.end:
            if found is None or o.end - o.start < found.end - found.start:
                found = o
        elif o.start > offset:
            break
    return found


# ---- hover
FUNCTION_DOCS = {
    "has": "`has(x)`: whether the node gives the input, output or attribute `x`",
    "rank": "`rank(x)`: the rank of input or output `x`",
    "dim": "`dim(x, i)`: dim `i` of input or output `x` (negative `i` counts from the end)",
    "len": "`len(attr)`: the number of values of a list attribute",
    "value": "`value(x)`: the value of a scalar int input, when known (a constant or a shape value)",
    "min": "`min(a, b, ...)`: the smallest",
    "max": "`max(a, b, ...)`: the largest",
    "cdiv": "`cdiv(a, b)`: ceiling division",
    "broadcast": "`= broadcast(a, b, ...)`: the output has the numpy broadcast of these inputs' shapes (GL301 on "
    "conflict)",
}


def _param_text(op: m.OpDecl, p: m.Param) -> str:
    mark = "?" if p.option == "optional" else ("...?" if p.min_arity == 0 else "...") if p.option == "variadic" else ""
    text = f"{p.name}{mark}: {_slice(op, p.type_loc) or p.type_str}"
    if not p.homogeneous:
        text += " heterogeneous"
    if p.patterns:
        text += " | ".join(_slice(op, pat.loc) for pat in p.patterns)
    if p.same is not None:
        text += f" = {_slice(op, p.same.loc)}"
    if p.when is not None:
        text += f" when {_slice(op, p.when.loc)}"
    return text


def _attr_text(a: m.AttrDecl) -> str:
    default = ""
    if a.default is not None:
        default = f" = {a.default!r}" if isinstance(a.default, str) else f" = {a.default}"
    return f"{a.name}{'?' if not a.required and a.default is None else ''}: {a.type_name}{default}"


def _where(op: m.OpDecl) -> str:
    versions = f"since {op.since}" + (f" until {op.until}" if op.until is not None else "")
    return f"{op.domain or 'ai.onnx'}, {versions}"


def signature_markdown(op: m.OpDecl) -> str:
    """An op's signature, type constraints, attributes and documentation."""
    ins = ", ".join(_param_text(op, p) for p in op.inputs)
    outs = ", ".join(_param_text(op, p) for p in op.outputs)
    out = [f"**{op.name}** ({_where(op)}; the {op.library} op library)", "", "```onnxop", f"({ins})", f"-> ({outs})",
           "```"]  # fmt: skip
    if op.types:
        out.append("")
        for t in op.types.values():
            allowed = ", ".join(a[7:-1] if a.startswith("tensor(") else a for a in t.allowed)
            out.append(f"- `{t.name}`: {allowed}" + (f": {t.doc}" if t.doc else ""))
    if op.attrs:
        out.append("")
        for a in op.attrs.values():
            out.append(f"- `{_attr_text(a)}`" + (f": {a.doc}" if a.doc else ""))
    if op.doc:
        out += ["", op.doc]
    return "\n".join(out)


def declaration_markdown(op: m.OpDecl, opset: int | None = None, max_lines: int = 40) -> str:
    """A declared op for a hover on a node of it: where it is declared, its documentation, its declaration."""
    versions = f"since version {op.since}" + (f" until {op.until}" if op.until is not None else "")
    at = f", opset {opset}" if opset is not None else ""
    where = f"`{Path(op.path).name}` line {op.loc.line}" if op.path else "a library"
    out = [f"**{op.name}** ({op.domain or 'ai.onnx'}{at}; {versions})", "",
           f"declared in the {op.library} op library: {where}"]  # fmt: skip
    if op.doc:
        out += ["", op.doc]
    source = op.source.rstrip().splitlines()
    if source:
        if len(source) > max_lines:
            source = [*source[: max_lines - 1], "  ...", source[-1]]
        out += ["", "```onnxop", *source, "```"]
    return "\n".join(out)


def _line_of(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end >= 0 else len(text)].strip()


def _code(text: str) -> str:
    return f"```onnxop\n{text}\n```"


def hover(doc: OpDocument, offset: int) -> tuple[str, Span] | None:
    """The hover text at an offset (Markdown) and the span it is about."""
    o = _occ_at(doc, offset)
    if o is None:
        return None
    return _hover_text(doc, o), (o.start, o.end)


def _hover_text(doc: OpDocument, o: _Occ) -> str:
    op, name = o.op, o.name
    declared = _code(_line_of(doc.text, o.target.start)) if o.target is not None else ""
    if o.kind == "op":
        return signature_markdown(op)
    if o.kind in ("input", "output"):
        params = op.inputs if o.kind == "input" else op.outputs
        for i, p in enumerate(params):
            if p.name == name:
                head = f"**{name}**: {o.kind} {i} of {op.name}"
                return "\n\n".join(x for x in (head, _code(_param_text(op, p)), p.doc) if x)
    if o.kind == "attr" and name in op.attrs:
        a = op.attrs[name]
        head = f"**{name}**: attribute of {op.name}, " + ("required" if a.required else "optional")
        return "\n\n".join(x for x in (head, _code(_attr_text(a)), a.doc) if x)
    if o.kind == "type" and name in op.types:
        t = op.types[name]
        users = [p.name for p in (*op.inputs, *op.outputs) if _slice(op, p.type_loc) == name]
        head = f"**{name}**: type constraint of {op.name}" + (f" ({', '.join(users)})" if users else "")
        return "\n\n".join(x for x in (head, declared, t.doc) if x)
    if o.kind in ("dim", "run"):
        dims, runs = _bindings(op)
        b = (dims if o.kind == "dim" else runs).get(name)
        what = "dim symbol" if o.kind == "dim" else "run of dims"
        shown = f"\\*{name}" if o.kind == "run" else name
        if b is None:
            return f"**{shown}**: {what} that no input's shape binds"
        pattern = _slice(op, b.pattern)
        head = f"**{shown}**: {what} of {op.name}, bound by input `{b.param}`" + (
            f" (dim {b.index} of `{pattern}`)" if o.kind == "dim" else f" (`{pattern}`)")  # fmt: skip
        sym = op.symbols.get(name)
        extra = ""
        if sym is not None:
            extra = sym.doc
            if sym.code:
                extra += f"{'; ' if extra else ''}a disagreement is reported as {sym.code}"
        return "\n\n".join(x for x in (head, extra, declared) if x)
    if o.kind == "let":
        e = op.lets.get(name)
        return f"**{name}** = `{_slice(op, e.loc)}`" if e is not None else f"**{name}**"
    if o.kind == "function":
        return FUNCTION_DOCS.get(name, f"`{name}()`")
    if o.kind == "dtype":
        from graphlsp.oplib.checker import normalize_type

        norm = normalize_type(name)
        return f"**{name}**: {'the type ' + norm if norm else 'not a type'}"
    return f"**{name}**: neither an attribute nor a dim of an input's shape of {op.name}"


# ---- definition
def definition(doc: OpDocument, offset: int) -> Span | None:
    """Where the name at an offset is declared (an input, attribute, type constraint, `let`) or bound (a dim
    symbol or run: the first input shape that has it)."""
    o = _occ_at(doc, offset)
    if o is None or o.target is None:
        return None
    return o.target.start, o.target.end


# ---- completion
@dataclass(slots=True)
class Completion:
    label: str
    kind: str  # keyword, type, dtype, dim, run, attr, input, output, let, function
    detail: str = ""


_WORD = re.compile(r"[A-Za-z0-9_]*\Z")
_WRAPPERS = ("tensor", "seq", "optional", "sparse_tensor", "map")


def _in_comment_or_string(text: str, offset: int) -> bool:
    line = text[text.rfind("\n", 0, offset) + 1 : offset]
    quoted = False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return True
    return quoted


def completions(doc: OpDocument, offset: int) -> list[Completion]:
    """What may be typed at an offset: the language's keywords where a declaration or a statement starts, type
    constraints and element types after `input x:`, attribute types after `attr x:`, and inside shapes and
    expressions the op's dim symbols, runs, attributes, `let`s and functions."""
    text = doc.text
    offset = max(0, min(offset, len(text)))
    if _in_comment_or_string(text, offset):
        return []
    word = _WORD.search(text, 0, offset)
    start = word.start() if word is not None else offset
    toks = list(_tokens(text, 0, start))
    depth = 0
    for t in toks:
        depth = depth + 1 if t.text == "{" else max(0, depth - 1) if t.text == "}" else depth
    line_start = text.rfind("\n", 0, start) + 1
    fresh_line = not text[line_start:start].strip()
    if depth == 0:
        if fresh_line:
            return [Completion(k, "keyword") for k in ITEM_KEYWORDS]
        head = []
        for t in reversed(toks):
            head.append(t.text)
            if t.text in ITEM_KEYWORDS and t.depth == 0:
                break
        head.reverse()
        if head and head[0] == "op" and len(head) >= 2:
            return [Completion(k, "keyword") for k in ("since", "until") if k not in head]
        return []
    op = _op_at(doc, start)
    if fresh_line:
        return [Completion(k, "keyword") for k in MEMBER_KEYWORDS]
    stmt: list[str] = []
    for t in reversed(toks):
        if t.text == "{" and t.depth == depth - 1:
            break
        stmt.append(t.text)
        if t.text in MEMBER_KEYWORDS and t.line_start:
            break
    stmt.reverse()
    if not stmt or stmt[0] not in MEMBER_KEYWORDS or op is None:
        return []
    return _statement_completions(op, stmt)


def _statement_completions(op: m.OpDecl, stmt: list[str]) -> list[Completion]:
    keyword, rest = stmt[0], stmt[1:]
    colon = next((i for i, t in enumerate(rest) if t.endswith(":") and not t[0].isalnum()), None)  # `:`, `?:`
    after = rest[colon + 1 :] if colon is not None else None
    if keyword in ("input", "output"):
        if after is None:
            return []
        if after.count("[") > after.count("]"):
            return _expression_completions(op, after, keyword)
        if "=" in after:
            return [Completion(p.name, "input") for p in op.inputs] + [Completion("broadcast", "function")]
        if "when" in after:
            return _expression_completions(op, after, keyword)
        if not after or after[-1] in ("(", ","):
            return _type_completions(op, constraints=not after)
        return []
    if keyword == "type":
        return _type_completions(op, constraints=False) if after is not None else []
    if keyword == "attr":
        if after != []:
            return []
        return [Completion(t, "type", "attribute type") for t in sorted(ATTR_TYPES)]
    if keyword == "dim":
        dims, _ = _bindings(op)
        return [Completion(n, "dim", f"bound by input {b.param}") for n, b in dims.items()] if not rest else []
    if keyword == "let":
        return _expression_completions(op, rest, keyword) if "=" in rest else []
    if keyword == "require":
        return _expression_completions(op, rest, keyword) if "else" not in rest else []
    if keyword == "shape":
        if not rest:
            return [Completion("python", "keyword", "a Python shape function computes the outputs")]
        if "with" in rest:
            return _expression_completions(op, rest[rest.index("with") + 1 :], keyword)
        if rest.count("(") > rest.count(")"):
            return [Completion(p.name, "input") for p in op.inputs] + [Completion("_", "keyword", "no input")]
    return []


def _type_completions(op: m.OpDecl, constraints: bool) -> list[Completion]:
    out = []
    if constraints:
        for t in op.types.values():
            allowed = ", ".join(a[7:-1] if a.startswith("tensor(") else a for a in t.allowed)
            out.append(Completion(t.name, "type", f"type constraint: {allowed}"))
    out += [Completion(w, "keyword", "a type of types") for w in _WRAPPERS]
    out += [Completion(e, "dtype", "element type") for e in sorted(element_types())]
    return out


def _expression_completions(op: m.OpDecl, stmt: list[str], keyword: str) -> list[Completion]:
    # the first argument of has/rank/dim/len/value names an input, output or attribute
    if len(stmt) >= 2 and stmt[-1] == "(" and stmt[-2] in NAMED:
        fn = stmt[-2]
        out = [Completion(p.name, "input") for p in op.inputs]
        if fn != "value":
            out += [Completion(p.name, "output") for p in op.outputs]
        if fn in ("has", "len"):
            out += [Completion(a, "attr") for a in op.attrs]
        return out
    dims, runs = _bindings(op)
    out = [Completion(n, "dim", f"dim {b.index} of input {b.param}") for n, b in dims.items()]
    if keyword == "output":
        out += [Completion(f"*{n}", "run", f"the run of dims of input {b.param}") for n, b in runs.items()]
    out += [Completion(a.name, "attr", f"attribute: {a.type_name}") for a in op.attrs.values()]
    out += [Completion(n, "let", "let") for n in op.lets]
    out += [Completion(f, "function", FUNCTION_DOCS.get(f, "")) for f in sorted(FUNCTIONS)]
    return out


# ---- symbols
@dataclass(slots=True)
class OpSymbol:
    name: str
    kind: str  # library, op, input, output, attr, type
    span: Span
    selection: Span
    detail: str = ""
    children: list[OpSymbol] = field(default_factory=list)


def symbols(doc: OpDocument) -> list[OpSymbol]:
    """The outline: the library, its ops, and below each op its inputs, outputs, attributes and type constraints."""
    text = doc.text
    found = re.search(r"(?m)^\s*library\s+([A-Za-z_][A-Za-z0-9_]*)", text)
    selection = (found.start(1), found.end(1)) if found is not None else (0, 0)
    root = OpSymbol(doc.library.name, "library", (0, len(text)), selection, doc.library.version)
    for op in doc.ops:
        if not op.loc.line:
            continue
        end = max(op.block.end, op.loc.end)
        s = OpSymbol(op.name, "op", (op.block.start, end), (op.loc.start, op.loc.end), _where(op))
        for kind, params in (("input", op.inputs), ("output", op.outputs)):
            for p in params:
                if p.loc.line:
                    s.children.append(OpSymbol(p.name, kind, (p.loc.start, p.loc.end), (p.loc.start, p.loc.end),
                                               _param_text(op, p).partition(": ")[2]))  # fmt: skip
        for a in op.attrs.values():
            s.children.append(OpSymbol(a.name, "attr", (a.loc.start, a.loc.end), (a.loc.start, a.loc.end),
                                       _attr_text(a).partition(": ")[2]))  # fmt: skip
        for t in op.types.values():
            allowed = ", ".join(a[7:-1] if a.startswith("tensor(") else a for a in t.allowed)
            s.children.append(OpSymbol(t.name, "type", (t.loc.start, t.loc.end), (t.loc.start, t.loc.end), allowed))
        s.children.sort(key=lambda c: c.span)
        root.children.append(s)
    return [root]


__all__ = [
    "DECLARATION", "SYNTAX", "WARNING", "Completion", "OpDocument", "OpSymbol", "analyse", "completions",
    "declaration_markdown", "definition", "hover", "problem_code", "signature_markdown", "symbols",
]  # fmt: skip
