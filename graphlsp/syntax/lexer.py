"""A fast lexer for the grammar's LALR table, equivalent to lark's contextual lexer on our grammar.

One compiled regex, run over the text with finditer, finds each token (after skipping white space and `#`
comments; a comment ends at a line end as LSP counts them, `\\n`, `\\r\\n` or a lone `\\r`, see positions.py). Words
are retyped to a keyword terminal (a type name, a type constructor, inf/nan) only if the parser's current state
accepts that terminal: this reproduces onnx's look-ahead (`NextIsType`), so `float` is a type in `(float x)` but a
value name in `float = Relu(x)`.

Statements of the simplest form (`[label] y = Op <axis: int = 1> (x)` on one line: a label or none, attributes of
the plain forms onnx's printer writes or none) that follow one another are one token, their nodes built here at
once (see NodesToken), their attributes by the tree builder's own rules (`WindowLexer._attributes`, each text once
per parse): the parser's steps per statement were most of the parse of a large graph.

Nothing here imports lark (a tenth of a start-up): tokens are our own `Token` (what lark's Token holds, and a str
as lark's is), and a character no token starts with raises `BadCharacter`, which grammar.py's lexer for lark's
own parser (the one that describes syntax errors) turns into lark's UnexpectedCharacters.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any

from graphlsp.syntax import tree as t
from graphlsp.syntax.build import simple_node
from graphlsp.syntax.tokens import BadCharacter, Token

# Possessive quantifiers and the unrolled string loop keep the regex engine from backtracking (a third of the
# lexing time). END matches the white space after the last token, so that finditer never falls back to searching.
_TOKEN = re.compile(
    r"""[ \t\r\n\f\v]*+(?:\#[^\r\n]*+[ \t\r\n\f\v]*+)*+(?:
      (?P<STRING>"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+")
    | (?P<WORD>[A-Za-z_][A-Za-z0-9_]*+)
    | (?P<NUMBER>[0-9]++(?:\.[0-9]*+)?(?:[eE][+-]?[0-9]++)?)
    | (?P<ARROW>=>)
    | (?P<PUNCT>[(){}\[\]<>=,:.@?\-])
    | (?P<END>\Z)
    | (?P<BAD>[\s\S])
    )""",
    re.VERBOSE,
)
_NUM = r"-?[0-9]++(?:\.[0-9]*+)?(?:[eE][+-]?[0-9]++)?"
_SPACE = r"[ \t\r\n\f\v]*+"
# tensor data of 16 or more plain numbers: the grammar's NUMBERS (one token)
_NUMBERS = re.compile(r"\{" + _SPACE + "(?:" + _NUM + _SPACE + "," + _SPACE + "){15,}+" + _NUM + _SPACE + r"\}")
# the plain numbers a list starts with, and the character after them if _TOKEN would call it BAD: a list that is
# not NUMBERS because of a stray character is read token by token up to it (a million tokens in a 10 MB literal,
# three times over when recovering: 7 s); the parser accepts every one of those tokens, so the error is there
_NUMBERS_THEN_BAD = re.compile(r"\{" + _SPACE + "(?:" + _NUM + _SPACE + "," + _SPACE + ")*+(?:" + _NUM + _SPACE +
                               r")?+(?:\#[^\r\n]*+[ \t\r\n\f\v]*+)*+(?P<bad>[^\sA-Za-z0-9_\"#(){}\[\]<>=,:.@?\-])")
# a node statement of the simplest form on one line: the grammar's SIMPLE_NODE (one token; see build.simple_node)
_NAME = r'(?:[A-Za-z_][A-Za-z0-9_]*+|"[^"\\\r\n]*+")'
_NAMES = _NAME + r"(?:[ \t]*+,[ \t]*+" + _NAME + r")*+"
# attributes of the simplest forms before the inputs, on the line: `<axis: int = -1, perm = [0, 2, 1], s = "x",
# value: tensor = int64[2] {1, 2}>` (numbers written as onnx's printer writes them, no comment, inf, nan or escape;
# fewer than 16 numbers in a tensor's data, which would be NUMBERS); WindowLexer._attributes builds them
_SP = r"[ \t]*+"
_WORD = r"[A-Za-z_][A-Za-z0-9_]*+"
_SIGNED = r"-?[0-9]++(?:\.[0-9]*+)?(?:[eE][+-]?[0-9]++)?"  # MINUS right before a NUMBER (as _TOKEN reads it)
# at most 15 numbers: 16 or more are the grammar's NUMBERS, and a weight of a million numbers is not read here (the
# regex stops after 15 instead of running over the data before the attributes are refused)
_SIGNED_LIST = "(?:" + _SIGNED + "(?:" + _SP + "," + _SP + _SIGNED + "){0,14}+)?+"
_DIMS = r"\[" + _SP + r"(?:-?[0-9]++(?:" + _SP + "," + _SP + r"-?[0-9]++)*+)?+" + _SP + r"\]"
_VALUE = ("(?:" + _SIGNED + r'|"[^"\\\r\n]*+"|\[' + _SP + _SIGNED + "(?:" + _SP + "," + _SP + _SIGNED + ")*+" + _SP
          + r"\]|" + _WORD + _SP + "(?:" + _DIMS + _SP + r")?+\{" + _SP + _SIGNED_LIST + _SP + r"\})")  # fmt: skip
_ATTR = _WORD + _SP + "(?::" + _SP + _WORD + _SP + ")?+=" + _SP + _VALUE
_ATTRS = "<" + _SP + _ATTR + "(?:" + _SP + "," + _SP + _ATTR + ")*+" + _SP + ">"
_ATTR_TOKEN = re.compile(r'[ \t]*+(?:(?P<w>[A-Za-z_][A-Za-z0-9_]*+)|(?P<n>[0-9]++(?:\.[0-9]*+)?(?:[eE][+-]?[0-9]++)?)'
                         r'|(?P<s>"[^"]*+")|(?P<p>[<>=:,\[\]{}\-]))')  # fmt: skip
_TYPE_CTORS = {"seq", "map", "optional", "sparse_tensor", "opaque"}  # the grammar's keywords that are not prim_type
SIMPLE_NODE = re.compile(
    r"(?:(?P<lsq>\[)[ \t]*+(?P<label>" + _NAME + r")?+[ \t]*+\][ \t]*+)?+"  # a label (exporters name every node)
    r"(?P<outs>" + _NAMES + r")[ \t]*+=[ \t]*+(?P<op>[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+)[ \t]*+"
    r"(?P<attrs>" + _ATTRS + r")?+[ \t]*+"
    r"(?P<lpar>\()[ \t]*+(?P<ins>(?:" + _NAMES + r")?)[ \t]*+\)"
    r"(?![ \t\r\n\f\v]*+(?:\#[^\r\n]*+[ \t\r\n\f\v]*+)*+<)"  # attributes after the inputs: not this form
)
_SKIP = re.compile(r"(?:[ \t\r\n\f\v]+|#[^\r\n]*)*")
_FLOAT_WORDS = {"inf", "infinity", "nan"}
_str_new = str.__new__


def make_token(kind: str, value: str, start: int, end: int) -> Token:
    """A Token without the generic constructor (a third of the lexing time on large files)."""
    tok = _str_new(Token, value)
    tok.type = kind
    tok.value = value
    tok.start_pos = start
    tok.end_pos = end
    tok.line = tok.column = tok.end_line = tok.end_column = None
    return tok


class NodesToken(Token):
    """A SIMPLE_NODE token: a run of statements of the simplest form, one after the other (white space and
    comments between them), with their nodes built already."""

    __slots__ = ("nodes",)

    nodes: list[t.Node]


def _nodes_token(text: str, first: re.Match[str], node: t.Node, end: int, build: Any) -> NodesToken:
    """The run of simple nodes that starts with `first` (whose node is `node`): each is one as the grammar reads it,
    and the parser accepts another where one ends (`node*`), so taking them together changes nothing but the
    cost. `build`: a match's node, or None when the grammar must read it (WindowLexer._simple)."""
    nodes = [node]
    pos = first.end()
    skip, match = _SKIP.match, SIMPLE_NODE.match
    while True:
        m = match(text, skip(text, pos, end).end(), end)  # type: ignore[union-attr]  # _SKIP always matches
        if m is None:
            break
        built = build(text, m)
        if built is None:
            break
        nodes.append(built)
        pos = m.end()
    start = first.start()
    tok = _str_new(NodesToken, text[start:pos])
    tok.type = "SIMPLE_NODE"
    tok.value = text[start:pos]
    tok.start_pos = start
    tok.end_pos = pos
    tok.line = tok.column = tok.end_line = tok.end_column = None
    tok.nodes = nodes
    return tok


