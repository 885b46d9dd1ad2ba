"""What a library's declarations must satisfy before graphlsp uses them: types and constraints that exist, attribute
defaults of the declared type, dim symbols that some input binds, functions that exist, and a `shape` statement
that names an onnx op. An op with an error is left out of the library (its nodes are then reported as not
declared); warnings keep it.

Names in a shape contract: an attribute's name stands for its value; any other name in an input's shape is a dim
symbol, bound by the first input that has it and checked against every other place that has it; outputs, `require`
and `when` use the bound symbols and the attributes. `has`, `rank` and `dim` take an input's (or output's) name.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from graphlsp.graph import ops as graph_ops
from graphlsp.graph.enums import TensorProto
from graphlsp.oplib import model as m

ATTR_TYPES = frozenset({
    "int", "float", "string", "tensor", "graph", "sparse_tensor", "type_proto", "ints", "floats", "strings",
    "tensors", "graphs", "sparse_tensors", "type_protos",
})  # fmt: skip
# function -> (min args, max args); `broadcast` only as an output's `= broadcast(a, b)`
FUNCTIONS: dict[str, tuple[int, int]] = {
    "has": (1, 1), "rank": (1, 1), "dim": (2, 2), "len": (1, 1), "value": (1, 1), "min": (1, 64), "max": (1, 64),
    "cdiv": (2, 2),
}  # fmt: skip
NAMED = ("has", "rank", "dim", "len", "value")  # functions whose first argument names an input, output or attribute
WRAPPERS = ("seq", "optional", "sparse_tensor", "tensor")


@cache
def element_types() -> frozenset[str]:
    """onnx's element type names as type strings write them (float, float16, int64, float8e4m3fn, ...)."""
    names = TensorProto.DataType.keys()  # noqa: SIM118 (a protobuf enum wrapper, not a dict)
    return frozenset(name.lower() for name in names if name != "UNDEFINED")


def normalize_type(t: str) -> str | None:
    """A DSL type to onnx's type string: `float` is `tensor(float)`, `seq(float)` is `seq(tensor(float))`; None when
    it is not a type."""
    t = t.replace(" ", "")
    if t in element_types():
        return f"tensor({t})"
    if "(" not in t or not t.endswith(")"):
        return None
    head, _, inner = t[:-1].partition("(")
    if head in ("tensor", "sparse_tensor"):
        return f"{head}({inner})" if inner in element_types() else None
    if head in ("seq", "optional"):
        arg = normalize_type(inner)
        return f"{head}({arg})" if arg is not None else None
    if head == "map":
        key, _, value = inner.partition(",")
        arg = normalize_type(value)
        return f"map({key}, {arg})" if key in element_types() and arg is not None else None
    return None


