"""The op DSL's parser: `grammar/onnxop.lark` (LALR, lark's contextual lexer), positions on every element, and
recovery.

Recovery: the file is cut into its top-level declarations (`library`, `domain`, `op NAME { ... }`) by a scan of
its brackets, and each is parsed alone, so a broken declaration costs only itself. An `op` whose `{` is never
closed ends where the next declaration starts on a line of its own. A declaration that does not parse is parsed
again statement by statement (each statement of an op's body starts with its keyword), so every broken statement
is reported at once, each at its line and column, and the declaration is left out of the library.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
import threading
from bisect import bisect_right
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import lark
from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from graphlsp.files import read_regular_text
from graphlsp.oplib import model as m
from graphlsp.oplib.cachefiles import cache_dir, grammar_path

SYNTAX = "GL601"  # the code of a syntax error in a library file (graphlsp check, the editor)
MEMBER_KEYWORDS = ("doc", "input", "output", "attr", "type", "require", "dim", "let", "shape", "alternative")
ITEM_KEYWORDS = ("op", "library", "domain")


def _cache_file(grammar: str) -> str | bool:
    folder = cache_dir()
    if folder is None:
        return False
    digest = hashlib.sha256(grammar.encode()).hexdigest()[:16]
    name = f"onnxop-{digest}-py{sys.version_info[0]}{sys.version_info[1]}-lark{lark.__version__}.cache"
    return os.path.join(folder, name)


_LOCK = threading.Lock()


@cache
def _parser() -> lark.Lark:
    with open(grammar_path(), encoding="utf-8") as f:
        text = f.read()
    return lark.Lark(text, parser="lalr", propagate_positions=True, maybe_placeholders=True,
                     start=["start", "item", "member"], cache=_cache_file(text))  # fmt: skip


# ---- positions
class _Lines:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [mt.end() for mt in _LINE_END.finditer(text)]  # \n, \r\n and a lone \r, as in LSP

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1

    def loc(self, start: int, end: int) -> m.Loc:
        (l1, c1), (l2, c2) = self.position(start), self.position(max(start, end))
        return m.Loc(l1, c1, l2, c2, start, max(start, end))


# ---- cutting a file into declarations
_LINE_END = re.compile(r"\r\n?|\n")
_SCAN = re.compile(
    r'"(?:[^"\\\r\n]|\\.)*"?|#[^\r\n]*|[A-Za-z_][A-Za-z0-9_]*|[{}()\[\]]|\r\n?|\n|[^\sA-Za-z_"#{}()\[\]]+|[ \t\f]+'
)


class _Tok:
    __slots__ = ("text", "start", "end", "depth", "line_start")

    def __init__(self, text: str, start: int, end: int, depth: int, line_start: bool) -> None:
        self.text = text
        self.start = start
        self.end = end
        self.depth = depth  # the brace depth before the token
        self.line_start = line_start  # the first token of its line


def _tokens(text: str, start: int = 0, end: int | None = None) -> Iterator[_Tok]:
    depth = 0
    line_start = True
    for mt in _SCAN.finditer(text, start, len(text) if end is None else end):
        s = mt.group()
        if s[0] in "\r\n":
            line_start = True
            continue
        if s[0] in " \t\f" or s[0] == "#":
            continue
        yield _Tok(s, mt.start(), mt.end(), depth, line_start)
        line_start = False
        if s == "{":
            depth += 1
        elif s == "}":
            depth = max(0, depth - 1)


class _Chunk:
    __slots__ = ("start", "end", "keyword", "unclosed", "brace")

    def __init__(self, start: int, end: int, keyword: str, unclosed: bool = False, brace: int = -1) -> None:
        self.start = start
        self.end = end
        self.keyword = keyword
        self.unclosed = unclosed  # an op whose '{' is never closed
        self.brace = brace  # where its '{' is


def _chunks(text: str) -> list[_Chunk]:
    """The top-level declarations: each starts at an item keyword at bracket depth 0 (or, inside an op whose `{`
    is never closed, at an item keyword that begins a line followed by a name)."""
    toks = list(_tokens(text))
    starts: list[int] = []
    cut: set[int] = set()  # starts inside an op that was never closed
    depth = 0
    for i, t in enumerate(toks):
        if t.text in ITEM_KEYWORDS:
            following = toks[i + 1].text if i + 1 < len(toks) else ""
            if depth == 0 or (t.line_start and (following[:1].isalpha() or following[:1] == "_")):
                if depth:
                    cut.add(i)
                starts.append(i)
                depth = 0
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth = max(0, depth - 1)
    out: list[_Chunk] = []
    if starts and starts[0] > 0:  # tokens before the first declaration
        out.append(_Chunk(toks[0].start, toks[starts[0]].start, ""))
    elif not starts and toks:
        out.append(_Chunk(toks[0].start, len(text), ""))
    for k, i in enumerate(starts):
        t = toks[i]
        nxt = toks[starts[k + 1]].start if k + 1 < len(starts) else len(text)
        if i in cut and out:  # cut the unclosed op before this one
            out[-1].unclosed = True
        chunk = _Chunk(t.start, nxt, t.text)
        if t.text == "op":  # an op ends at its closing brace; what follows belongs to no declaration
            depth = 0
            for u in toks[i + 1:]:
                if u.start >= nxt:
                    break
                if u.text == "{":
                    if chunk.brace < 0:
                        chunk.brace = u.start
                    depth += 1
                elif u.text == "}":
                    depth -= 1
                    if depth == 0 and chunk.brace >= 0:
                        if text[u.end:nxt].strip():
                            chunk.end = u.end
                            out.append(chunk)
                            chunk = _Chunk(u.end, nxt, "")
                            chunk.start = _skip_space(text, u.end, nxt)
                        else:
                            chunk.end = u.end
                        break
        out.append(chunk)
    return [c for c in out if text[c.start:c.end].strip()]


def _skip_space(text: str, start: int, end: int) -> int:
    for mt in _SCAN.finditer(text, start, end):
        s = mt.group()
        if not (s.isspace() or s.startswith("#")):
            return mt.start()
    return end


# ---- diagnostics
_TERMINALS = {
    "NAME": "a name", "STRING": "a quoted string", "INT": "an integer", "FLOAT": "a number", "CODE": "a rule code",
    "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "COLON": "':'",
    "COMMA": "','", "EQUAL": "'='", "DOT": "'.'", "AT": "'@'", "OPTIONAL": "'?'", "ELLIPSIS": "'...'",
    "BAR": "'|'", "STAR": "'*'", "SLASH": "'/'", "DSLASH": "'//'", "PERCENT": "'%'", "PLUS": "'+'", "MINUS": "'-'",
    "EQ": "'=='", "NE": "'!='", "LE": "'<='", "GE": "'>='", "LT": "'<'", "GT": "'>'", "ARROW": "'->'",
    "PYTHON": "'python'", "HETEROGENEOUS": "'heterogeneous'", "$END": "the end of the declaration",
}  # fmt: skip


def _readable(name: str) -> str:
    if name in _TERMINALS:
        return _TERMINALS[name]
    pattern = _keyword(name)
    return f"'{pattern}'" if pattern else name.lower()


@cache
def _keyword_map() -> dict[str, str]:
    return {t.name: t.pattern.value for t in _parser().terminals if t.pattern.type == "str"}


def _keyword(name: str) -> str:
    return _keyword_map().get(name, "")


def _expected(names: set[str]) -> str:
    if {"NAME", "INT", "LPAR", "MINUS"} <= names:  # where an expression starts
        run = " ('*N' or '...' for a run of dims)" if {"STAR", "ELLIPSIS"} & names else ""
        return f"an expression{run}"
    words = sorted({_readable(n) for n in names if not n.startswith("__")})
    operators = [w for w in words if w.startswith("'") and not w[1:-1].isalpha()]
    if len(words) > 8 and len(operators) > 4:  # after a complete expression: anything may continue it
        words = [w for w in words if w not in operators] + ["an operator"]
    if len(words) > 8:
        words = words[:8] + ["..."]
    if not words:
        return "something else"
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _found(tok: Token) -> str:
    if tok.type == "$END":
        return "the end of the declaration"
    s = str(tok)
    return f"'{s[:21] + '...' if len(s) > 24 else s}'"


def _problem(err: UnexpectedInput, text: str, base: int, end: int, lines: _Lines, path: str,
             what: str = "declaration") -> m.Problem:  # fmt: skip
    if isinstance(err, UnexpectedCharacters):
        pos = base + (err.pos_in_stream or 0)
        ch = text[pos] if pos < len(text) else ""
        if ch == '"':
            return m.Problem(path, lines.loc(pos, pos + 1), "unterminated string: no closing '\"' on its line",
                             code=SYNTAX)
        return m.Problem(path, lines.loc(pos, pos + 1), f"unexpected character {ch!r}", code=SYNTAX)
    if isinstance(err, UnexpectedToken):
        tok = err.token
        at = base + (tok.start_pos or 0) if tok.type != "$END" else end
        stop = base + (tok.end_pos or 0) if tok.type != "$END" else end
        expected = set(err.expected)
        try:  # the exact set: LALR's default reductions make err.expected too wide
            if err.interactive_parser is not None:
                expected = set(err.interactive_parser.accepts()) or expected
        except Exception:
            pass
        expected.discard("$END") if expected - {"$END"} and tok.type != "$END" else None
        found = f"the end of the {what}" if tok.type == "$END" else _found(tok)
        return m.Problem(path, lines.loc(at, stop), f"expected {_expected(expected)}, found {found}", code=SYNTAX)
    return m.Problem(path, lines.loc(end, end), str(err).splitlines()[0], code=SYNTAX)


# ---- the parser
class _Builder:
    """lark's tree to the model's dataclasses, with locations."""

    def __init__(self, text: str, base: int, lines: _Lines, path: str) -> None:
        self.text = text
        self.base = base
        self.lines = lines
        self.path = path
        self.problems: list[m.Problem] = []

    def loc(self, x: Tree | Token) -> m.Loc:
        if isinstance(x, Token):
            return self.lines.loc(self.base + (x.start_pos or 0), self.base + (x.end_pos or 0))
        meta = x.meta
        if getattr(meta, "empty", True):
            return m.NO_LOC
        return self.lines.loc(self.base + meta.start_pos, self.base + meta.end_pos)

    def string(self, tok: Token) -> str:
        try:
            value = ast.literal_eval(str(tok))
        except (ValueError, SyntaxError):
            self.problems.append(m.Problem(self.path, self.loc(tok), "invalid escape in string", code=SYNTAX))
            return str(tok)[1:-1]
        return value if isinstance(value, str) else str(value)

    def integer(self, tok: Token, sign: int = 1) -> int:
        """An integer literal; beyond int64 (what ONNX's dims, attributes and versions hold) it is a problem, not a
        number for the checker to convert to a float (OverflowError) or Python to refuse to read (4,300 digits)."""
        digits = str(tok)
        if len(digits.lstrip("0")) <= 19:
            value = sign * int(digits)
            if -(1 << 63) <= value < (1 << 63):
                return value
        self.problems.append(m.Problem(self.path, self.loc(tok), "integer out of range (ONNX integers are int64)",
                                       code=SYNTAX))  # fmt: skip
        return 0

    # ---- expressions
    def expr(self, x: Tree | Token) -> m.Expr:
        if isinstance(x, Token):  # a bare token reached through an inlined rule
            return self._token_expr(x)
        loc = self.loc(x)
        kind = x.data
        c: list[Any] = x.children
        if kind == "int":
            return m.Num(loc, self.integer(c[0]))
        if kind == "float":
            return m.Num(loc, float(c[0]))
        if kind == "string":
            return m.Str(loc, self.string(c[0]))
        if kind == "name":
            return m.Name(loc, str(c[0]))
        if kind == "call":
            return m.Call(loc, str(c[0]), tuple(self.expr(a) for a in c[1:] if a is not None))
        if kind == "index":
            return m.Index(loc, self.expr(c[0]), self.expr(c[1]))
        if kind == "binop":
            return m.BinOp(loc, str(c[1]), self.expr(c[0]), self.expr(c[2]))
        if kind == "neg":
            return m.Neg(loc, self.expr(c[1]))
        if kind == "compare":
            return m.Compare(loc, str(c[1]), self.expr(c[0]), self.expr(c[2]))
        if kind == "member_of":
            return m.MemberOf(loc, self.expr(c[0]), tuple(self.expr(a) for a in c[1:]))
        if kind in ("or_", "and_"):
            return m.BoolOp(loc, kind[:-1], self.expr(c[0]), self.expr(c[1]))
        if kind == "not_":
            return m.Not(loc, self.expr(c[0]))
        if kind == "cond":
            return m.Cond(loc, self.expr(c[1]), self.expr(c[0]), self.expr(c[2]))
        raise ValueError(f"unexpected expression {kind}")

    def _token_expr(self, tok: Token) -> m.Expr:
        loc = self.loc(tok)
        if tok.type == "INT":
            return m.Num(loc, self.integer(tok))
        if tok.type == "FLOAT":
            return m.Num(loc, float(tok))
        if tok.type == "STRING":
            return m.Str(loc, self.string(tok))
        return m.Name(loc, str(tok))

    # ---- declarations
    def dotted(self, x: Tree) -> str:
        return ".".join(str(t) for t in x.children)

    def type_ref(self, x: Tree) -> str:
        name = str(x.children[0])
        args = [self.type_ref(a) for a in x.children[1:] if isinstance(a, Tree)]
        return f"{name}({', '.join(args)})" if args else name

    def value(self, x: Tree | Token) -> Any:
        if isinstance(x, Token):
            return self.string(x) if x.type == "STRING" else str(x)
        if x.data == "number":
            toks: list[Any] = [t for t in x.children if t is not None]
            sign = -1 if len(toks) == 2 else 1
            num = toks[-1]
            return self.integer(num, sign) if num.type == "INT" else sign * float(num)
        if x.data == "string":
            return self.string(x.children[0])  # type: ignore[arg-type]
        if x.data == "list":
            return [self.value(v) for v in x.children if v is not None]
        raise ValueError(f"unexpected value {x.data}")

    def pattern(self, x: Tree) -> m.Pattern:
        dims: list[m.DimPat] = []
        for d in x.children:
            if d is None:
                continue
            if isinstance(d, Tree) and d.data == "run":
                name = next((str(t) for t in d.children if isinstance(t, Token) and t.type == "NAME"), None)
                dims.append(m.Run(name, self.loc(d)))
            elif isinstance(d, Token) and d.type == "ELLIPSIS":
                dims.append(m.Run(None, self.loc(d)))
            else:
                dims.append(self.expr(d))
        return m.Pattern(tuple(dims), self.loc(x))

    def param(self, x: Tree) -> m.Param:
        c: list[Any] = x.children
        name = c[0]
        p = m.Param(str(name), "", "single", self.loc(name))
        for part in c[1:]:
            if isinstance(part, Token):
                if part.type == "HETEROGENEOUS":
                    p.homogeneous = False
                elif part.type == "STRING":
                    p.doc = self.string(part)
                continue
            if part.data == "optional":
                p.option = "optional"
            elif part.data == "variadic":
                p.option = "variadic"
                p.min_arity = 0 if len(part.children) > 1 else 1
            elif part.data == "type_ref":
                p.type_str = self.type_ref(part)
                p.type_loc = self.loc(part)
            elif part.data == "patterns":
                p.patterns = tuple(self.pattern(t) for t in part.children if isinstance(t, Tree))
            elif part.data == "pattern":
                p.patterns = (self.pattern(part),)
            elif part.data == "same":
                p.same = self.expr(part.children[0])
        return p

    def member(self, op: m.OpDecl, x: Tree) -> None:
        kind = x.data
        c: list[Any] = x.children
        if kind == "doc":
            op.doc += "".join(self.string(t) for t in c)
        elif kind in ("input", "output"):
            p = self.param(c[0])
            if kind == "output" and len(c) > 1 and isinstance(c[1], Tree):
                p.when = self.expr(c[1].children[0])
            (op.inputs if kind == "input" else op.outputs).append(p)
        elif kind == "attr":
            name = c[0]
            rest = list(c[1:])
            optional = bool(rest) and isinstance(rest[0], Token) and rest[0].type == "OPTIONAL"
            if optional:
                rest = rest[1:]
            type_name = str(rest[0])
            default = None
            doc = ""
            for part in rest[1:]:  # the default is a value tree; the doc a bare string token
                if isinstance(part, Tree):
                    default = self.value(part)
                elif isinstance(part, Token) and part.type == "STRING":
                    doc = self.string(part)
            if str(name) in op.attrs:
                self.problems.append(m.Problem(self.path, self.loc(name), f"attribute '{name}' is declared twice"))
            op.attrs[str(name)] = m.AttrDecl(str(name), type_name, not optional and default is None, default,
                                             self.loc(name), doc)  # fmt: skip
        elif kind == "type":
            name = c[0]
            refs = [t for t in c[1:] if isinstance(t, Tree)]
            doc = next((self.string(t) for t in c[1:] if isinstance(t, Token) and t.type == "STRING"), "")
            if str(name) in op.types:
                self.problems.append(m.Problem(self.path, self.loc(name), f"type constraint '{name}' is declared "
                                               "twice"))  # fmt: skip
            op.types[str(name)] = m.TypeDecl(str(name), [self.type_ref(t) for t in refs], self.loc(name), doc,
                                             [self.loc(t) for t in refs])  # fmt: skip
        elif kind == "require":
            code = next((str(t) for t in c[1:] if isinstance(t, Token) and t.type == "CODE"), "")
            message = next((self.string(t) for t in c[1:] if isinstance(t, Token) and t.type == "STRING"), "")
            op.requires.append(m.Require(self.expr(c[0]), code, message, self.loc(x)))
        elif kind == "symbol":
            name = c[0]
            doc = next((self.string(t) for t in c[1:] if isinstance(t, Token) and t.type == "STRING"), "")
            code = next((str(t) for t in c[1:] if isinstance(t, Token) and t.type == "CODE"), "")
            op.symbols[str(name)] = m.Symbol(str(name), doc, code, self.loc(name))
        elif kind == "let":
            name = c[0]
            if str(name) in op.lets:
                self.problems.append(m.Problem(self.path, self.loc(name), f"'{name}' is defined twice"))
            op.lets[str(name)] = self.expr(c[1])
            op.let_locs[str(name)] = self.loc(name)
        elif kind in ("python", "delegate"):
            if op.shape is not None:
                self.problems.append(m.Problem(self.path, self.loc(x), "a second `shape` statement: an op has one"))
            op.shape = self.delegate(x)
        elif kind == "alternative":
            op.alternative = self.string(c[0])

    def delegate(self, x: Tree) -> m.Delegate:
        if x.data == "python":
            return m.Delegate(self.loc(x), python=True)
        c: list[Any] = x.children
        target = self.dotted(c[0])
        domain, _, op = target.rpartition(".")
        d = m.Delegate(self.loc(c[0]), op=op, domain="" if domain == "ai.onnx" else domain)
        for part in c[1:]:
            if part is None:
                continue
            if isinstance(part, Tree) and part.data == "version":
                d.version = self.integer(part.children[0])  # type: ignore[arg-type]
            elif isinstance(part, Tree) and part.data == "arg":
                d.args.append(None if str(part.children[0]) == "_" else str(part.children[0]))
            elif isinstance(part, Tree) and part.data == "outs":
                d.outs = [None if str(a.children[0]) == "_" else str(a.children[0])
                          for a in part.children if isinstance(a, Tree)]  # fmt: skip
            elif isinstance(part, Tree) and part.data == "with":
                for b in part.children:
                    d.attrs[str(b.children[0])] = self.expr(b.children[1])  # type: ignore[union-attr]
        return d

    def op(self, x: Tree, domain: str, library: str) -> m.OpDecl:
        c: list[Any] = x.children
        full = self.dotted(c[0])
        explicit, _, name = full.rpartition(".")
        dom = explicit if explicit else domain
        decl = m.OpDecl("" if dom == "ai.onnx" else dom, name, self.loc(c[0]), library=library, path=self.path,
                        block=self.loc(x))  # fmt: skip
        decl.source = self.text[decl.block.start:decl.block.end]
        for part in c[1:]:
            if not isinstance(part, Tree):
                continue
            if part.data == "since":
                decl.since = self.integer(part.children[0])  # type: ignore[arg-type]
            elif part.data == "until":
                decl.until = self.integer(part.children[0])  # type: ignore[arg-type]
            else:
                self.member(decl, part)
        return decl


def parse_library(text: str, path: str = "<string>", name: str | None = None,
                  every: list[m.OpDecl] | None = None) -> m.Library:  # fmt: skip
    """Parse a library file: every declaration that parses, and the problems (syntax errors) of the others.

    The declarations are not checked here (see `checker.check_library`). With `every`, each op declaration of the
    text is also appended to it in order, those left out of the library included: an op that does not parse as a
    whole is built from the statements of it that do (an editor's outline, hovers and completion while it is
    typed)."""
    lines = _Lines(text)
    lib = m.Library(name or Path(path).stem, path)
    domain = ""
    parser = _parser()
    for chunk in _chunks(text):
        body = text[chunk.start:chunk.end]
        builder = _Builder(text, chunk.start, lines, path)
        try:
            with _LOCK:
                tree = parser.parse(body, start="item")
        except UnexpectedInput as err:
            lib.problems += _chunk_problems(parser, text, chunk, err, lines, path)
            if every is not None and chunk.keyword == "op":
                partial = _partial_op(parser, text, chunk, lines, path, domain, lib.name)
                if partial is not None:
                    every.append(partial)
            if chunk.keyword == "domain":  # keep the file's later ops in the domain it meant, if it can be read
                found = re.match(r"domain\s+([A-Za-z_][A-Za-z0-9_.]*)", body)
                if found:
                    domain = found.group(1)
            continue
        deep = _too_deep(tree, builder)
        if deep is not None:
            lib.problems.append(deep)
            continue
        children: list[Any] = tree.children
        if tree.data == "library":
            lib.name = str(children[0])
            if len(children) > 1 and children[1] is not None:
                lib.version = builder.string(children[1])
        elif tree.data == "domain":
            domain = builder.dotted(children[0])
            domain = "" if domain == "ai.onnx" else domain
        elif tree.data == "op":
            decl = builder.op(tree, domain, lib.name)
            if every is not None:
                every.append(decl)
            if builder.problems:
                lib.problems += builder.problems
            else:
                lib.ops.append(decl)
    for decl in [*lib.ops, *(every or ())]:
        decl.library = lib.name
    return lib


MAX_DEPTH = 100  # levels of a declaration's syntax tree; a real one has about 15


def _too_deep(tree: Tree, builder: _Builder) -> m.Problem | None:
    """A declaration nested deeper than MAX_DEPTH (a sum of hundreds of terms is as deep as it is long): a problem at
    the part that goes deeper, instead of a RecursionError in the builder, the checker, the evaluator, or in
    pickling the library for the cache (which then failed for every model of the project)."""
    stack: list[tuple[Tree | Token, int, Tree]] = [(tree, 1, tree)]
    while stack:
        node, depth, statement = stack.pop()
        if not isinstance(node, Tree):
            continue
        if depth > MAX_DEPTH:  # the problem spans the statement (the op's member) it is in
            return m.Problem(builder.path, builder.loc(statement), f"nested too deeply (more than {MAX_DEPTH} "
                             "levels): split it, e.g. with `let` for parts of an expression", code=SYNTAX)  # fmt: skip
        stack.extend((c, depth + 1, c if depth == 1 and tree.data == "op" else statement)
                     for c in node.children if c is not None)  # fmt: skip
    return None


def _chunk_problems(parser: lark.Lark, text: str, chunk: _Chunk, err: UnexpectedInput, lines: _Lines,
                    path: str) -> list[m.Problem]:  # fmt: skip
    """Every broken statement of a declaration that does not parse (the first error alone when its statements
    all parse: the header or the braces are what is wrong)."""
    if chunk.keyword == "":
        at = chunk.start
        word = text[at:chunk.end].split(None, 1)[0][:24]
        return [m.Problem(path, lines.loc(at, at + len(word)), f"expected 'op', 'library' or 'domain', found "
                          f"'{word}'", code=SYNTAX)]  # fmt: skip
    if chunk.unclosed or (chunk.keyword == "op" and _unbalanced(text, chunk)):
        opened = chunk.brace if chunk.brace >= 0 else chunk.start
        line, col = lines.position(opened)
        end = _last_token_end(text, chunk)
        problems = [m.Problem(path, lines.loc(end, end), f"expected '}}' to close the op declared at {line}:{col}",
                              code=SYNTAX)]
        return _member_problems(parser, text, chunk, lines, path) + problems
    first = _problem(err, text, chunk.start, chunk.end, lines, path)
    if chunk.keyword != "op":
        return [first]
    found = _member_problems(parser, text, chunk, lines, path)
    return found or [first]


def _unbalanced(text: str, chunk: _Chunk) -> bool:
    depth = 0
    for t in _tokens(text, chunk.start, chunk.end):
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
    return depth > 0


def _last_token_end(text: str, chunk: _Chunk) -> int:
    end = chunk.start
    for t in _tokens(text, chunk.start, chunk.end):
        end = t.end
    return end


def _statements(text: str, chunk: _Chunk) -> list[tuple[int, str]]:
    """The statements of an op's body, each (where it starts, its text): a statement starts at a member keyword at
    depth 1 (inside the op's braces), or at one that begins a line."""
    if chunk.brace < 0:
        return []
    toks = [t for t in _tokens(text, chunk.brace, chunk.end)]
    starts = [i for i, t in enumerate(toks) if t.text in MEMBER_KEYWORDS and (t.depth == 1 or t.line_start)]
    out: list[tuple[int, str]] = []
    for k, i in enumerate(starts):
        start = toks[i].start
        end = toks[starts[k + 1]].start if k + 1 < len(starts) else chunk.end
        stmt = text[start:end]
        closing = stmt.rstrip()
        if k + 1 == len(starts) and closing.endswith("}") and stmt.count("}") > stmt.count("{"):
            stmt = closing[:-1]  # the op's own closing brace
        out.append((start, stmt))
    return out


def _member_problems(parser: lark.Lark, text: str, chunk: _Chunk, lines: _Lines, path: str) -> list[m.Problem]:
    """Each statement of the op's body parsed alone."""
    out: list[m.Problem] = []
    for start, stmt in _statements(text, chunk):
        try:
            with _LOCK:
                parser.parse(stmt, start="member")
        except UnexpectedInput as e:
            out.append(_problem(e, text, start, start + len(stmt.rstrip()), lines, path, "statement"))
    return out


_HEADER = re.compile(r"op\s+([A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)(?:\s+since\s+([0-9]+))?")


def _partial_op(parser: lark.Lark, text: str, chunk: _Chunk, lines: _Lines, path: str, domain: str,
                library: str) -> m.OpDecl | None:  # fmt: skip
    """An op that does not parse, built from its header and the statements of it that parse (None without even a
    name): what an editor shows of it while it is typed."""
    header = _HEADER.match(text, chunk.start, chunk.end)
    if header is None:
        return None
    full = re.sub(r"\s+", "", header.group(1))
    explicit, _, name = full.rpartition(".")
    dom = explicit if explicit else domain
    block = lines.loc(chunk.start, chunk.end)
    decl = m.OpDecl("" if dom == "ai.onnx" else dom, name, lines.loc(header.start(1), header.end(1)), library=library,
                    path=path, block=block, source=text[chunk.start:chunk.end])  # fmt: skip
    if header.group(2) and len(header.group(2)) <= 9:
        decl.since = int(header.group(2))
    for start, stmt in _statements(text, chunk):
        try:
            with _LOCK:
                tree = parser.parse(stmt, start="member")
        except UnexpectedInput:
            continue
        builder = _Builder(text, start, lines, path)
        if _too_deep(tree, builder) is not None:
            continue
        try:
            builder.member(decl, tree)
        except Exception:  # a statement the builder cannot take alone: left out
            continue
    return decl


def parse_file(path: str | Path) -> m.Library:
    """A library file (UTF-8); an unreadable file is one problem."""
    p = Path(path)
    try:
        text = read_regular_text(p)
    except (OSError, UnicodeDecodeError) as e:
        lib = m.Library(p.stem, str(p))
        lib.problems.append(m.Problem(str(p), m.Loc(1, 1, 1, 1), f"cannot read the library: {e}", code=SYNTAX))
        return lib
    return parse_library(text, str(p))
