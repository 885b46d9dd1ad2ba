"""The op DSL's syntax tree: libraries, op declarations, parameters, attributes, shape contracts, expressions.

Every element keeps where it is written (`Loc`: 1-based line and column, and offsets into the file), so the parser,
the checker and the shape contracts report at the exact place.
"""

from __future__ import annotations

from typing import Any, ClassVar


class Record:
    """Named fields (`_fields`, in constructor order) with what @dataclass would give them: equal to a record of
    the same class with equal fields (unhashable, as a mutable dataclass is), printed `Name(field=value, ...)`,
    pickled by its fields. Written out rather than made by @dataclass, which compiles each class's methods at every
    import: 12 ms for this module's 25 classes, paid by every check of a model with a contrib op."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, f) for f in self._fields])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()  # type: ignore[attr-defined]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._fields)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), self._values()


class Frozen(Record):
    """A record whose fields are set once, in `__init__` (`_set`): hashable by its fields, as a frozen dataclass."""

    __slots__ = ()

    def _set(self, *values: Any) -> None:
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}'")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field '{name}'")


class Loc(Frozen):
    """A range in a library file: 1-based lines and columns (end exclusive), offsets into the text."""

    __slots__ = _fields = ("line", "col", "end_line", "end_col", "start", "end")
    line: int
    col: int
    end_line: int
    end_col: int
    start: int
    end: int

    def __init__(self, line: int, col: int, end_line: int, end_col: int, start: int = 0, end: int = 0) -> None:
        self._set(line, col, end_line, end_col, start, end)

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


NO_LOC = Loc(0, 0, 0, 0)


class Problem(Frozen):
    """A syntax or declaration error (or warning) in a library file. `severity`: error or warning; `code`: GL601
    for a syntax error, "" for a declaration's problem (GL602 error, GL603 warning)."""

    __slots__ = _fields = ("path", "loc", "message", "severity", "code")
    path: str
    loc: Loc
    message: str
    severity: str
    code: str

    def __init__(self, path: str, loc: Loc, message: str, severity: str = "error", code: str = "") -> None:
        self._set(path, loc, message, severity, code)

    def __str__(self) -> str:
        return f"{self.path}:{self.loc.line}:{self.loc.col}: {self.severity}: {self.message}"


# ---- expressions
class Expr(Frozen):
    """An expression of a shape contract, where it is written."""

    __slots__ = ("loc",)
    _fields: ClassVar[tuple[str, ...]] = ("loc",)
    loc: Loc

    def __init__(self, loc: Loc) -> None:
        self._set(loc)


class Num(Expr):
    __slots__ = ("value",)
    _fields = ("loc", "value")
    value: int | float

    def __init__(self, loc: Loc, value: int | float) -> None:
        self._set(loc, value)


class Str(Expr):
    __slots__ = ("value",)
    _fields = ("loc", "value")
    value: str

    def __init__(self, loc: Loc, value: str) -> None:
        self._set(loc, value)


class Name(Expr):
    __slots__ = ("id",)
    _fields = ("loc", "id")
    id: str

    def __init__(self, loc: Loc, id: str) -> None:  # noqa: A002 (the field's name)
        self._set(loc, id)


class Call(Expr):
    __slots__ = ("fn", "args")
    _fields = ("loc", "fn", "args")
    fn: str
    args: tuple[Expr, ...]

    def __init__(self, loc: Loc, fn: str, args: tuple[Expr, ...]) -> None:
        self._set(loc, fn, args)


class Index(Expr):
    __slots__ = ("base", "index")
    _fields = ("loc", "base", "index")
    base: Expr
    index: Expr

    def __init__(self, loc: Loc, base: Expr, index: Expr) -> None:
        self._set(loc, base, index)


class BinOp(Expr):
    """`op`: + - * / // %"""

    __slots__ = ("op", "left", "right")
    _fields = ("loc", "op", "left", "right")
    op: str
    left: Expr
    right: Expr

    def __init__(self, loc: Loc, op: str, left: Expr, right: Expr) -> None:
        self._set(loc, op, left, right)


class Neg(Expr):
    __slots__ = ("arg",)
    _fields = ("loc", "arg")
    arg: Expr

    def __init__(self, loc: Loc, arg: Expr) -> None:
        self._set(loc, arg)


class Compare(Expr):
    """`op`: == != < <= > >="""

    __slots__ = ("op", "left", "right")
    _fields = ("loc", "op", "left", "right")
    op: str
    left: Expr
    right: Expr

    def __init__(self, loc: Loc, op: str, left: Expr, right: Expr) -> None:
        self._set(loc, op, left, right)


