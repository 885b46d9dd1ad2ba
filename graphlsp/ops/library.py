"""Op libraries on nodes: the signature of a declared op (so the refiner checks arity, attributes and type
constraints as for onnx's ops) and its shape contract, run on the node's InferenceContext.

A contract is run in four steps:

1. each present input of known rank picks the first of its shapes whose rank fits (none: GL317) and binds its dim
   symbols: the first input that has a symbol binds it, every other place must agree (a disagreement is the code
   `dim NAME "..." GL302` gives it, else GL317). Agreeing symbolic dims are merged through the refiner's unifier,
   so `batch` and `batch_size` become one dim. A run (`*N`) binds a run of dims the same way;
2. dims written as expressions (`3 * H`, `num_heads`) are checked once every symbol is bound;
3. each `require` whose condition is known false is reported (its code, GL317 by default);
4. each output gets its declared shape (`[B, S, N * H]`), an input's (`= x`), the inputs' broadcast
   (`= broadcast(a, b)`, GL301 on conflict) or what onnx's op computes (`shape Conv(X, W, B)`); an output the node
   names although its `when` is false is reported.

Expressions compute over graphlsp's dims (ints and canonical symbolic expressions), with three-valued logic:
a condition that depends on an unknown dim is unknown, and nothing unknown is ever reported.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from graphlsp.graph.core import Node, NodeOrigin
from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.conditions import Condition
from graphlsp.infer.context import InferenceContext, InferenceError, Inferred, ShapeProblem
from graphlsp.infer.dims import Dim, Expr
from graphlsp.lazymodule import lazy_module
from graphlsp.oplib import lazy
from graphlsp.oplib.catalog import CATALOG
from graphlsp.ops import registry
from graphlsp.ops import signature as sigmod
from graphlsp.ops.signature import AttrSpec, OpSignature, Param

if TYPE_CHECKING:
    from graphlsp.oplib import model as m
else:
    m = lazy_module("graphlsp.oplib.model", globals(), "m")  # read when a library is in use

DEFAULT_ONNX_OPSET = 21  # the ai.onnx version `shape Op(...)` uses when neither it nor the model names one
_SIGS: dict[int, tuple[m.OpDecl, OpSignature]] = {}  # id(decl) -> signature
_RULES: dict[int, tuple[m.OpDecl, ContractRule]] = {}
_SEEN = [-1]  # the catalog's generation the two caches were last pruned at


def _prune() -> None:
    """Forget the declarations the catalog no longer holds (an editor's library text replaced at every edit)."""
    if _SEEN[0] == CATALOG.generation:
        return
    _SEEN[0] = CATALOG.generation
    if len(_SIGS) + len(_RULES) < 64:
        return
    # a cached library's declarations not unpickled yet cannot be in the caches: only the loaded ones are read
    live = {id(op) for lib in CATALOG.libraries()
            for op in (lib.ops.loaded() if isinstance(lib.ops, lazy.LazyOps) else lib.ops)}  # fmt: skip
    for cache in (_SIGS, _RULES):
        for key in [k for k in cache if k not in live]:
            del cache[key]


# ---- signatures
def decl_signature(decl: m.OpDecl) -> OpSignature:
    _prune()
    found = _SIGS.get(id(decl))
    if found is not None and found[0] is decl:
        return found[1]
    ins = tuple(Param(p.name, p.type_str, p.option, p.homogeneous, p.min_arity) for p in decl.inputs)
    outs = tuple(Param(p.name, p.type_str, p.option, p.homogeneous, p.min_arity) for p in decl.outputs)
    attrs = {a.name: AttrSpec(a.name, a.type_name, a.required, a.default, a.doc) for a in decl.attrs.values()}
    constraints = {t.name: frozenset(t.allowed) for t in decl.types.values()}
    sig = OpSignature(decl.domain, decl.name, decl.since, False, ins, outs, attrs, constraints, *_arity(decl.inputs),
                      *_arity(decl.outputs), False, decl.doc, decl)  # fmt: skip
    _SIGS[id(decl)] = (decl, sig)
    return sig


def _arity(params: list[m.Param]) -> tuple[int, int]:
    """onnx's min and max count: the position after the last single one; a variadic adds its minimum arity."""
    lo = hi = 0
    for p in params:
        if p.option == "single":
            hi += 1
            lo = hi
        elif p.option == "optional":
            hi += 1
        else:
            lo = hi + p.min_arity
            hi = 2**31 - 1
    return lo, hi


def _library_signature(op: str, version: int, domain: str) -> OpSignature | None:
    decl = CATALOG.lookup(domain, op, version)
    return decl_signature(decl) if decl is not None else None


def _library_rule(domain: str, op: str, version: int | None) -> registry.ShapeFn | None:
    decl = CATALOG.lookup("" if domain == "ai.onnx" else domain, op, version)
    if decl is None:
        return None
    if decl.shape is not None and decl.shape.python:
        return note_python  # its Python rule would have been found first
    _prune()
    found = _RULES.get(id(decl))
    if found is not None and found[0] is decl:
        return found[1]
    rule = ContractRule(decl)
    _RULES[id(decl)] = (decl, rule)
    return rule


def note_undeclared(ctx: InferenceContext) -> None:
    """GL316 (info) for a node of a domain onnx has no schemas for, which no op library declares: its outputs stay
    unknown, and the message says how to declare the op."""
    from graphlsp.oplib.checker import onnx_domains

    node = ctx.node
    if node.function is not None or node.version is None or node.domain == "" or node.domain in onnx_domains():
        return
    if CATALOG.versions(node.domain, node.op_type):
        return  # declared, at other opset versions: resolution reported it (GL209)
    known = CATALOG.op_names(node.domain)
    if known:
        from graphlsp.graph.ops import closest

        lib = CATALOG.versions(node.domain, known[0])[0].library
        hint = closest(node.op_type, known)
        message = f"'{node.op_type}' is not in the {lib} op library for {node.domain}" + (
            f" (did you mean '{hint}'?)" if hint else "")  # fmt: skip
    else:
        message = f"no op library declares domain '{node.domain}'"
    ctx.error("GL316", f"{message}: its outputs have unknown shapes; declare it in an .onnxop file "
              f"(`op {node.domain}.{node.op_type} {{ input ... output ... }}`) listed in `op-libraries` of "
              "[tool.graphlsp]", severity="info")  # fmt: skip


def note_python(ctx: InferenceContext) -> None:
    """An op declared with `shape python` whose Python shape function was never registered."""
    ctx.error("GL316", f"{ctx.node.domain}.{ctx.op} is declared with `shape python`, but no Python shape function "
              "is registered for it (graphlsp.ops.registry.shape_fn(..., domain=...)): its outputs have unknown "
              "shapes", severity="info")  # fmt: skip


# ---- the contract
class ContractRule:
    """A declaration's shape contract as a shape function."""

    __slots__ = ("decl",)

    def __init__(self, decl: m.OpDecl) -> None:
        self.decl = decl

    def __call__(self, ctx: InferenceContext) -> None:
        decl = self.decl
        _Run(ctx, decl).run()
        if decl.shape is None and not any(p.patterns or p.same is not None for p in decl.outputs):
            ctx.error("GL316", f"the {decl.library} op library declares no output shapes for {decl.qualified}: its "
                      "outputs have unknown shapes", severity="info")  # fmt: skip

    def __repr__(self) -> str:
        return f"ContractRule({self.decl.qualified})"


class _Run:
    def __init__(self, ctx: InferenceContext, decl: m.OpDecl) -> None:
        self.ctx = ctx
        self.decl = decl
        self.unifier = ctx.refiner.unifier
        self.dims: dict[str, Dim] = {}
        self.where: dict[str, tuple[int, int]] = {}  # symbol -> (input, dim) that bound it
        self.runs: dict[str, tuple[Dim, ...]] = {}
        self.run_where: dict[str, int] = {}
        self.lets: dict[str, Any] = {}
        self.failed = False
        self.divisions: list[tuple[m.Expr, Dim, Dim]] = []  # `/` with a remainder: (expression, a, b)

    # ---- inputs of a param (a variadic one covers every input from its position on)
    def _indices(self, params: list[m.Param], i: int, count: int) -> range:
        p = params[i]
        return range(i, max(count, i + 1)) if p.option == "variadic" else range(i, i + 1)

    def run(self) -> None:
        ctx, decl = self.ctx, self.decl
        deferred: list[tuple[m.Expr, int, int]] = []
        for i, p in enumerate(decl.inputs):
            if not p.patterns:
                continue
            for k in self._indices(decl.inputs, i, ctx.n_inputs):
                if not ctx.has_input(k):
                    continue
                shape = ctx.input_shape(k)
                if shape is None:
                    continue
                pat = next((q for q in p.patterns if q.fits(len(shape))), None)
                if pat is None:
                    want = " or ".join(dict.fromkeys(q.describe() for q in p.patterns))
                    ctx.error("GL317", f"input {k} ({p.name}) must have {want}, got rank {len(shape)}: "
                              f"{ctx.describe_input(k)}", input=k)  # fmt: skip
                    self.failed = True
                    continue
                self._bind_pattern(pat, shape, k, deferred)
        for expr, k, j in deferred:
            self._check_dim(expr, k, j)
        for r in decl.requires:
            self._require(r)
        self._divisions()
        if self.failed:
            raise InferenceError("contract")
        delegated: set[int] = set()
        if decl.shape is not None and not decl.shape.python:
            delegated = self._delegate(decl.shape)
        for j, p in enumerate(decl.outputs):
            for k in self._indices(decl.outputs, j, ctx.n_outputs):
                if k in delegated or not ctx.has_output(k):
                    continue
                self._output(p, k)
        self._divisions()

    def _divisions(self) -> None:
        """`a / b` is exact: a remainder is a finding, once per expression."""
        seen = set()
        for e, a, b in self.divisions:
            if id(e) not in seen:
                seen.add(id(e))
                names = [n for n in _names(e) if n in self.where]
                self.ctx.error("GL317", f"{_text(e)} must divide exactly: {d.to_str(a)} is not a multiple of "
                               f"{d.to_str(b)}{self._values(e)}", input=self.where[names[0]][0] if names else None)
                self.failed = True
        self.divisions.clear()

    # ---- binding
    def _bind_pattern(self, pat: m.Pattern, shape: tuple[Dim, ...], k: int,
                      deferred: list[tuple[m.Expr, int, int]]) -> None:  # fmt: skip
        r = pat.run
        n = len(shape)
        if r is None:
            pairs = list(enumerate(pat.dims))
            positions = list(range(n))
        else:
            after = len(pat.dims) - r - 1
            run = pat.dims[r]
            assert isinstance(run, m.Run)
            if run.name is not None:
                self._bind_run(run.name, tuple(shape[r:n - after]), k, r)
            pairs = [(i, x) for i, x in enumerate(pat.dims) if i != r]
            positions = [i if i < r else n - (len(pat.dims) - i) for i, _ in pairs]
        for (_, x), j in zip(pairs, positions, strict=True):
            if isinstance(x, m.Name) and x.id == "_":
                continue
            if isinstance(x, m.Name) and x.id not in self.decl.attrs:
                self._bind(x.id, shape[j], k, j)
            elif isinstance(x, m.Expr):
                deferred.append((x, k, j))

    def _bind(self, name: str, dim: Dim, k: int, j: int) -> None:
        if name not in self.dims:
            self.dims[name] = dim
            self.where[name] = (k, j)
            return
        prev = self.dims[name]
        if self.ctx.dim_eq(prev, dim) is False:
            self._mismatch(name, self.where[name], (k, j), prev, dim)
            return
        try:
            self.dims[name] = sh.merge_dim(prev, dim, self.unifier)
        except sh.MergeError:
            self._mismatch(name, self.where[name], (k, j), prev, dim)

    def _bind_run(self, name: str, dims: tuple[Dim, ...], k: int, start: int) -> None:
        if name not in self.runs:
            self.runs[name] = dims
            self.run_where[name] = k
            return
        prev = self.runs[name]
        first = self.run_where[name]
        ctx = self.ctx
        if len(prev) != len(dims):
            ctx.error(self._code(name), f"{self._sym(name)}: the leading dims of {ctx.input_name(first)} and "
                      f"{ctx.input_name(k)} differ in number ({len(prev)} and {len(dims)}): "
                      f"{ctx.describe_input(first)}, {ctx.describe_input(k)}", input=k,
                      related=[ctx.related_input(first)])  # fmt: skip
            self.failed = True
            return
        merged = []
        for i, (a, b) in enumerate(zip(prev, dims, strict=True)):
            if ctx.dim_eq(a, b) is False:
                self._mismatch(name, (first, start + i), (k, start + i), a, b)
                return
            merged.append(sh.merge_dim(a, b, self.unifier))
        self.runs[name] = tuple(merged)

    def _check_dim(self, expr: m.Expr, k: int, j: int) -> None:
        want = self._dim(expr)
        shape = self.ctx.input_shape(k)
        got = shape[j] if shape is not None and j < len(shape) else None
        if want is None or got is None:
            return
        if self.ctx.dim_eq(want, got) is False:
            ctx = self.ctx
            ctx.error(self._code_of(expr), f"dim {j} of {ctx.input_name(k)} must be {_text(expr)} = "
                      f"{d.to_str(want)}{self._values(expr)}, got {d.to_str(got)}: {ctx.describe_input(k)}",
                      input=k, related=self._related(expr))  # fmt: skip
            self.failed = True
            return
        if isinstance(want, Expr) and isinstance(got, Expr):
            sh.merge_dim(got, want, self.unifier)

    def _mismatch(self, name: str, a: tuple[int, int], b: tuple[int, int], x: Dim, y: Dim) -> None:
        ctx = self.ctx
        (ka, ja), (kb, jb) = a, b
        if ka == kb:
            where = f"dims {ja} and {jb} of {ctx.input_name(ka)} must be equal: {ctx.describe_input(ka)}"
        else:
            where = f"dim {ja} of {ctx.input_name(ka)} ({d.to_str(x)}) and dim {jb} of {ctx.input_name(kb)} " \
                f"({d.to_str(y)}) must be equal: {ctx.describe_input(ka)}, {ctx.describe_input(kb)}"  # fmt: skip
        ctx.error(self._code(name), f"{self._sym(name)} differs: {where}", input=kb,
                  related=[ctx.related_input(ka)] if ka != kb else [])  # fmt: skip
        self.failed = True

    def _sym(self, name: str) -> str:
        s = self.decl.symbols.get(name)
        return f"{name} ({s.doc})" if s is not None and s.doc else name

    def _code(self, name: str) -> str:
        s = self.decl.symbols.get(name)
        return s.code if s is not None and s.code else "GL317"

    def _code_of(self, expr: m.Expr) -> str:
        for x in _names(expr):
            if x in self.decl.symbols and self.decl.symbols[x].code:
                return self.decl.symbols[x].code
        return "GL317"

    def _values(self, expr: m.Expr) -> str:
        """` (H = 768, num_heads = 12)`: the values of the names an expression reads."""
        parts = []
        for name in dict.fromkeys(_names(expr)):
            v = self._name(name)
            if v is not None:
                parts.append(f"{name} = {d.to_str(v) if isinstance(v, (int, Expr)) else v}")
        return f" ({', '.join(parts)})" if parts and not (len(parts) == 1 and _text(expr) in parts[0]) else ""

    def _related(self, expr: m.Expr) -> list[tuple[str, tuple[int, int] | None]]:
        out = []
        for name in dict.fromkeys(_names(expr)):
            if name in self.where:
                out.append(self.ctx.related_input(self.where[name][0]))
        return out

    # ---- require
    def _require(self, r: m.Require) -> None:
        known = self._bool(r.expr)
        if known is None:
            self._assume(r.expr)
        if known is not False:
            return
        ctx = self.ctx
        message = r.message or f"requires {_text(r.expr)}"
        inputs = [self.where[n][0] for n in _names(r.expr) if n in self.where]
        ctx.error(r.code or "GL317", f"{message}{self._values(r.expr)}", input=inputs[0] if inputs else None,
                  related=[ctx.related_input(i) for i in dict.fromkeys(inputs[1:])])  # fmt: skip
        self.failed = True

    def _assume(self, e: m.Expr) -> None:
        """A requirement on dims that is neither proved nor refuted holds only at some sizes: a condition on the
        input dims (`require B == 1`, `require S <= 4096`), as the shape rules of onnx's ops note theirs. A
        disjunction (`require B == 1 or S == 1 or P == 0`) is one condition of its undecided relations."""
        alternatives: list[Condition] = []
        for part in _disjuncts(e):
            known = self._bool(part)
            if known is True:
                return
            if known is False:
                continue
            cond = self._relation(part)
            if cond is None:
                return  # a relation no condition states (`!=`, an attribute's value): nothing is claimed
            alternatives.append(cond)
        self.unifier.require_any(alternatives)

    def _relation(self, e: m.Expr) -> Condition | None:
        if not isinstance(e, m.Compare) or e.op not in ("==", "<=", "<", ">=", ">"):
            return None
        a, b = self._value(e.left), self._value(e.right)
        if not all(isinstance(x, (int, Expr)) and not isinstance(x, bool) for x in (a, b)):
            return None
        if e.op == "==":
            return Condition(a, b)
        if e.op in ("<=", "<"):
            return Condition(d.add(a, 1) if e.op == "<" else a, b, at_most=True)
        return Condition(d.add(b, 1) if e.op == ">" else b, a, at_most=True)

    # ---- outputs
    def _output(self, p: m.Param, k: int) -> None:
        ctx = self.ctx
        if p.when is not None and self._bool(p.when) is False:
            ctx.error("GL317", f"output {k} ({p.name}) is produced only when {_text(p.when)}; here it is not, and "
                      "the runtime leaves it empty or fails", severity="warning")  # fmt: skip
            return
        shape: tuple[Dim, ...] | None = None
        if p.same is not None:
            if isinstance(p.same, m.Name):
                i = self.decl.input_index(p.same.id)
                shape = ctx.input_shape(i) if i is not None and ctx.has_input(i) else None
            elif isinstance(p.same, m.Call):
                idx = [self.decl.input_index(a.id) for a in p.same.args if isinstance(a, m.Name)]
                shape = ctx.broadcast([i for i in idx if i is not None])
        elif p.patterns:
            out: list[Dim] = []
            for x in p.patterns[0].dims:
                if isinstance(x, m.Run):
                    run = self.runs.get(x.name or "")
                    if run is None:
                        ctx.set_output(k, None)
                        return
                    out.extend(run)
                elif isinstance(x, m.Name) and x.id == "_":
                    out.append(None)
                else:
                    v = self._dim(x)
                    out.append(v if isinstance(v, (int, Expr)) and (not isinstance(v, int) or v >= 0) else None)
            shape = tuple(self.unifier.canonical(x) for x in out)
        else:
            return
        ctx.set_output(k, shape)

    # ---- delegation to an onnx op's rule
    def _delegate(self, dl: m.Delegate) -> set[int]:
        ctx, decl = self.ctx, self.decl
        args = [decl.input_index(a) if a is not None else None for a in dl.args]
        outs = [decl.output_index(o) if o is not None else None for o in dl.outs] if dl.outs is not None \
            else None  # fmt: skip
        attrs = {name: _plain(self._value(e)) for name, e in dl.attrs.items()}
        return onnx_rule(ctx, dl.op, args, outs, attrs, version=dl.version, domain=dl.domain)

    # ---- expressions
    def _name(self, name: str) -> Any:
        if name in self.decl.attrs:
            return _plain(self.ctx.attr(name))
        if name in self.decl.lets:
            if name in self.lets:
                return self.lets[name]
            self.lets[name] = None  # a definition that reads itself is unknown
            v = self.lets[name] = self._value(self.decl.lets[name])
            return v
        return self.dims.get(name)

    def _dim(self, e: m.Expr) -> Dim:
        v = self._value(e)
        if isinstance(v, bool) or not isinstance(v, (int, Expr)):
            return None
        return v

    def _value(self, e: m.Expr) -> Any:
        if isinstance(e, m.Num):
            return e.value
        if isinstance(e, m.Str):
            return e.value
        if isinstance(e, m.Name):
            return self._name(e.id)
        if isinstance(e, m.Index):
            base = self._value(e.base)
            i = self._value(e.index)
            if isinstance(base, (list, tuple)) and isinstance(i, int) and -len(base) <= i < len(base):
                x = base[i]
                return x if x is None or isinstance(x, (int, float, str, Expr)) else None
            return None
        if isinstance(e, m.BinOp):
            return self._binop(e)
        if isinstance(e, m.Neg):
            v = self._value(e.arg)
            if isinstance(v, float):
                return -v
            return d.neg(v) if isinstance(v, (int, Expr)) else None
        if isinstance(e, m.Call):
            return self._call(e)
        if isinstance(e, m.Cond):
            t = self._bool(e.test)
            if t is True:
                return self._value(e.then)
            if t is False:
                return self._value(e.other)
            a, b = self._value(e.then), self._value(e.other)
            return a if isinstance(a, (int, Expr)) and isinstance(b, (int, Expr)) and d.equal(a, b) else None
        return self._bool(e)

    def _binop(self, e: m.BinOp) -> Any:
        a, b = self._value(e.left), self._value(e.right)
        if a is None or b is None or isinstance(a, (bool, str, list)) or isinstance(b, (bool, str, list)):
            return None
        if isinstance(a, float) or isinstance(b, float):
            if isinstance(a, Expr) or isinstance(b, Expr):
                return None
            try:
                return {"+": a + b, "-": a - b, "*": a * b}.get(e.op) if e.op in "+-*" else \
                    (a / b if e.op == "/" else a // b if e.op == "//" else a % b)  # fmt: skip
            except ZeroDivisionError:
                return None
        op = e.op
        if op == "+":
            return d.add(a, b)
        if op == "-":
            return d.sub(a, b)
        if op == "*":
            return d.mul(a, b)
        if not isinstance(b, int) or b <= 0:
            return None
        if op == "/":
            if isinstance(a, int) and a % b:
                self.divisions.append((e, a, b))
                return None
            return d.floordiv(a, b)
        if op == "//":
            return d.floordiv(a, b)
        return d.mod(a, b)

    def _call(self, e: m.Call) -> Any:
        ctx, decl = self.ctx, self.decl
        fn = e.fn
        if fn in ("has", "rank", "dim", "len", "value"):
            arg = e.args[0]
            name = arg.id if isinstance(arg, m.Name) else ""
            i = decl.input_index(name)
            o = decl.output_index(name)
            if fn == "value":  # a scalar (or one-element) int input's known value
                if i is None or not ctx.has_input(i):
                    return None
                sv = ctx.input_shape_value(i)
                return sv[0] if sv is not None and len(sv) == 1 else None
            if fn == "has":
                if i is not None:
                    p = decl.inputs[i]
                    return any(ctx.has_input(k) for k in self._indices(decl.inputs, i, ctx.n_inputs)) \
                        if p.option == "variadic" else ctx.has_input(i)  # fmt: skip
                if o is not None:
                    return ctx.has_output(o)
                return ctx.has_attr(name)
            if fn == "len":
                v = _plain(ctx.attr(name))
                return len(v) if isinstance(v, (list, tuple)) else None
            shape = ctx.input_shape(i) if i is not None and ctx.has_input(i) else \
                _out_shape(ctx, o) if o is not None else None  # fmt: skip
            if shape is None:
                return None
            if fn == "rank":
                return len(shape)
            j = self._value(e.args[1])
            if not isinstance(j, int) or not -len(shape) <= j < len(shape):
                return None
            return shape[j]
        args = [self._value(a) for a in e.args]
        if any(not isinstance(a, (int, Expr)) or isinstance(a, bool) for a in args):
            return None
        if fn in ("min", "max"):
            out = args[0]
            for a in args[1:]:
                out = d.minimum(out, a) if fn == "min" else d.maximum(out, a)
            return out
        if fn == "cdiv":
            return d.ceildiv(args[0], args[1]) if isinstance(args[1], int) and args[1] > 0 else None
        return None

    def _bool(self, e: m.Expr) -> bool | None:
        if isinstance(e, m.BoolOp):
            a = self._bool(e.left)
            if e.op == "and":
                if a is False:
                    return False
                b = self._bool(e.right)
                return False if b is False else (True if a and b else None)
            if a is True:
                return True
            b = self._bool(e.right)
            return True if b is True else (False if a is False and b is False else None)
        if isinstance(e, m.Not):
            v = self._bool(e.arg)
            return None if v is None else not v
        if isinstance(e, m.Compare):
            return self._compare(e.op, self._value(e.left), self._value(e.right))
        if isinstance(e, m.MemberOf):
            x = self._value(e.arg)
            found = [self._compare("==", x, self._value(o)) for o in e.options]
            return True if any(f is True for f in found) else (False if all(f is False for f in found) else None)
        v = self._value(e)
        if isinstance(v, bool) or v is None:
            return v
        if isinstance(v, int):
            return v != 0
        return None

    def _compare(self, op: str, a: Any, b: Any) -> bool | None:
        if a is None or b is None:
            return None
        if isinstance(a, str) or isinstance(b, str):
            if op in ("==", "!="):
                return (a == b) == (op == "==")
            return None
        if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
            return (list(a) == list(b)) == (op == "==") if op in ("==", "!=") else None  # type: ignore[arg-type]
        if isinstance(a, float) or isinstance(b, float):
            if isinstance(a, Expr) or isinstance(b, Expr):
                return None
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        a, b = self.unifier.canonical(a), self.unifier.canonical(b)
        if op in ("==", "!="):
            eq = d.equal(a, b)
            return None if eq is None else eq == (op == "==")
        lo, hi = d.bounds(d.sub(a, b))  # a - b
        if op == "<":
            return True if hi is not None and hi < 0 else (False if lo is not None and lo >= 0 else None)
        if op == "<=":
            return True if hi is not None and hi <= 0 else (False if lo is not None and lo > 0 else None)
        if op == ">":
            return True if lo is not None and lo > 0 else (False if hi is not None and hi <= 0 else None)
        return True if lo is not None and lo >= 0 else (False if hi is not None and hi < 0 else None)


def onnx_rule(ctx: InferenceContext, op: str, args: list[int | None], outs: list[int | None] | None = None,
              attrs: dict[str, Any] | None = None, *, version: int | None = None, domain: str = "",
              types: dict[int, Any] | None = None, drop: tuple[str, ...] = ()) -> set[int]:  # fmt: skip
    """Run onnx's op's shape rule for this node: its input j is the node's input args[j] (None: left out), its
    output j the node's output outs[j] (default: in order). The node's attributes, with the declared defaults and
    `attrs` on top, are the op's. `types` replaces input types (by the op's input index), as a Python rule does
    after rearranging an input's dims; problems with a code in `drop` are not kept. Returns the node's outputs it
    set; raises InferenceError when the rule found an error."""
    version = version or ctx.refiner.model.opset_imports.get(domain) or DEFAULT_ONNX_OPSET
    fn = registry.lookup(domain, op, version)
    sig = sigmod.signature(op, version, domain)
    if fn is None or sig is None:
        return set()
    if outs is None:
        outs = list(range(min(ctx.n_outputs, len(sig.outputs))))
    merged = dict(ctx.attrs)
    for name, spec in (ctx.sig.attrs.items() if ctx.sig is not None else ()):
        if merged.get(name) is None and spec.default is not None:
            merged[name] = spec.default
    merged.update(attrs or {})
    node = ctx.node
    proxy = Node(node.graph, node.index, _MappedOrigin(node.origin, args, outs), domain, op, name=node.name,
                 attributes=node.attributes, version=version,
                 inputs=[node.inputs[i] if i is not None and i < len(node.inputs) else None for i in args],
                 outputs=[node.outputs[o] if o is not None and o < len(node.outputs) else None for o in outs])
    inputs = [ctx.inputs[i] if i is not None and i < len(ctx.inputs) else None for i in args]
    for j, ty in (types or {}).items():
        if j < len(inputs) and inputs[j] is not None:
            inputs[j] = Inferred(ty)
    sub = InferenceContext(proxy, sig, version, inputs, merged, ctx.refiner)
    sub.output_elems[:] = [ctx.output_elems[o] if o is not None and o < len(ctx.output_elems) else None
                           for o in outs]  # fmt: skip
    sub.withheld = tuple(j for j, i in enumerate(args) if i is not None and i in ctx.withheld)
    with contextlib.suppress(InferenceError):
        fn(sub)
    kept = [p for p in sub.problems if p.code not in drop]
    prefix = f"{op}: "
    for p in kept:
        message = f"{ctx.op}: {p.message[len(prefix):]}" if p.message.startswith(prefix) else p.message
        ctx.problems.append(ShapeProblem(p.code, message, p.span, p.related, p.severity, _remap_detail(p.detail, args)))
    done = set()
    for j, o in enumerate(outs):
        if o is None or o >= ctx.n_outputs:
            continue
        x = sub.outputs[j] if j < len(sub.outputs) else None
        if x is not None:
            ctx.outputs[o] = x
            done.add(o)
    if any(p.severity == "error" for p in kept):
        raise InferenceError(op)
    return done


def _out_shape(ctx: InferenceContext, o: int) -> tuple[Dim, ...] | None:
    x = ctx.outputs[o] if o < len(ctx.outputs) else None
    ty = x.type if x is not None else None
    return getattr(ty, "shape", None)


def _plain(v: Any) -> Any:
    if hasattr(v, "tolist") and not isinstance(v, (int, float, str)):
        try:
            return v.tolist()
        except Exception:
            return None
    if isinstance(v, tuple):
        return list(v)
    return v


def _disjuncts(e: m.Expr) -> list[m.Expr]:
    """`A or B or C` as [A, B, C]; any other expression as itself."""
    if isinstance(e, m.BoolOp) and e.op == "or":
        return _disjuncts(e.left) + _disjuncts(e.right)
    return [e]


def _names(e: m.Expr) -> list[str]:
    from graphlsp.oplib.checker import walk

    return [x.id for x in walk(e) if isinstance(x, m.Name)]


def _text(e: m.Expr) -> str:
    """An expression as the DSL writes it."""
    if isinstance(e, m.Num):
        return repr(e.value)
    if isinstance(e, m.Str):
        return repr(e.value)
    if isinstance(e, m.Name):
        return e.id
    if isinstance(e, m.Call):
        return f"{e.fn}({', '.join(_text(a) for a in e.args)})"
    if isinstance(e, m.Index):
        return f"{_text(e.base)}[{_text(e.index)}]"
    if isinstance(e, m.BinOp):
        return f"{_paren(e.left)} {e.op} {_paren(e.right)}"
    if isinstance(e, m.Compare):
        return f"{_text(e.left)} {e.op} {_text(e.right)}"
    if isinstance(e, m.Neg):
        return f"-{_paren(e.arg)}"
    if isinstance(e, m.BoolOp):
        return f"{_text(e.left)} {e.op} {_text(e.right)}"
    if isinstance(e, m.Not):
        return f"not {_text(e.arg)}"
    if isinstance(e, m.MemberOf):
        return f"{_text(e.arg)} in ({', '.join(_text(o) for o in e.options)})"
    if isinstance(e, m.Cond):
        return f"{_text(e.then)} if {_text(e.test)} else {_text(e.other)}"
    return "?"


def _paren(e: m.Expr) -> str:
    return f"({_text(e)})" if isinstance(e, (m.BinOp, m.Cond, m.BoolOp)) else _text(e)


def _remap_detail(detail: str, args: list[int | None]) -> str:
    if detail.startswith("input "):
        head, _, rest = detail[6:].partition(" ")
        if head.isdigit() and int(head) < len(args) and args[int(head)] is not None:
            return f"input {args[int(head)]} {rest}".rstrip()
    return detail


class _MappedOrigin(NodeOrigin):
    """A node's origin seen through a delegation: input i of the onnx op is input args[i] of the node."""

    __slots__ = ("real", "args", "outs")

    def __init__(self, real: NodeOrigin, args: list[int | None], outs: list[int | None]) -> None:
        self.real = real
        self.args = args
        self.outs = outs

    @property
    def anchor(self) -> Any:  # type: ignore[override]
        return self.real.anchor

    @property
    def quiet(self) -> bool:  # type: ignore[override]
        return self.real.quiet

    def span(self) -> tuple[int, int] | None:
        return self.real.span()

    def op_span(self) -> tuple[int, int] | None:
        return self.real.op_span()

    def domain_span(self) -> tuple[int, int] | None:
        return self.real.domain_span()

    def label_span(self) -> tuple[int, int] | None:
        return self.real.label_span()

    def input_span(self, i: int) -> tuple[int, int] | None:
        j = self.args[i] if i < len(self.args) else None
        return self.real.input_span(j) if j is not None else None

    def output_span(self, i: int) -> tuple[int, int] | None:
        j = self.outs[i] if i < len(self.outs) else None
        return self.real.output_span(j) if j is not None else None

    def attr_span(self, name: str) -> tuple[int, int] | None:
        return self.real.attr_span(name)


sigmod.library = _library_signature
registry.fallback = _library_rule
