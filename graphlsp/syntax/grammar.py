"""Loads `grammar/onnxtxt.lark` and builds the LALR parser once per process.

The lexer is ours (`lexer.py`): a single compiled regex that retypes words to the grammar's keyword terminals
(`float`, `seq`, `inf`, ...) only where the parse table accepts them, which is what lark's contextual lexer does,
at a fraction of the cost. Everything else (the rules, the terminals' names, the parse table, the shaping of
each rule's children for the tree builder) comes from lark and the grammar file.

The LALR loop that runs lark's table is ours as well (`Parser._drive`): the same steps as lark's
`ParserState.feed_token`, over a copy of the table whose reductions are plain tuples, which takes a fifth off
the parse of a large file. It only accepts or rejects: on a syntax error, lark's own loop parses the text again
and raises its exception (the token, the expected terminals, the interactive parser), so diagnostics are lark's.

A text that parses never imports lark (a tenth of a second of a start-up, its import and its cached analysis):
the table, the terminals' words and each rule's shaping of its children (lark's child filters, `?rule`'s single
child, placeholders for `[...]`) are kept as plain data (`Table`) in the user's cache directory, keyed by a hash of
the grammar text and of lark's installed build, and made once from lark's analysis (itself cached by lark). lark is
imported when a text does not parse (`Parser.lark`), to describe the error.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from functools import cache
from typing import Any

from graphlsp.files import cache_dir, digest, keep, read_kept, read_regular_text
from graphlsp.syntax.lexer import WindowLexer, terminal_words
from graphlsp.syntax.tokens import BadCharacter, Token

START_SYMBOLS = ["model", "node_seq", "header", "graph_sig", "function_sig"]
TABLE_FORMAT = 1  # bump when the kept table's layout changes


def grammar_path() -> str:
    """The grammar file: shipped inside the package (wheel), or at the repository root (source checkout). A string
    (no pathlib: it imports urllib, 3 ms of a start-up)."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    for candidate in (os.path.join(package, "grammar", "onnxtxt.lark"),
                      os.path.join(os.path.dirname(package), "grammar", "onnxtxt.lark")):  # fmt: skip
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError("grammar/onnxtxt.lark not found next to the graphlsp package")


def cache_file() -> str | bool:
    """Where lark keeps its analysis of the grammar (False: nowhere, if there is no user cache directory)."""
    folder = cache_dir()
    if folder is None:
        return False
    return os.path.join(folder, f"onnxtxt-grammar-py{sys.version_info[0]}{sys.version_info[1]}.lark-cache")


def table_file(grammar: str) -> str | None:
    """Where the plain table of this grammar text is kept (None: nowhere, if there is no user cache directory, or
    lark is not installed). The name holds a hash of the grammar and of lark's installed build (its package file's
    path, size and time, found without importing it), so another grammar or another lark makes it again."""
    from importlib.util import find_spec

    folder = cache_dir()
    spec = find_spec("lark")
    if folder is None or spec is None or spec.origin is None:
        return None
    try:
        st = os.stat(spec.origin)
    except OSError:
        return None
    key = digest(f"{TABLE_FORMAT}\0{spec.origin}\0{st.st_size}\0{st.st_mtime_ns}\0{grammar}".encode()).hexdigest()
    return os.path.join(folder, f"onnxtxt-table-py{sys.version_info[0]}{sys.version_info[1]}-{key[:24]}.marshal")


# An action of `Parser.actions`: the state to shift (or go) to, or a reduction (children, rule name, callback).
Action = int | tuple[int, str, Any]
_REJECTED = object()
_END = Token("$END", "")


class _Position:
    """The part of lark's ParserState that the lexer reads: the current state (see WindowLexer.lex)."""

    __slots__ = ("stack",)

    def __init__(self, stack: list[int]) -> None:
        self.stack = stack

    @property
    def position(self) -> int:
        return self.stack[-1]


class _Tree:
    """What a rule without a callback of the builder makes (lark's inlined `_rule`s and the helpers of `x*`): its
    children, which the parent's child filter spreads out (lark makes a Tree there)."""

    __slots__ = ("data", "children")

    def __init__(self, data: str, children: list[Any]) -> None:
        self.data = data
        self.children = children


# Table: the plain data kept in the cache. "actions": state -> terminal or rule name -> the state to shift or go to
# (>= 0), or ~rule (< 0) to reduce by rules[rule]; "rules": (children, rule name, callback name, expand1 (`?rule`:
# a single child stands for the rule), filter); a filter is None, ("p", [(child, spread, Nones before)], Nones
# after) (lark's ChildFilterLALR) or ("n", [(child, spread)]) (ChildFilterLALR_NoPlaceholders).
Table = dict[str, Any]