class MemberOf(Expr):
    __slots__ = ("arg", "options")
    _fields = ("loc", "arg", "options")
    arg: Expr
    options: tuple[Expr, ...]

    def __init__(self, loc: Loc, arg: Expr, options: tuple[Expr, ...]) -> None:
        self._set(loc, arg, options)


class BoolOp(Expr):
    """`op`: and, or"""

    __slots__ = ("op", "left", "right")
    _fields = ("loc", "op", "left", "right")
    op: str
    left: Expr
    right: Expr

    def __init__(self, loc: Loc, op: str, left: Expr, right: Expr) -> None:
        self._set(loc, op, left, right)


class Not(Expr):
    __slots__ = ("arg",)
    _fields = ("loc", "arg")
    arg: Expr

    def __init__(self, loc: Loc, arg: Expr) -> None:
        self._set(loc, arg)


class Cond(Expr):
    __slots__ = ("test", "then", "other")
    _fields = ("loc", "test", "then", "other")
    test: Expr
    then: Expr
    other: Expr

    def __init__(self, loc: Loc, test: Expr, then: Expr, other: Expr) -> None:
        self._set(loc, test, then, other)


# ---- shape patterns
class Run(Frozen):
    """`*N` (a named run of dims, any length) or `...` (an anonymous one) inside a shape pattern."""

    __slots__ = _fields = ("name", "loc")
    name: str | None
    loc: Loc

    def __init__(self, name: str | None, loc: Loc) -> None:
        self._set(name, loc)


DimPat = Expr | Run


class Pattern(Frozen):
    """A shape pattern: `[B, S, *rest]`."""

    __slots__ = _fields = ("dims", "loc")
    dims: tuple[DimPat, ...]
    loc: Loc

    def __init__(self, dims: tuple[DimPat, ...], loc: Loc) -> None:
        self._set(dims, loc)

    @property
    def run(self) -> int | None:
        """The index of the run, if the pattern has one."""
        for i, x in enumerate(self.dims):
            if isinstance(x, Run):
                return i
        return None

    def fits(self, rank: int) -> bool:
        fixed = len(self.dims) - (1 if self.run is not None else 0)
        return rank >= fixed if self.run is not None else rank == fixed

    def describe(self) -> str:
        """`rank 3` or `rank 2 or more`."""
        fixed = len(self.dims) - (1 if self.run is not None else 0)
        return f"rank {fixed} or more" if self.run is not None else f"rank {fixed}"


# ---- declarations
class Param(Record):
    """An input or output: `name: T[B, S, H]`, `name?: T` (optional), `name...: T` (variadic). `type_str`: a type
    constraint's name ("T") or a concrete type ("tensor(int32)"); `option`: single, optional, variadic;
    `patterns`: the shapes it may have (alternatives, tried by rank); outputs: `same` is `= x` (x's shape) or
    `= broadcast(a, b)`, `when` the condition under which the op produces it."""

    __slots__ = _fields = ("name", "type_str", "option", "loc", "type_loc", "min_arity", "homogeneous", "patterns",
                           "same", "when", "doc")  # fmt: skip

    def __init__(self, name: str, type_str: str, option: str, loc: Loc, type_loc: Loc = NO_LOC, min_arity: int = 1,
                 homogeneous: bool = True, patterns: tuple[Pattern, ...] = (), same: Expr | None = None,
                 when: Expr | None = None, doc: str = "") -> None:  # fmt: skip
        self.name = name
        self.type_str = type_str
        self.option = option
        self.loc = loc
        self.type_loc = type_loc
        self.min_arity = min_arity
        self.homogeneous = homogeneous
        self.patterns = patterns
        self.same = same
        self.when = when
        self.doc = doc


class AttrDecl(Record):
    """An attribute: `type_name` int, float, string, ints, floats, strings, tensor, graph, ...; `default` a Python
    value (None when there is none)."""

    __slots__ = _fields = ("name", "type_name", "required", "default", "loc", "doc")

    def __init__(self, name: str, type_name: str, required: bool, default: Any, loc: Loc, doc: str = "") -> None:
        self.name = name
        self.type_name = type_name
        self.required = required
        self.default = default
        self.loc = loc
        self.doc = doc


class TypeDecl(Record):
    """A type constraint: `allowed` holds onnx type strings (tensor(float), seq(tensor(int64)), ...)."""

    __slots__ = _fields = ("name", "allowed", "loc", "doc", "type_locs")

    def __init__(self, name: str, allowed: list[str], loc: Loc, doc: str = "", type_locs: list[Loc] | None = None
                 ) -> None:  # fmt: skip
        self.name = name
        self.allowed = allowed
        self.loc = loc
        self.doc = doc
        self.type_locs = type_locs if type_locs is not None else []


