"""Dimensions: a known int, a symbolic expression (`Expr`), or unknown (None).

An `Expr` is a canonical integer polynomial over atoms. An atom is a symbol (a dim_param such as `batch`), or
`floor(E / d)` with d a positive int, or `min`/`max` of two expressions. Canonical means equal expressions have
equal keys, and expressions are interned, so `2*N+10` and `2*(N+5)` are the same object. Ceil-division and
modulo are rewritten through floor (`ceil(E/d) = floor((E + d - 1)/d)`, `E % d = E - d*floor(E/d)`), and floors of
floors fold: `floor((floor(E/a) + c)/b) = floor((E + a*c)/(a*b))`, so five stacked stride-2 convolutions on H
give one floor, `floor((H + 31)/32)`. Equality is three-valued: True, False or None (unknown); nothing is
ever guessed. Expressions past a size cap (MAX_TERMS terms, a key of MAX_KEY characters) become unknown, and so
does an int result outside int64 (no ONNX dim is that large, and numpy would raise OverflowError on it).

A dim_param is read by `symbol`, which never raises. A plain name (`batch`, `unk__123`, `p2o.DynamicDimension.0`,
`?`, `a b`, ` N` with its space) is an opaque symbol named exactly by the string; a bare symbol is never refused by
MAX_KEY, however long its name. Keys quote a name that is not an identifier (`"a b"`, backslashes and quotes escaped)
and a quoted name reads back as that symbol, so `symbol(to_str(x)) is x`. A string that is an integer expression
over names is that expression, in the sympy / Python / torch spellings exporters write (onnxruntime's symbolic
shape inference writes `floor(floor(height/2 - 1/2)/2) + 1`): `+ - * // % **`, unary minus, `/`, `floor`,
`ceiling`/`ceil`, `Max`/`max`, `Min`/`min` (any number of arguments), `Mod`, `FloorDiv`, `CeilDiv`,
`ModularIndexing`, parentheses. It is computed exactly over rationals (a numerator polynomial over a positive int
denominator), so `floor(x/2 - 1/2)` is `floor((x - 1)/2)`; dividing by anything but a nonzero constant is not
read, and the result must be an integer polynomial (`N/2` alone is not). Anything else is an opaque symbol named by
the whole string, never a wrong expression: text the reader does not know, a result that is a plain int (`3`,
`N - N`), and text past the reader's caps:
  MAX_TEXT     4096 characters,
  MAX_DEPTH    64 nested parentheses / calls,
  MAX_OPERANDS 512 names and numbers,
  MAX_POWER    an exponent of at most 64,
  MAX_DIGITS   19 digits in a number, which must be within int64,
  and MAX_TERMS / MAX_KEY on every intermediate result.
The reader is an iterative shunting-yard over a flat token list (no recursion on the text's nesting; a quoted name
is read by `symbol` again, but each level of quoting doubles the escapes, so that is at most ~12 deep), so no input
can raise RecursionError or MemoryError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from math import gcd

MAX_TERMS = 24
MAX_KEY = 240

# caps of the dim_param reader (see the module docstring); past any of them the text is one opaque symbol
MAX_TEXT = 4096
MAX_DEPTH = 64
MAX_OPERANDS = 512
MAX_POWER = 64
MAX_DIGITS = 19

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Atom:
    """A symbol or an operation the polynomial cannot absorb. Interned; compare by identity."""

    __slots__ = ("kind", "name", "args", "key")

    def __init__(self, kind: str, name: str, args: tuple[Dim, ...], key: str) -> None:
        self.kind = kind  # "sym", "floor", "min", "max"
        self.name = name
        self.args = args
        self.key = key


# A polynomial: ((monomial, coefficient), ...) sorted by monomial key; a monomial is a sorted tuple of atoms.
Mono = tuple[Atom, ...]
Poly = tuple[tuple[Mono, int], ...]


class Expr:
    """A canonical, interned polynomial with at least one non-constant term. Build with the functions below."""

    __slots__ = ("poly", "key", "__weakref__")

    def __init__(self, poly: Poly, key: str) -> None:
        self.poly = poly
        self.key = key

    def __repr__(self) -> str:
        return f"Expr({self.key})"

    def __str__(self) -> str:
        return self.key

    def symbols(self) -> set[str]:
        out: set[str] = set()
        for mono, _ in self.poly:
            for atom in mono:
                _atom_symbols(atom, out)
        return out


Dim = int | Expr | None

_ATOMS: dict[str, Atom] = {}
_EXPRS: dict[str, Expr] = {}
_SYMBOLS: dict[str, Expr] = {}  # symbol(text) by text; only a cache (results are interned), cleared when large
_SYMBOLS_CAP = 1 << 16


def _fits(v: int) -> bool:
    return INT64_MIN <= v <= INT64_MAX


def _int(v: int) -> Dim:
    """An int result, or unknown when it is outside int64."""
    return v if INT64_MIN <= v <= INT64_MAX else None


def _atom_symbols(atom: Atom, out: set[str]) -> None:
    if atom.kind == "sym":
        out.add(atom.name)
    for a in atom.args:
        if isinstance(a, Expr):
            out |= a.symbols()


def _mono_key(mono: Mono) -> str:
    return "*".join(a.key for a in mono)


def _atom(kind: str, name: str, args: tuple[Dim, ...], key: str) -> Atom:
    atom = _ATOMS.get(key)
    if atom is None:
        atom = _ATOMS[key] = Atom(kind, name, args, key)
    return atom


def _poly_of(d: int | Expr) -> dict[Mono, int]:
    if isinstance(d, int):
        return {(): d} if d else {}
    return dict(d.poly)


def _render(poly: Poly) -> str:
    parts: list[str] = []
    for mono, coeff in poly:
        if not mono:
            body = str(abs(coeff))
        else:
            body = _mono_key(mono)
            if abs(coeff) != 1:
                body = f"{abs(coeff)}*{body}"
        if not parts:
            parts.append(body if coeff > 0 else f"-{body}")
        else:
            parts.append(f" + {body}" if coeff > 0 else f" - {body}")
    return "".join(parts)


def _make(poly: dict[Mono, int]) -> Dim:
    """The canonical Dim for a polynomial: an int when constant, an interned Expr otherwise, None past the cap."""
    items = [(m, c) for m, c in poly.items() if c]
    if not items:
        return 0
    if len(items) == 1 and not items[0][0]:
        return _int(items[0][1])
    if len(items) > MAX_TERMS or not all(_fits(c) for _, c in items):
        return None
    # non-constant terms by monomial key, the constant last: `2*N + 10`
    items.sort(key=lambda mc: (not mc[0], _mono_key(mc[0])))
    frozen: Poly = tuple(items)
    key = _render(frozen)
    if len(key) > MAX_KEY and not _bare_symbol(frozen):
        return None
    expr = _EXPRS.get(key)
    if expr is None:
        expr = _EXPRS[key] = Expr(frozen, key)
    return expr


def _bare_symbol(poly: Poly) -> bool:
    """A lone symbol (its key is as long as its name, which no cap may refuse)."""
    return len(poly) == 1 and poly[0][1] == 1 and len(poly[0][0]) == 1 and poly[0][0][0].kind == "sym"


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _opaque(name: str) -> Expr:
    """The symbol named exactly `name`: keyed by the name when it is an identifier, else by the quoted name."""
    key = name if name.isidentifier() else _quote(name)
    atom = _atom("sym", name, (), key)
    mono: Mono = (atom,)
    expr = _EXPRS.get(key)
    if expr is None:
        expr = _EXPRS[key] = Expr(((mono, 1),), key)
    return expr


def symbol_of(atom: Atom) -> Expr:
    """The expression that is the symbol atom `atom` alone."""
    return _opaque(atom.name)


def symbol(name: str) -> Expr:
    """A dim_param as a symbol; a name that is an arithmetic expression (`M+1`, `2*N`, `floor(H/2 - 1/2) + 1`)
    becomes that expression. Never raises: text that is not read as an expression is a symbol named by it."""
    expr = _SYMBOLS.get(name)
    if expr is not None:
        return expr
    if name.isidentifier():
        expr = _opaque(name)
    else:
        try:
            parsed = _parse(name)
        except (ArithmeticError, ValueError, TypeError, MemoryError, RecursionError):  # no input should get here
            parsed = None
        expr = parsed if isinstance(parsed, Expr) else _opaque(name)
    if len(_SYMBOLS) >= _SYMBOLS_CAP:
        _SYMBOLS.clear()
    _SYMBOLS[name] = expr
    return expr


# ---- the dim_param reader: tokens, then a shunting-yard evaluation over exact rationals
class _Fail(Exception):
    """The text is not an expression the reader accepts (within its caps)."""


# A token: ("num", int), ("name", str) an identifier, ("quoted", str) a quoted name, ("op", str) an operator,
# "(", ")" or ",".
_Token = tuple[str, object]

_OPS_2 = ("//", "**")
_OPS_1 = "+-*/%"
_SPACE = " \t\r\n"


def _tokens(text: str) -> list[_Token]:
    """The tokens of `text`, checking the caps as it goes; _Fail on anything it does not know."""
    if len(text) > MAX_TEXT:
        raise _Fail
    out: list[_Token] = []
    depth = operands = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _SPACE:
            i += 1
        elif "0" <= c <= "9":
            j = i
            while j < n and "0" <= text[j] <= "9":
                j += 1
            if j - i > MAX_DIGITS:
                raise _Fail
            value = int(text[i:j])
            if value > INT64_MAX:
                raise _Fail
            out.append(("num", value))
            operands += 1
            i = j
        elif c == "_" or c.isalpha():
            j = i + 1
            while j < n and (text[j] == "_" or text[j].isalnum()):
                j += 1
            name = text[i:j]
            if not name.isidentifier():
                raise _Fail
            out.append(("name", name))
            operands += 1
            i = j
        elif c == '"':
            chars: list[str] = []
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 1
                    if j == n or text[j] not in '"\\':
                        raise _Fail
                chars.append(text[j])
                j += 1
            if j == n:
                raise _Fail
            out.append(("quoted", "".join(chars)))
            operands += 1
            i = j + 1
        elif text.startswith(_OPS_2, i):
            out.append(("op", text[i : i + 2]))
            i += 2
        elif c in _OPS_1:
            out.append(("op", c))
            i += 1
        elif c in "(),":
            if c == "(":
                depth += 1
                if depth > MAX_DEPTH:
                    raise _Fail
            elif c == ")":
                depth -= 1
            out.append((c, None))
            i += 1
        else:
            raise _Fail
        if operands > MAX_OPERANDS:
            raise _Fail
    return out


# An exact rational value: (numerator, denominator), the numerator an integer polynomial, 1 <= denominator.
_Q = tuple[int | Expr, int]


def _q(num: Dim, den: int = 1) -> _Q:
    """num/den in lowest terms (common factors of all coefficients and den cancelled); _Fail past the caps."""
    if num is None or not 1 <= den <= INT64_MAX:
        raise _Fail
    if den == 1:
        return num, 1
    content = abs(num) if isinstance(num, int) else gcd(*(c for _, c in num.poly))
    g = gcd(den, content)
    if g > 1:
        num = num // g if isinstance(num, int) else _make({m: c // g for m, c in num.poly})
        if num is None:
            raise _Fail
        den //= g
    return num, den


def _lcm(a: int, b: int) -> int:
    return a // gcd(a, b) * b


def _q_add(a: _Q, b: _Q) -> _Q:
    den = _lcm(a[1], b[1])
    return _q(add(mul(a[0], den // a[1]), mul(b[0], den // b[1])), den)


def _q_neg(a: _Q) -> _Q:
    return _q(neg(a[0]), a[1])


def _q_sub(a: _Q, b: _Q) -> _Q:
    return _q_add(a, _q_neg(b))


def _q_mul(a: _Q, b: _Q) -> _Q:
    return _q(mul(a[0], b[0]), a[1] * b[1])


def _q_div(a: _Q, b: _Q) -> _Q:
    """a / b for a nonzero constant b (a polynomial divisor is not read)."""
    num, den = b
    if not isinstance(num, int) or num == 0:
        raise _Fail
    sign = 1 if num > 0 else -1
    return _q(mul(a[0], sign * den), a[1] * abs(num))


def _q_floor(a: _Q) -> _Q:
    return _q(floordiv(a[0], a[1]))


def _q_ceil(a: _Q) -> _Q:
    return _q(ceildiv(a[0], a[1]))


def _q_floordiv(a: _Q, b: _Q) -> _Q:
    return _q_floor(_q_div(a, b))


def _q_ceildiv(a: _Q, b: _Q) -> _Q:
    return _q_ceil(_q_div(a, b))


def _q_mod(a: _Q, b: _Q) -> _Q:
    """a - b*floor(a/b): Python's `%` and sympy's Mod (the sign of the divisor)."""
    return _q_sub(a, _q_mul(b, _q_floordiv(a, b)))


def _q_pow(a: _Q, b: _Q) -> _Q:
    e = b[0]
    if b[1] != 1 or not isinstance(e, int) or not 0 <= e <= MAX_POWER:
        raise _Fail
    out: _Q = (1, 1)
    for _ in range(e):
        out = _q_mul(out, a)
    return out


def _q_minmax(kind: str, args: list[_Q]) -> _Q:
    """min/max of rationals: over a common positive denominator L, min(a/L, b/L) = min(a, b)/L."""
    if not args:
        raise _Fail
    out = args[0]
    for b in args[1:]:
        den = _lcm(out[1], b[1])
        x, y = mul(out[0], den // out[1]), mul(b[0], den // b[1])
        out = _q(minimum(x, y) if kind == "min" else maximum(x, y), den)
    return out


def _call_1(fn: Callable[[_Q], _Q]) -> Callable[[list[_Q]], _Q]:
    def call(args: list[_Q]) -> _Q:
        if len(args) != 1:
            raise _Fail
        return fn(args[0])

    return call


def _call_2(fn: Callable[[_Q, _Q], _Q]) -> Callable[[list[_Q]], _Q]:
    def call(args: list[_Q]) -> _Q:
        if len(args) != 2:
            raise _Fail
        return fn(args[0], args[1])

    return call


def _modular_indexing(args: list[_Q]) -> _Q:
    """torch's ModularIndexing(base, divisor, modulus) = (base // divisor) % modulus."""
    if len(args) != 3:
        raise _Fail
    return _q_mod(_q_floordiv(args[0], args[1]), args[2])