def build_table(lk: Any) -> Table:
    """The plain table of a lark LALR parser built with a transformer (`make_lark`)."""
    from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild
    from lark.parsers.lalr_analysis import Shift

    rules: list[tuple[int, str, str, bool, Any]] = []
    index: dict[Any, int] = {}
    for rule, chain in lk._parse_tree_builder.rule_builders:
        expand1 = False
        filt: Any = None
        for w in chain:
            if w is ExpandSingleChild:
                expand1 = True
            elif getattr(w, "func", None) is ChildFilterLALR:
                to_include, append_none = w.args
                filt = ("p", [tuple(x) for x in to_include], append_none)
            elif getattr(w, "func", None) is ChildFilterLALR_NoPlaceholders:
                filt = ("n", [tuple(x) for x in w.args[0]])
            else:  # a wrapper this table cannot write down (positions, ambiguity): lark's options changed
                raise ValueError(f"rule {rule}: unknown wrapper {w!r}")
        name = rule.alias or rule.options.template_source or rule.origin.name
        index[rule] = len(rules)
        rules.append((len(rule.expansion), str(rule.origin.name), str(name), expand1, filt))
    lalr = lk.parser.parser.parser
    table = lalr.parse_table
    actions = {
        state: {str(term): arg if action is Shift else ~index[arg] for term, (action, arg) in acts.items()}
        for state, acts in table.states.items()
    }
    keywords, punct = terminal_words(lk.terminals)
    return {"format": TABLE_FORMAT, "actions": actions, "rules": rules, "start_states": dict(table.start_states),
            "end_states": dict(table.end_states), "keywords": keywords, "punct": punct}  # fmt: skip


def make_lark(grammar: str, builder: Any) -> Any:
    """lark's LALR parser of the grammar over our lexer (its analysis cached by lark), with `builder`'s callbacks."""
    import lark

    from graphlsp.syntax.lark_lexer import LarkLexer

    lk = lark.Lark(grammar, parser="lalr", lexer=LarkLexer, start=START_SYMBOLS, maybe_placeholders=True,
                   transformer=builder, cache=cache_file())  # fmt: skip
    keywords, punct = terminal_words(lk.terminals)
    lk.parser.lexer.bind(keywords, punct, lk.parser.parser.parser.parse_table.states)
    lk.parser.lexer.builder = builder
    return lk


def _callback(name: str, expand1: bool, filt: Any, builder: Any) -> Any:
    """A rule's callback as lark composes it (parse_tree_builder.ParseTreeBuilder): the builder's method of the
    rule's name (else a _Tree), behind `?rule`'s single-child expansion, behind the child filter."""
    f = getattr(builder, name, None)
    if f is None:

        def f(children: list[Any], name: str = name) -> _Tree:
            return _Tree(name, children)

    if expand1:
        inner = f

        def f(children: list[Any]) -> Any:
            return children[0] if len(children) == 1 else inner(children)

    if filt is None:
        return f
    node_builder = f
    if filt[0] == "n":
        to_include = filt[1]

        def no_placeholders(children: list[Any]) -> Any:
            filtered: list[Any] = []
            for i, to_expand in to_include:
                if to_expand:
                    if filtered:
                        filtered += children[i].children
                    else:  # lark's optimisation for left recursion: the child's list is taken over
                        filtered = children[i].children
                else:
                    filtered.append(children[i])
            return node_builder(filtered)

        return no_placeholders
    _, with_nones, append_none = filt

    def placeholders(children: list[Any]) -> Any:
        filtered: list[Any] = []
        for i, to_expand, add_none in with_nones:
            if add_none:
                filtered += [None] * add_none
            if to_expand:
                if filtered:
                    filtered += children[i].children
                else:
                    filtered = children[i].children
            else:
                filtered.append(children[i])
        if append_none:
            filtered += [None] * append_none
        return node_builder(filtered)

    return placeholders


def _load_table(grammar: str, builder: Any) -> tuple[Table, Any]:
    """The kept table of the grammar, made (and kept) from lark's analysis when there is none; and the lark parser
    when it had to be made for that (None otherwise)."""
    path = table_file(grammar)
    table = read_kept(path) if path is not None else None
    if table is not None and table.get("format") == TABLE_FORMAT:
        return table, None
    lk = make_lark(grammar, builder)
    table = build_table(lk)
    if path is not None:
        keep(path, table)
    return table, lk