class Require(Record):
    """`require <condition> else GL302 "message"`: a relation the node must satisfy."""

    __slots__ = _fields = ("expr", "code", "message", "loc")

    def __init__(self, expr: Expr, code: str, message: str, loc: Loc) -> None:
        self.expr = expr
        self.code = code
        self.message = message
        self.loc = loc


class Symbol(Record):
    """`dim H "hidden size" GL302`: what a dim symbol means, and the code a disagreement on it is reported as."""

    __slots__ = _fields = ("name", "doc", "code", "loc")

    def __init__(self, name: str, doc: str, code: str, loc: Loc) -> None:
        self.name = name
        self.doc = doc
        self.code = code
        self.loc = loc


class Delegate(Record):
    """`shape Conv@11(X, W, B) -> (Y) with group = 1`: the outputs are what onnx's op computes from these inputs
    (`_` for an input left out), with the node's attributes (and the ones given). `python`: a shape function
    registered in Python (`graphlsp.ops.registry.shape_fn(..., domain=...)`) computes them."""

    __slots__ = _fields = ("loc", "python", "op", "domain", "version", "args", "outs", "attrs")

    def __init__(self, loc: Loc, python: bool = False, op: str = "", domain: str = "", version: int | None = None,
                 args: list[str | None] | None = None, outs: list[str | None] | None = None,
                 attrs: dict[str, Expr] | None = None) -> None:  # fmt: skip
        self.loc = loc
        self.python = python
        self.op = op
        self.domain = domain
        self.version = version
        self.args: list[str | None] = args if args is not None else []
        self.outs = outs
        self.attrs: dict[str, Expr] = attrs if attrs is not None else {}


class OpDecl(Record):
    """An op declaration. `loc`: the op's name; `until`: the last opset version that has it (None: every later
    one); `lets`: `let L = dim(key, 1) if has(key) else S`, `let_locs` where each names its expression; `library`:
    the library's name (a runtime: onnxruntime); `path`: the file it is declared in; `block`: the whole
    declaration, `source` its text (for hovers)."""

    __slots__ = _fields = ("domain", "name", "loc", "since", "until", "doc", "inputs", "outputs", "attrs", "types",
                           "requires", "symbols", "lets", "let_locs", "shape", "alternative", "library", "path",
                           "block", "source")  # fmt: skip

    def __init__(self, domain: str, name: str, loc: Loc, since: int = 1, until: int | None = None, doc: str = "",
                 inputs: list[Param] | None = None, outputs: list[Param] | None = None,
                 attrs: dict[str, AttrDecl] | None = None, types: dict[str, TypeDecl] | None = None,
                 requires: list[Require] | None = None, symbols: dict[str, Symbol] | None = None,
                 lets: dict[str, Expr] | None = None, let_locs: dict[str, Loc] | None = None,
                 shape: Delegate | None = None, alternative: str = "", library: str = "", path: str = "",
                 block: Loc = NO_LOC, source: str = "") -> None:  # fmt: skip
        self.domain = domain
        self.name = name
        self.loc = loc
        self.since = since
        self.until = until
        self.doc = doc
        self.inputs: list[Param] = inputs if inputs is not None else []
        self.outputs: list[Param] = outputs if outputs is not None else []
        self.attrs: dict[str, AttrDecl] = attrs if attrs is not None else {}
        self.types: dict[str, TypeDecl] = types if types is not None else {}
        self.requires: list[Require] = requires if requires is not None else []
        self.symbols: dict[str, Symbol] = symbols if symbols is not None else {}
        self.lets: dict[str, Expr] = lets if lets is not None else {}
        self.let_locs: dict[str, Loc] = let_locs if let_locs is not None else {}
        self.shape = shape
        self.alternative = alternative
        self.library = library
        self.path = path
        self.block = block
        self.source = source

    @property
    def qualified(self) -> str:
        return f"{self.domain}.{self.name}" if self.domain else self.name

    def covers(self, version: int) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

    def input_index(self, name: str) -> int | None:
        for i, p in enumerate(self.inputs):
            if p.name == name:
                return i
        return None

    def output_index(self, name: str) -> int | None:
        for i, p in enumerate(self.outputs):
            if p.name == name:
                return i
        return None


class Library(Record):
    """A library file: `name` is `library NAME`, else the file's stem; `version`: `library onnxruntime "1.22"`,
    what it was written against."""

    __slots__ = _fields = ("name", "path", "ops", "problems", "version")

    def __init__(self, name: str, path: str, ops: list[OpDecl] | None = None, problems: list[Problem] | None = None,
                 version: str = "") -> None:  # fmt: skip
        self.name = name
        self.path = path
        self.ops: list[OpDecl] = ops if ops is not None else []
        self.problems: list[Problem] = problems if problems is not None else []
        self.version = version

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]
