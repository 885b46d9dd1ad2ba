"""Dim texts evaluated as runtime_shapes.py evaluates them: graphlsp's dims (an int, a symbol, an expression such
as `2*N - 1` or `floor(S / 2)`) under an assignment of the input symbols, to a number or unresolved."""

from __future__ import annotations

import ast
import math
import re
from fractions import Fraction
from typing import Any


class Unresolved(Exception):
    pass


class Unparsed(Exception):
    pass


def looks_like_name(text: str) -> bool:
    return not re.search(r"[+*/()]|\s-\s", text)


class Evaluator:
    """Evaluates graphlsp's dim texts (int, symbol, expression) under an assignment of the input symbols."""

    def __init__(self, symbols: list[str]):
        self.odd = sorted((s for s in symbols if not s.isidentifier()), key=len, reverse=True)
        self.parsed: dict[str, Any] = {}

    def _parse(self, text: str) -> Any:
        if text in self.parsed:
            return self.parsed[text]
        ph: dict[str, str] = {}

        def quoted(m: re.Match) -> str:
            key = f"__q{len(ph)}__"
            ph[key] = m.group(1)
            return key

        s = re.sub(r'"([^"]*)"', quoted, text)
        for name in self.odd:
            pat = r"(?<![A-Za-z0-9_.])" + re.escape(name) + r"(?![A-Za-z0-9_.])"
            s2 = re.sub(pat, f"__q{len(ph)}__", s)
            if s2 != s:
                ph[f"__q{len(ph)}__"] = name
                s = s2
        try:
            out: Any = (ast.parse(s.strip(), mode="eval").body, ph)
        except (SyntaxError, ValueError, RecursionError):
            out = None
        self.parsed[text] = out
        return out

    def eval(self, dim: Any, env: dict[str, int]) -> Fraction | None:
        """A number, or None (unresolved)."""
        if dim is None or isinstance(dim, bool):
            return None
        if isinstance(dim, int):
            return Fraction(dim)
        if dim in env:
            return Fraction(env[dim])
        parsed = self._parse(dim)
        if parsed is None:
            return None
        tree, ph = parsed
        try:
            return self._ev(tree, env, ph)
        except (Unresolved, Unparsed, ZeroDivisionError, OverflowError, ValueError, TypeError, RecursionError):
            return None

    def _ev(self, node: ast.AST, env: dict[str, int], ph: dict[str, str]) -> Fraction:
        def ev(n: ast.AST) -> Fraction:
            return self._ev(n, env, ph)

        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return Fraction(str(node.value))
        if isinstance(node, ast.Name):
            name = ph.get(node.id, node.id)
            if name in env:
                return Fraction(env[name])
            raise Unresolved
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            op = node.op
            if isinstance(op, ast.Add):
                return a + b
            if isinstance(op, ast.Sub):
                return a - b
            if isinstance(op, ast.Mult):
                return a * b
            if isinstance(op, ast.Div):
                return a / b
            if isinstance(op, ast.FloorDiv):
                return Fraction(math.floor(a / b))
            if isinstance(op, ast.Mod):
                return a - b * math.floor(a / b)
            if isinstance(op, ast.Pow) and b.denominator == 1 and abs(b) <= 64:
                return a ** int(b)
            raise Unparsed
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            f = node.func.id.lower()
            args = [ev(a) for a in node.args]
            if f == "floor" and len(args) == 1:
                return Fraction(math.floor(args[0]))
            if f in ("ceil", "ceiling") and len(args) == 1:
                return Fraction(math.ceil(args[0]))
            if f == "min" and args:
                return min(args)
            if f == "max" and args:
                return max(args)
            if f == "mod" and len(args) == 2:
                return args[0] - args[1] * math.floor(args[0] / args[1])
            raise Unparsed
        raise Unparsed