def _actions(table: Table, builder: Any) -> dict[int, dict[str, Action]]:
    """The table's actions with each reduction resolved to (children, rule name, callback)."""
    rules = [(size, origin, _callback(name, expand1, filt, builder))
             for size, origin, name, expand1, filt in table["rules"]]  # fmt: skip
    actions = {state: {term: arg if arg >= 0 else rules[~arg] for term, arg in acts.items()}
               for state, acts in table["actions"].items()}  # fmt: skip
    for key in ("keywords", "punct", "start_states", "end_states"):
        if not isinstance(table[key], dict):
            raise TypeError(key)
    return actions


class Parser:
    """An LALR parser over our lexer, with the tree builder applied inline (no intermediate tree)."""

    def __init__(self) -> None:
        from graphlsp.syntax.build import TreeBuilder

        self.builder = TreeBuilder()
        self.grammar = read_regular_text(grammar_path())
        table, self._lark = _load_table(self.grammar, self.builder)
        try:
            self.actions = _actions(table, self.builder)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):  # a kept table damaged: made again
            self._lark = make_lark(self.grammar, self.builder)
            table = build_table(self._lark)
            self.actions = _actions(table, self.builder)
        self.lexer = WindowLexer()
        self.lexer.bind(table["keywords"], table["punct"], self.actions)  # the actions are keyed by terminal
        self.lexer.builder = self.builder
        self.start_states: dict[str, int] = table["start_states"]
        self.end_states: dict[str, int] = table["end_states"]
        self.lock = threading.Lock()

    @property
    def lark(self) -> Any:
        """lark's own parser of the grammar, made when first asked for (to describe a syntax error)."""
        if self._lark is None:
            self._lark = make_lark(self.grammar, self.builder)
        return self._lark

    def parse(self, text: str, start: int, end: int, symbol: str, memo: dict[Any, Any] | None = None) -> Any:
        """Parse text[start:end] as `symbol`; positions in the result are offsets into `text`.

        Raises lark's UnexpectedInput on a syntax error; the builder's semantic problems are left in
        `self.builder.problems` (cleared at the start of each call). `memo`: one dict for the parses of one text
        (see TreeBuilder.numbers_checked).
        """
        with self.lock:
            self.builder.numbers_checked = memo
            try:
                result = self._drive(text, start, end, symbol)
                if result is _REJECTED:
                    # lark's loop stops at the same token, and its exception says what was expected there
                    self.builder.problems = []
                    lk = self.lark
                    lk.parser.lexer.window = (text, start, end)
                    return lk.parse(text, start=symbol)
                return result
            finally:
                self.builder.numbers_checked = None

    def try_parse(self, text: str, start: int, end: int, symbol: str, memo: dict[Any, Any] | None = None) -> Any:
        """`parse`, but None on a syntax error, which is then not described (for callers that do not report it)."""
        with self.lock:
            self.builder.numbers_checked = memo
            try:
                result = self._drive(text, start, end, symbol)
            finally:
                self.builder.numbers_checked = None
            return None if result is _REJECTED else result

    def _drive(self, text: str, start: int, end: int, symbol: str) -> Any:
        """The steps of lark's ParserState.feed_token over `self.actions`; _REJECTED where lark raises an error."""
        self.builder.problems = []
        self.lexer.window = (text, start, end)
        actions = self.actions
        end_state = self.end_states[symbol]
        state_stack = [self.start_states[symbol]]
        value_stack: list[Any] = []
        try:
            for tok in itertools.chain(self.lexer.lex(None, _Position(state_stack)), [_END]):
                kind = tok.type
                while True:
                    action = actions[state_stack[-1]].get(kind)
                    if action is None:
                        return _REJECTED
                    if isinstance(action, int):  # shift (the builder has no callbacks for tokens)
                        state_stack.append(action)
                        value_stack.append(tok)
                        break
                    size, name, callback = action
                    if size:
                        children = value_stack[-size:]
                        del state_stack[-size:]
                        del value_stack[-size:]
                    else:
                        children = []
                    value_stack.append(callback(children))
                    state_stack.append(actions[state_stack[-1]][name])  # type: ignore[arg-type]  # a goto
                    if state_stack[-1] == end_state and kind == "$END":
                        return value_stack[-1]
        except BadCharacter:
            pass
        return _REJECTED


@cache
def get_parser() -> Parser:
    return Parser()