class _Checker:
    def __init__(self, op: m.OpDecl, path: str) -> None:
        self.op = op
        self.path = path
        self.problems: list[m.Problem] = []
        self.bound: dict[str, m.Loc] = {}  # dim symbols some input's shape binds
        self.runs: dict[str, m.Loc] = {}  # runs (`*N`) some input's shape binds

    def error(self, loc: m.Loc, message: str, severity: str = "error") -> None:
        self.problems.append(m.Problem(self.path, loc if loc.line else self.op.loc, message, severity))

    def run(self) -> list[m.Problem]:
        op = self.op
        if op.until is not None and op.until < op.since:
            self.error(op.loc, f"'until {op.until}' is before 'since {op.since}'")
        if (op.domain == "" or op.domain in onnx_domains()) and _onnx_has(op.name, op.domain):
            where = op.domain or "ai.onnx"
            self.error(op.loc, f"{where} already defines '{op.name}': onnx's schema is used, this declaration "
                       "never is", "warning")  # fmt: skip
        self.types()
        self.attrs()
        for kind, params in (("input", op.inputs), ("output", op.outputs)):
            self.params(kind, params)
        for p in op.inputs:
            for pat in p.patterns:
                self.bind(p, pat)
        for p in op.inputs:
            for pat in p.patterns:
                for dim in pat.dims:
                    if isinstance(dim, m.Expr) and not isinstance(dim, m.Name):
                        self.expr(dim, "input")
        for name, e in op.lets.items():
            if name in op.attrs or name in self.bound or name in self.runs:
                self.error(e.loc, f"'let {name}' hides an attribute or a dim of the same name")
        for e in op.lets.values():
            self.expr(e, "let")
        for p in op.outputs:
            self.output(p)
        for r in op.requires:
            self.expr(r.expr, "require")
            self.code(r.code, r.loc)
        for s in op.symbols.values():
            if s.name not in self.bound and s.name not in self.runs:
                self.error(s.loc, f"dim '{s.name}' is not in any input's shape", "warning")
            self.code(s.code, s.loc)
        if op.shape is not None:
            self.delegate(op.shape)
        return self.problems

    # ---- signature
    def types(self) -> None:
        used = {p.type_str for p in (*self.op.inputs, *self.op.outputs)}
        for t in self.op.types.values():
            if normalize_type(t.name) is not None:
                self.error(t.loc, f"type constraint '{t.name}' has the name of a type; use a name such as T")
            if not t.allowed:
                self.error(t.loc, f"type constraint '{t.name}' allows no type")
            for i, a in enumerate(t.allowed):
                norm = normalize_type(a)
                where = t.type_locs[i] if i < len(t.type_locs) else t.loc
                if norm is None:
                    self.error(where, f"'{a}' is not a type: use an element type (float, int64, ...) or tensor(...), "
                               "seq(...), optional(...), sparse_tensor(...), map(...)")  # fmt: skip
                else:
                    t.allowed[i] = norm
            if t.name not in used:
                self.error(t.loc, f"type constraint '{t.name}' is used by no input or output", "warning")

    def params(self, kind: str, params: list[m.Param]) -> None:
        seen: dict[str, m.Loc] = {}
        for i, p in enumerate(params):
            if p.name in seen:
                self.error(p.loc, f"{kind} '{p.name}' is declared twice (first at {seen[p.name]})")
            seen.setdefault(p.name, p.loc)
            if p.option == "variadic" and i != len(params) - 1:
                self.error(p.loc, f"only the last {kind} can be variadic ('...')")
            if p.type_str not in self.op.types:
                norm = normalize_type(p.type_str)
                if norm is None:
                    self.error(p.type_loc, f"'{p.type_str}' is neither a type constraint of {self.op.name} (declare "
                               f"it: `type {p.type_str}: float, float16`) nor a type")  # fmt: skip
                else:
                    p.type_str = norm
            if kind == "input" and (p.same is not None or p.when is not None):
                self.error(p.loc, "only an output's shape can be given with '=' or 'when'")

    def attrs(self) -> None:
        for a in self.op.attrs.values():
            if a.type_name not in ATTR_TYPES:
                self.error(a.loc, f"'{a.type_name}' is not an attribute type (one of {', '.join(sorted(ATTR_TYPES))})")
                continue
            if a.default is None:
                continue
            problem = _default_problem(a.type_name, a.default)
            if problem:
                self.error(a.loc, f"the default of '{a.name}' {problem}")
            elif a.type_name == "float":
                a.default = float(a.default)
            elif a.type_name == "floats":
                a.default = [float(v) for v in a.default]

    # ---- shape contract
    def bind(self, p: m.Param, pat: m.Pattern) -> None:
        runs = [d for d in pat.dims if isinstance(d, m.Run)]
        if len(runs) > 1:
            self.error(runs[1].loc, "a shape has at most one run of dims ('*N' or '...')")
        for dim in pat.dims:
            if isinstance(dim, m.Run):
                if dim.name is not None:
                    self.runs.setdefault(dim.name, dim.loc)
            elif isinstance(dim, m.Name) and dim.id != "_" and dim.id not in self.op.attrs:
                self.bound.setdefault(dim.id, dim.loc)
        for name in self.runs:
            if name in self.bound:
                self.error(self.runs[name], f"'{name}' is a run of dims ('*{name}') and a single dim")

    def output(self, p: m.Param) -> None:
        for pat in p.patterns:
            for dim in pat.dims:
                if isinstance(dim, m.Run):
                    if dim.name is None:
                        self.error(dim.loc, "an output's shape cannot have '...': name the run in an input ('*N') "
                                   "and write '*N' here")  # fmt: skip
                    elif dim.name not in self.runs:
                        self.error(dim.loc, f"'*{dim.name}' is not a run of any input's shape")
                elif isinstance(dim, m.Name) and dim.id == "_":
                    continue  # an output dim nothing determines
                else:
                    self.expr(dim, "output")
        if len(p.patterns) > 1:
            self.error(p.patterns[1].loc, "an output has one shape: use `x if cond else y` inside it to choose")
        if p.same is not None:
            self.same(p.same)
        if p.when is not None:
            self.expr(p.when, "when")

    def same(self, e: m.Expr) -> None:
        if isinstance(e, m.Name):
            if self.op.input_index(e.id) is None:
                self.error(e.loc, f"'= {e.id}': {self.op.name} has no input '{e.id}'")
            return
        if isinstance(e, m.Call) and e.fn == "broadcast":
            if not e.args:
                self.error(e.loc, "broadcast() needs inputs")
            for a in e.args:
                if not isinstance(a, m.Name) or self.op.input_index(a.id) is None:
                    self.error(a.loc, "broadcast() takes the op's inputs")
            return
        self.error(e.loc, "after '=' an output takes an input's shape (`= x`) or broadcasts inputs "
                   "(`= broadcast(a, b)`)")  # fmt: skip

    def expr(self, e: m.Expr, where: str) -> None:
        for x in walk(e):
            if isinstance(x, m.Name):
                if x.id in self.op.attrs or x.id in self.bound or x.id in self.op.lets or x.id == "_":
                    continue
                if x.id in self.runs:
                    self.error(x.loc, f"'{x.id}' is a run of dims: write '*{x.id}' as a whole entry of a shape")
                elif where == "input":
                    self.error(x.loc, f"'{x.id}' is neither an attribute nor a dim of an input's shape: inside an "
                               "expression a dim must also appear alone in some input's shape")  # fmt: skip
                else:
                    self.error(x.loc, f"'{x.id}' is neither an attribute nor a dim of an input's shape")
            elif isinstance(x, m.Call):
                self.call(x)

    def call(self, x: m.Call) -> None:
        arity = FUNCTIONS.get(x.fn)
        if arity is None:
            known = ", ".join(sorted(FUNCTIONS))
            hint = " (only as an output's `= broadcast(a, b)`)" if x.fn == "broadcast" else ""
            self.error(x.loc, f"unknown function '{x.fn}'{hint}; the functions are {known}")
            return
        lo, hi = arity
        if not lo <= len(x.args) <= hi:
            self.error(x.loc, f"{x.fn}() takes {lo if lo == hi else f'{lo} to {hi}'} argument(s), got {len(x.args)}")
            return
        if x.fn in NAMED:
            arg = x.args[0]
            names = {p.name for p in (*self.op.inputs, *self.op.outputs)}
            if x.fn in ("has", "len"):
                names |= set(self.op.attrs)
            if x.fn == "value":
                names = {p.name for p in self.op.inputs}
            if not isinstance(arg, m.Name) or arg.id not in names:
                what = {"has": "an input, output or attribute", "len": "an attribute", "rank": "an input or output",
                        "dim": "an input or output", "value": "an input"}[x.fn]  # fmt: skip
                self.error(arg.loc, f"{x.fn}() takes the name of {what} of {self.op.name}")

    def code(self, code: str, loc: m.Loc) -> None:
        if code and not code.startswith("GL3"):
            self.error(loc, f"{code}: a shape contract reports shape and type codes (GL3xx)")

    def delegate(self, d: m.Delegate) -> None:
        if d.python:
            return
        if not _onnx_has(d.op, d.domain):
            self.error(d.loc, f"'shape {d.op}(...)': onnx has no op '{d.op}'" + (f" in '{d.domain}'" if d.domain
                                                                                  else ""))  # fmt: skip
            return
        for a in d.args:
            if a is not None and self.op.input_index(a) is None:
                self.error(d.loc, f"'{a}' is not an input of {self.op.name} (use '_' to leave an input out)")
        for o in d.outs or []:
            if o is not None and self.op.output_index(o) is None:
                self.error(d.loc, f"'{o}' is not an output of {self.op.name}")
        for e in d.attrs.values():
            self.expr(e, "with")


