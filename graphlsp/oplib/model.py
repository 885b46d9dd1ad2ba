"""The op DSL's syntax tree: libraries, op declarations, parameters, attributes, shape contracts, expressions.

Every element keeps where it is written (`Loc`: 1-based line and column, and offsets into the file), so the parser,
the checker and the shape contracts report at the exact place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Loc:
    """A range in a library file: 1-based lines and columns (end exclusive), offsets into the text."""

    line: int
    col: int
    end_line: int
    end_col: int
    start: int = 0
    end: int = 0

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


NO_LOC = Loc(0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class Problem:
    """A syntax or declaration error (or warning) in a library file."""

    path: str
    loc: Loc
    message: str
    severity: str = "error"  # error, warning
    code: str = ""  # GL601 for a syntax error; "" for a declaration's problem (GL602 error, GL603 warning)

    def __str__(self) -> str:
        return f"{self.path}:{self.loc.line}:{self.loc.col}: {self.severity}: {self.message}"


# ---- expressions
@dataclass(frozen=True, slots=True)
class Expr:
    loc: Loc


@dataclass(frozen=True, slots=True)
class Num(Expr):
    value: int | float


@dataclass(frozen=True, slots=True)
class Str(Expr):
    value: str


@dataclass(frozen=True, slots=True)
class Name(Expr):
    id: str


@dataclass(frozen=True, slots=True)
class Call(Expr):
    fn: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Index(Expr):
    base: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    op: str  # + - * / // %
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Neg(Expr):
    arg: Expr


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    op: str  # == != < <= > >=
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class MemberOf(Expr):
    arg: Expr
    options: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class BoolOp(Expr):
    op: str  # and, or
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Not(Expr):
    arg: Expr


@dataclass(frozen=True, slots=True)
class Cond(Expr):
    test: Expr
    then: Expr
    other: Expr


# ---- shape patterns
@dataclass(frozen=True, slots=True)
class Run:
    """`*N` (a named run of dims, any length) or `...` (an anonymous one) inside a shape pattern."""

    name: str | None
    loc: Loc


DimPat = Expr | Run


@dataclass(frozen=True, slots=True)
class Pattern:
    dims: tuple[DimPat, ...]
    loc: Loc

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
@dataclass(slots=True)
class Param:
    """An input or output: `name: T[B, S, H]`, `name?: T` (optional), `name...: T` (variadic)."""

    name: str
    type_str: str  # a type constraint's name ("T") or a concrete type ("tensor(int32)")
    option: str  # single, optional, variadic
    loc: Loc
    type_loc: Loc = NO_LOC
    min_arity: int = 1
    homogeneous: bool = True
    patterns: tuple[Pattern, ...] = ()  # the shapes it may have (alternatives, tried by rank)
    same: Expr | None = None  # outputs: `= x` (x's shape) or `= broadcast(a, b)`
    when: Expr | None = None  # outputs: the condition under which the op produces it
    doc: str = ""


@dataclass(slots=True)
class AttrDecl:
    name: str
    type_name: str  # int, float, string, ints, floats, strings, tensor, graph, ...
    required: bool
    default: Any  # a Python value (None when there is none)
    loc: Loc
    doc: str = ""


@dataclass(slots=True)
class TypeDecl:
    name: str
    allowed: list[str]  # onnx type strings: tensor(float), seq(tensor(int64)), ...
    loc: Loc
    doc: str = ""
    type_locs: list[Loc] = field(default_factory=list)


@dataclass(slots=True)
class Require:
    """`require <condition> else GL302 "message"`: a relation the node must satisfy."""

    expr: Expr
    code: str
    message: str
    loc: Loc


@dataclass(slots=True)
class Symbol:
    """`dim H "hidden size" GL302`: what a dim symbol means, and the code a disagreement on it is reported as."""

    name: str
    doc: str
    code: str
    loc: Loc


@dataclass(slots=True)
class Delegate:
    """`shape Conv@11(X, W, B) -> (Y) with group = 1`: the outputs are what onnx's op computes from these inputs
    (`_` for an input left out), with the node's attributes (and the ones given). `python`: a shape function
    registered in Python (`graphlsp.ops.registry.shape_fn(..., domain=...)`) computes them."""

    loc: Loc
    python: bool = False
    op: str = ""
    domain: str = ""
    version: int | None = None
    args: list[str | None] = field(default_factory=list)
    outs: list[str | None] | None = None
    attrs: dict[str, Expr] = field(default_factory=dict)


@dataclass(slots=True)
class OpDecl:
    domain: str
    name: str
    loc: Loc  # the op's name
    since: int = 1
    until: int | None = None  # the last opset version that has it (None: every later one)
    doc: str = ""
    inputs: list[Param] = field(default_factory=list)
    outputs: list[Param] = field(default_factory=list)
    attrs: dict[str, AttrDecl] = field(default_factory=dict)
    types: dict[str, TypeDecl] = field(default_factory=dict)
    requires: list[Require] = field(default_factory=list)
    symbols: dict[str, Symbol] = field(default_factory=dict)
    lets: dict[str, Expr] = field(default_factory=dict)  # `let L = dim(key, 1) if has(key) else S`
    let_locs: dict[str, Loc] = field(default_factory=dict)  # where each `let` names its expression
    shape: Delegate | None = None
    alternative: str = ""
    library: str = ""  # the library's name (a runtime: onnxruntime)
    path: str = ""  # the file it is declared in
    block: Loc = NO_LOC  # the whole declaration
    source: str = ""  # the declaration's text (`block` of its file), for hovers

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


@dataclass(slots=True)
class Library:
    name: str  # `library NAME`, else the file's stem
    path: str
    ops: list[OpDecl] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    version: str = ""  # `library onnxruntime "1.22"`: what it was written against

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]