_FUNCTIONS: dict[str, Callable[[list[_Q]], _Q]] = {
    "floor": _call_1(_q_floor),
    "ceiling": _call_1(_q_ceil),
    "ceil": _call_1(_q_ceil),
    "Max": lambda args: _q_minmax("max", args),
    "max": lambda args: _q_minmax("max", args),
    "Min": lambda args: _q_minmax("min", args),
    "min": lambda args: _q_minmax("min", args),
    "Mod": _call_2(_q_mod),
    "FloorDiv": _call_2(_q_floordiv),
    "CeilDiv": _call_2(_q_ceildiv),
    "ModularIndexing": _modular_indexing,
}

# binary operators: precedence, right-associative, evaluation; prefix `-`/`+` bind between `*` and `**`
_BINARY: dict[str, tuple[int, bool, Callable[[_Q, _Q], _Q]]] = {
    "+": (1, False, _q_add),
    "-": (1, False, _q_sub),
    "*": (2, False, _q_mul),
    "/": (2, False, _q_div),
    "//": (2, False, _q_floordiv),
    "%": (2, False, _q_mod),
    "**": (4, True, _q_pow),
}
_UNARY_PREC = 3


def _parse(text: str) -> Dim:
    """The integer expression `text` reads as (`M+1`, `2*(N+5)`, `floor(H/2 - 1/2)`), or None when it is not one
    (a bare name, unknown text, past the caps, not an integer polynomial). Never raises."""
    if text.isidentifier():
        return None
    try:
        toks = _tokens(text)
        if len(toks) == 1 and toks[0][0] == "name":
            return None  # a name with spaces around it is a name of its own, not that name
        value = _evaluate(toks)
    except _Fail:
        return None
    if value[1] != 1:
        return None
    return value[0]