def terminal_words(terminals: Iterable[Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The keywords and the punctuation of lark's terminals, each to its terminal's name (e.g. "float" is FLOAT,
    "(" is LPAR), for `WindowLexer.bind`."""
    keywords: dict[str, str] = {}
    punct: dict[str, str] = {}
    for term in terminals:
        pattern = term.pattern
        if pattern.type == "str":
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", pattern.value):
                keywords[pattern.value] = term.name
            else:
                punct[pattern.value] = term.name
    # inf, infinity and nan in every mix of cases (onnx compares them case-insensitively), so that one lookup
    # tells whether a word may need retyping
    for word in _FLOAT_WORDS:
        for spelling in itertools.product(*({c.lower(), c.upper()} for c in word)):
            keywords["".join(spelling)] = "FLOAT_WORD"
    return keywords, punct


class WindowLexer:
    """Lexes `window = (text, start, end)`; set the window before each parse (see grammar.Parser)."""

    __future_interface__ = 2  # read by lark, when grammar.py gives it a subclass of this one

    def __init__(self, lexer_conf: Any = None) -> None:
        self.window: tuple[str, int, int] = ("", 0, 0)
        self.punct: dict[str, str] = {}
        self.keywords: dict[str, str] = {}
        self.states: dict[int, Any] = {}
        self.builder: Any = None  # the parser's TreeBuilder: a simple node's attributes are built by its rules
        # attributes read in this parse, by their text: (where, the attributes or None, the problems found)
        self.seen_attributes: dict[str, tuple[int, list[t.Attribute] | None, list[tuple[str, int, int]]]] = {}

    def bind(self, keywords: dict[str, str], punct: dict[str, str], states: dict[int, Any]) -> None:
        """Learn the terminals' names (`terminal_words`) and the parse table whose states the parser reports (its
        state's actions, keyed by the terminals it accepts)."""
        self.keywords = keywords
        self.punct = punct
        self.states = states

    def lex(self, lexer_state: Any, parser_state: Any) -> Iterator[Token]:
        text, pos, end = self.window
        self.seen_attributes = {}
        punct = self.punct
        keywords = self.keywords
        states = self.states
        while True:
            for m in _TOKEN.finditer(text, pos, end):
                kind: str = m.lastgroup  # type: ignore[assignment]
                start, pos = m.span(kind)
                value: str = m.group(kind)  # type: ignore[assignment]
                if kind == "PUNCT":
                    if value == "{" and "NUMBERS" in states[parser_state.position]:
                        numbers = _NUMBERS.match(text, start, end)
                        if numbers is not None:  # one token for the whole list; lexing goes on after it
                            pos = numbers.end()
                            yield make_token("NUMBERS", numbers.group(), start, pos)
                            break
                        stray = _NUMBERS_THEN_BAD.match(text, start, end)
                        if stray is not None:
                            raise BadCharacter(text, stray.start("bad"), set(states[parser_state.position]))
                    elif value == "[" and "SIMPLE_NODE" in states[parser_state.position]:
                        sm = SIMPLE_NODE.match(text, start, end)  # a label: where a node begins, nothing else
                        node = self._simple(text, sm) if sm is not None else None
                        if node is not None:
                            tok = _nodes_token(text, sm, node, end, self._simple)  # type: ignore[arg-type]
                            pos = tok.end_pos  # type: ignore[assignment]  # always set here
                            yield tok
                            break
                    kind = punct[value]
                elif kind == "NUMBER":  # the other common case: kept as it is
                    pass
                elif kind == "WORD" or kind == "STRING":
                    state = states[parser_state.position]
                    if "SIMPLE_NODE" in state:
                        sm = SIMPLE_NODE.match(text, start, end)
                        node = self._simple(text, sm) if sm is not None else None
                        if node is not None:  # one token for the statements; lexing goes on after them
                            tok = _nodes_token(text, sm, node, end, self._simple)  # type: ignore[arg-type]
                            pos = tok.end_pos  # type: ignore[assignment]  # always set here
                            yield tok
                            break
                    if kind == "WORD":
                        name = keywords.get(value)
                        kind = name if name is not None and name in state else "IDENT"
                elif kind == "ARROW":
                    # `=>` is one token only where an arrow can stand; elsewhere it is `=` then `>`.
                    if "ARROW" not in states[parser_state.position]:
                        yield make_token(punct["="], "=", start, start + 1)
                        kind, value, start = punct[">"], ">", start + 1
                elif kind == "END":
                    return
                else:  # BAD
                    raise BadCharacter(text, start, set(states[parser_state.position]))
                yield make_token(kind, value, start, pos)
            else:
                return

    def _simple(self, text: str, m: re.Match[str]) -> t.Node | None:
        """The node of a match of SIMPLE_NODE, or None when its attributes are for the grammar to read."""
        if m.start("attrs") < 0:
            return simple_node(m, [])
        attributes = self._attributes(text, m.start("attrs"), m.end("attrs"))
        return simple_node(m, attributes) if attributes is not None else None

    def _attributes(self, text: str, start: int, end: int) -> list[t.Attribute] | None:
        """The attributes `<...>` of text[start:end] (a match of _ATTRS) built by the builder's rules with the
        children, in the order, that the parser's reductions give them: the same tree and the same problems as
        read token by token. None when a value is not of the forms this reads (a word that is not an element
        type, 16 numbers or more)."""
        b = self.builder
        if b is None:
            return None
        key = text[start:end]
        seen = self.seen_attributes.get(key)
        if seen is not None:  # the same text read before in this parse: the same tree and problems, moved
            at, attributes, problems = seen
            if attributes is None:
                return None
            d = start - at
            b.problems += [(message, s + d, e + d) for message, s, e in problems]
            return [shifted(a, d) for a in attributes]
        before = len(b.problems)
        found = self._build_attributes(b, text, start, end)
        if found is None:
            del b.problems[before:]  # the grammar reads them again, and finds them again
        self.seen_attributes[key] = (start, found, b.problems[before:])
        return found

    def _build_attributes(self, b: Any, text: str, start: int, end: int) -> list[t.Attribute] | None:
        punct, keywords = self.punct, self.keywords
        toks = [(m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup), m.end())  # type: ignore[arg-type]
                for m in _ATTR_TOKEN.finditer(text, start, end)]  # fmt: skip
        i = 0

        def take(kind: str) -> Token:
            nonlocal i
            _, value, s, e = toks[i]
            i += 1
            return make_token(kind if kind else punct[value], value, s, e)

        def signed(rule: Any) -> Any:
            if toks[i][1] == "-":
                return rule([take(""), take("NUMBER")])
            return rule([take("NUMBER")])

        def bracketed(item: Any, close: str) -> list[Any]:  # `[` or `{`, items, then `]` or `}`
            out: list[Any] = [take("")]
            if toks[i][1] == close:
                out.append(None)  # maybe_placeholders: an empty `[...]` holds a None
            while toks[i][1] != close:
                out.append(item())
                if toks[i][1] == ",":
                    out.append(take(""))
            out.append(take(""))
            return out

        children: list[Any] = [take("")]  # <
        while True:
            parts: list[Any] = [take("IDENT")]
            if toks[i][1] == ":":
                i += 1
                parts.append(take("IDENT"))
            i += 1  # =
            kind, value = toks[i][0], toks[i][1]
            if kind == "n" or value == "-":
                parts.append(signed(b.literal))
            elif kind == "s":
                parts.append(b.literal([take("STRING")]))
            elif value == "[":
                parts.append(b.value_list(bracketed(lambda: signed(b.literal), "]")))  # noqa: B023
            else:  # a tensor: element type, maybe dims, data
                prim = keywords.get(value)
                if prim is None or value in _TYPE_CTORS or prim == "FLOAT_WORD":
                    return None
                elem = b.prim_type([take(prim)])
                if toks[i][1] == "[":
                    ty = b.tensor_type([elem, b.shape(bracketed(lambda: b.dim([signed(b.signed_int)]), "]"))])
                else:
                    ty = b.tensor_type([elem])
                data = bracketed(lambda: signed(b.literal), "}")
                if sum(1 for x in data if type(x) is not Token) >= 16:  # the grammar's NUMBERS: one token
                    return None
                parts.append(b.tensor_value([ty, b.brace_data(data)]))
            children.append(b.attr(parts))
            if toks[i][1] == ">":
                break
            children.append(take(""))  # ,
        children.append(take(""))  # >
        attributes: list[t.Attribute] = b.attrs(children).items
        return attributes


_POSITIONS = frozenset(("start", "end", "elem_start"))  # the position fields of the attributes' tree classes
_SHARED = frozenset((str, int, float, bool, type(None), tuple))  # values a copy shares (they cannot change)
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def shifted(x: Any, d: int) -> Any:
    """A copy of a tree element (an attribute and what it holds) `d` characters further on; values that are not
    tree elements (names' text, numbers' values, None, tuples, Numbers) are shared."""
    cls = type(x)
    if cls is list:
        return [v if type(v) in _SHARED else shifted(v, d) for v in x]
    fields = _FIELDS.get(cls, ())
    if fields == ():
        fields = _FIELDS[cls] = cls.__slots__ if cls.__module__ == t.__name__ and cls is not t.Numbers else None
    if fields is None:
        return x
    new = object.__new__(cls)
    for name in fields:
        v = getattr(x, name)
        if name in _POSITIONS:
            v += d
        elif type(v) not in _SHARED:
            v = shifted(v, d)
        setattr(new, name, v)
    return new


def skip_space(text: str, pos: int, end: int) -> int:
    """The offset of the first character at or after pos that is not white space or inside a comment."""
    m = _SKIP.match(text, pos, end)
    return m.end() if m else pos