def children(e: m.Expr) -> Iterator[tuple[m.Expr, bool]]:
    """The expressions directly inside `e`, in source order, each with whether it names an input, output or
    attribute (the first argument of has/rank/dim/len/value) rather than standing for a value. The one walk over
    the op DSL's expressions: `walk` here and the editor's name lookup (`query._names`) both go through it."""
    if isinstance(e, m.Call):
        for i, a in enumerate(e.args):
            yield a, i == 0 and e.fn in NAMED
    elif isinstance(e, m.Index):
        yield e.base, False
        yield e.index, False
    elif isinstance(e, (m.BinOp, m.Compare, m.BoolOp)):
        yield e.left, False
        yield e.right, False
    elif isinstance(e, (m.Neg, m.Not)):
        yield e.arg, False
    elif isinstance(e, m.MemberOf):
        yield e.arg, False
        for o in e.options:
            yield o, False
    elif isinstance(e, m.Cond):
        yield e.test, False
        yield e.then, False
        yield e.other, False


def walk(e: m.Expr) -> Iterator[m.Expr]:
    """`e` and every expression inside it that stands for a value (a name that names an input is left out)."""
    yield e
    for sub, naming in children(e):
        if not naming:
            yield from walk(sub)


def _default_problem(type_name: str, value: object) -> str:
    def number(v: object) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    ok = {
        "int": lambda v: isinstance(v, int),
        "float": number,
        "string": lambda v: isinstance(v, str),
        "ints": lambda v: isinstance(v, list) and all(isinstance(x, int) for x in v),
        "floats": lambda v: isinstance(v, list) and all(number(x) for x in v),
        "strings": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    }.get(type_name)
    if ok is None:
        return f"cannot be written: a {type_name} attribute has no default in the DSL"
    return "" if ok(value) else f"must be {type_name}, got {value!r}"


@cache
def onnx_domains() -> frozenset[str]:
    """The domains onnx has schemas for ("" for ai.onnx): read from the cached schema history."""
    return frozenset(graph_ops.known_domains())


@cache
def _onnx_has(op: str, domain: str) -> bool:
    import onnx.defs

    try:
        return bool(onnx.defs.has(op, domain))
    except Exception:
        return False


def check_library(lib: m.Library) -> m.Library:
    """Check every declaration; those with an error are removed (and their problems added to the library's)."""
    kept: list[m.OpDecl] = []
    seen: dict[tuple[str, str, int], m.OpDecl] = {}
    for op in lib.ops:
        problems = _Checker(op, lib.path).run()
        key = (op.domain, op.name, op.since)
        if key in seen:
            first = seen[key]
            problems.append(m.Problem(lib.path, op.loc, f"{op.qualified} since {op.since} is already declared at "
                                      f"{first.loc}"))  # fmt: skip
        lib.problems += problems
        if any(p.severity == "error" for p in problems):
            continue
        seen[key] = op
        kept.append(op)
    lib.ops = kept
    lib.problems.sort(key=lambda p: (p.loc.line, p.loc.col))
    return lib