def _operand(tok: _Token) -> _Q:
    kind, v = tok
    if kind == "num":
        assert isinstance(v, int)
        return v, 1
    assert isinstance(v, str)
    return symbol(v), 1  # a name, or a quoted name: the symbol its text is (what its key prints back)


def _evaluate(toks: list[_Token]) -> _Q:
    """Shunting-yard over the tokens: values on one stack, pending operators and open parentheses / calls on the
    other. Iterative; every malformed input ends in _Fail."""
    values: list[_Q] = []
    # ("bin", op) | ("neg"/"pos", "") | ("(", "") | ("call", function name); calls count their arguments
    ops: list[tuple[str, str]] = []
    argc: list[int] = []  # arguments seen so far, one entry per open "(" or call on `ops`

    def apply(top: tuple[str, str]) -> None:
        kind, op = top
        if kind == "bin":
            if len(values) < 2:
                raise _Fail
            b = values.pop()
            a = values.pop()
            values.append(_BINARY[op][2](a, b))
        elif kind in ("neg", "pos"):
            if not values:
                raise _Fail
            if kind == "neg":
                values.append(_q_neg(values.pop()))
        else:
            raise _Fail  # an unclosed parenthesis

    def unwind() -> tuple[str, str]:
        """Apply operators down to the innermost open parenthesis or call, and pop that."""
        while ops and ops[-1][0] not in ("(", "call"):
            apply(ops.pop())
        if not ops:
            raise _Fail
        return ops.pop()

    expect_operand = True
    i, n = 0, len(toks)
    while i < n:
        kind, v = toks[i]
        if expect_operand:
            if kind in ("num", "quoted"):
                values.append(_operand(toks[i]))
                expect_operand = False
            elif kind == "name":
                if i + 1 < n and toks[i + 1][0] == "(":
                    if v not in _FUNCTIONS:
                        raise _Fail
                    assert isinstance(v, str)
                    ops.append(("call", v))
                    argc.append(0)
                    i += 1  # the "(" is the call's
                else:
                    values.append(_operand(toks[i]))
                    expect_operand = False
            elif kind == "(":
                ops.append(("(", ""))
                argc.append(0)
            elif kind == "op" and v in ("-", "+"):
                ops.append(("neg" if v == "-" else "pos", ""))
            else:
                raise _Fail
        elif kind == "op":
            assert isinstance(v, str)
            prec, right, _ = _BINARY[v]
            while ops:
                top_kind, top_op = ops[-1]
                if top_kind == "bin":
                    top_prec = _BINARY[top_op][0]
                elif top_kind in ("neg", "pos"):
                    top_prec = _UNARY_PREC
                else:
                    break
                if top_prec > prec or (top_prec == prec and not right):
                    apply(ops.pop())
                else:
                    break
            ops.append(("bin", v))
            expect_operand = True
        elif kind == ",":
            while ops and ops[-1][0] not in ("(", "call"):
                apply(ops.pop())
            if not ops or ops[-1][0] != "call":
                raise _Fail
            argc[-1] += 1
            expect_operand = True
        elif kind == ")":
            opener = unwind()
            count = argc.pop() + 1
            if opener[0] == "call":
                if len(values) < count:
                    raise _Fail
                args = values[len(values) - count :]
                del values[len(values) - count :]
                values.append(_FUNCTIONS[opener[1]](args))
            elif count != 1:
                raise _Fail
        else:
            raise _Fail  # an operand, "(" or "," right after an operand
        i += 1
    if expect_operand:
        raise _Fail
    while ops:
        apply(ops.pop())
    if len(values) != 1:
        raise _Fail
    return values[0]


# ---- arithmetic (None in, None out)
def add(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return _int(a + b)
    poly = _poly_of(a)
    for m, c in _poly_of(b).items():
        poly[m] = poly.get(m, 0) + c
    return _make(poly)


def neg(a: Dim) -> Dim:
    if a is None:
        return None
    if isinstance(a, int):
        return _int(-a)
    return _make({m: -c for m, c in a.poly})


def sub(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return _int(a - b)  # not through neg: -INT64_MIN is past int64 while a - INT64_MIN may not be
    return add(a, neg(b))


def mul(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return _int(a * b)
    if a == 0 or b == 0:
        return 0
    pa, pb = _poly_of(a), _poly_of(b)
    if len(pa) * len(pb) > MAX_TERMS * 2:
        return None
    poly: dict[Mono, int] = {}
    for ma, ca in pa.items():
        for mb, cb in pb.items():
            m = tuple(sorted(ma + mb, key=lambda at: at.key))
            poly[m] = poly.get(m, 0) + ca * cb
    return _make(poly)


def floordiv(a: Dim, d: Dim) -> Dim:
    """floor(a / d) for a positive int d (anything else: unknown)."""
    if a is None or not isinstance(d, int) or d <= 0:
        if isinstance(a, int) and isinstance(d, int) and d < 0:
            return _int(a // d)
        return None
    if isinstance(a, int):
        return _int(a // d)
    if d == 1:
        return a
    if d > INT64_MAX:
        return None
    g = gcd(d, *(c for _, c in a.poly))
    if g > 1:  # floor(g*E / (g*d)) = floor(E/d): one key for one value (`floor(2*N/4)` is `floor(N/2)`)
        return floordiv(_make({m: c // g for m, c in a.poly}), d // g)
    poly = dict(a.poly)
    const = poly.pop((), 0)
    if all(c % d == 0 for c in poly.values()):
        # floor((d*k*X + c) / d) = k*X + floor(c / d)
        return add(_make({m: c // d for m, c in poly.items()}), const // d)
    whole = {m: c for m, c in poly.items() if c % d == 0}
    if whole:
        # floor((d*Q + R) / d) = Q + floor(R / d)
        rest = {m: c for m, c in poly.items() if c % d}
        rest[()] = const
        return add(_make({m: c // d for m, c in whole.items()}), floordiv(_make(rest), d))
    if all(c < 0 for c in poly.values()):
        # floor(-X / d) = -ceil(X / d) = -floor((X + d - 1) / d): one key for one value, positive inside
        return neg(floordiv(_make({**{m: -c for m, c in poly.items()}, (): d - 1 - const}), d))
    if len(poly) == 1:
        (mono, coeff), = poly.items()
        if coeff == 1 and len(mono) == 1 and mono[0].kind == "floor":
            inner, e = mono[0].args
            if isinstance(e, int):
                # floor((floor(E/e) + c) / d) = floor((E + e*c) / (e*d))
                return floordiv(add(inner, e * const), e * d)
    # keep 0 <= constant < d inside the floor: floor((X + c)/d) = floor((X + c % d)/d) + c // d
    inner_poly = dict(poly)
    if const % d:
        inner_poly[()] = const % d
    inner = _make(inner_poly)
    if inner is None:
        return None
    shown = f"({inner})" if isinstance(inner, Expr) and len(inner.poly) > 1 else str(inner)
    key = f"floor({shown}/{d})"
    atom = _atom("floor", "", (inner, d), key)
    return add(_make({(atom,): 1}), const // d)


def ceildiv(a: Dim, d: Dim) -> Dim:
    """ceil(a / d) = floor((a + d - 1) / d) for a positive int d, so it folds with other floors."""
    if isinstance(d, int) and d > 0:
        return floordiv(add(a, d - 1), d)
    return neg(floordiv(neg(a), d))


def mod(a: Dim, d: Dim) -> Dim:
    if isinstance(a, int) and isinstance(d, int) and d != 0:
        return _int(a % d)
    return sub(a, mul(d, floordiv(a, d)))


def _minmax(kind: str, a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b) if kind == "min" else max(a, b)
    diff = sub(a, b)
    if isinstance(diff, int):  # a = b + diff
        return (b if diff >= 0 else a) if kind == "min" else (a if diff >= 0 else b)
    x, y = sorted((a, b), key=lambda v: str(v))
    atom = _atom(kind, "", (x, y), f"{kind}({x}, {y})")
    return _make({(atom,): 1})


def minimum(a: Dim, b: Dim) -> Dim:
    return _minmax("min", a, b)


def maximum(a: Dim, b: Dim) -> Dim:
    return _minmax("max", a, b)


def product(dims: Iterable[Dim]) -> Dim:
    """The product; its int factors are multiplied exactly first, so `[2**62, 4, 0]` is 0, not past int64."""
    const = 1
    out: Dim = 1
    for d in dims:
        if d is None:
            return None
        if isinstance(d, int):
            const *= d
        else:
            out = mul(out, d)
    return mul(out, _int(const))


# ---- substitution
def replace(x: Dim, target: Expr, value: Dim) -> Dim:
    """x with every occurrence of `target` (a symbol, or an expression as a whole or as an argument of floor, min
    or max) replaced by `value`, rebuilt canonically."""
    if x is None or isinstance(x, int):
        return x
    if x is target:
        return value
    out: Dim = 0
    for mono, coeff in x.poly:
        term: Dim = coeff
        for atom in mono:
            term = mul(term, _replace_atom(atom, target, value))
        out = add(out, term)
    return out


def _replace_atom(atom: Atom, target: Expr, value: Dim) -> Dim:
    if atom.kind == "sym":
        sym = symbol_of(atom)
        return value if sym is target else sym
    a, b = (replace(v, target, value) for v in atom.args)
    if atom.kind == "floor":
        return floordiv(a, b)
    return minimum(a, b) if atom.kind == "min" else maximum(a, b)


def value_at(x: Dim, sizes: dict[str, int]) -> int | None:
    """x at those sizes of its symbols, as an integer, computed without building an expression: None where a symbol
    is not given, x is unknown, or the value is outside int64 (as `replace` would give)."""
    if isinstance(x, int) or x is None:
        return x
    total = 0
    for mono, coeff in x.poly:
        term = coeff
        for atom in mono:
            v = _atom_at(atom, sizes)
            if v is None:
                return None
            term *= v
        total += term
    return total if INT64_MIN <= total <= INT64_MAX else None


def _atom_at(atom: Atom, sizes: dict[str, int]) -> int | None:
    if atom.kind == "sym":
        return sizes.get(atom.name)
    a, b = (value_at(arg, sizes) for arg in atom.args)
    if a is None or b is None:
        return None
    if atom.kind == "floor":
        return a // b if b else None
    return min(a, b) if atom.kind == "min" else max(a, b)


def never(x: Dim, value: int) -> bool:
    """Whether x provably never equals `value` (every symbol a dim): by its bounds, or by its residue modulo the
    gcd of its coefficients (`2*floor(H/2)` is never 1)."""
    if x is None:
        return False
    if isinstance(x, int):
        return x != value
    lo, hi = bounds(x)
    if (lo is not None and lo > value) or (hi is not None and hi < value):
        return True
    g = gcd(*(c for m, c in x.poly if m))
    const = sum(c for m, c in x.poly if not m)
    return g >= 2 and (value - const) % g != 0


# ---- bounds
Bounds = tuple[int | None, int | None]  # (lowest, highest) provable values; None is unbounded


def bounds(x: Dim, sym_low: int = 0) -> Bounds:
    """Provable bounds of x, every symbol taken to be a dim (>= 0; >= `sym_low` when that is asked for)."""
    if x is None:
        return None, None
    if isinstance(x, int):
        return x, x
    lo: int | None = 0
    hi: int | None = 0
    for mono, coeff in x.poly:
        a, b = _mono_bounds(mono, sym_low)
        if coeff < 0:
            a, b = b, a
        lo = None if lo is None or a is None else lo + coeff * a
        hi = None if hi is None or b is None else hi + coeff * b
    return lo, hi


def _mono_bounds(mono: Mono, sym_low: int) -> Bounds:
    if len(mono) == 1:
        return _atom_bounds(mono[0], sym_low)
    lo: int | None = 1
    hi: int | None = 1
    for atom in mono:
        a, b = _atom_bounds(atom, sym_low)
        if a is None or a < 0:
            return None, None
        lo = None if lo is None else lo * a
        hi = None if hi is None or b is None else hi * b
    return lo, hi


def _atom_bounds(atom: Atom, sym_low: int) -> Bounds:
    if atom.kind == "sym":
        return sym_low, None
    if atom.kind == "floor":
        lo, hi = bounds(atom.args[0], sym_low)
        den = atom.args[1]
        assert isinstance(den, int)
        return (None if lo is None else lo // den), (None if hi is None else hi // den)
    (a_lo, a_hi), (b_lo, b_hi) = bounds(atom.args[0], sym_low), bounds(atom.args[1], sym_low)
    if atom.kind == "min":
        los = None if a_lo is None or b_lo is None else min(a_lo, b_lo)
        his = [v for v in (a_hi, b_hi) if v is not None]
        return los, (min(his) if his else None)
    lows = [v for v in (a_lo, b_lo) if v is not None]
    return (max(lows) if lows else None), (None if a_hi is None or b_hi is None else max(a_hi, b_hi))


# ---- comparison
def equal(a: Dim, b: Dim) -> bool | None:
    """True if a and b are the same dimension, False if they differ, None if that is not known."""
    if a is None or b is None:
        return None
    if a is b:
        return True
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    diff = sub(a, b)
    if isinstance(diff, int):
        return diff == 0
    return None


def is_known(d: Dim) -> bool:
    return isinstance(d, int)


def to_str(d: Dim) -> str:
    return "?" if d is None else str(d)


def to_json(d: Dim) -> int | str | None:
    """A dim in the `shapes` JSON: int, the symbol's own name (`p2o.DynamicDimension.0`, never ONNX text's
    quoting of it), an expression's text, or null."""
    if d is None or isinstance(d, int):
        return d
    if len(d.poly) == 1:
        mono, coefficient = d.poly[0]
        if coefficient == 1 and len(mono) == 1 and mono[0].kind == "sym":
            return mono[0].name
    return d.key
