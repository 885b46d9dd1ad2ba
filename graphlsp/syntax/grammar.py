"""Loads `grammar/onnxtxt.lark` and builds the LALR parser once per process.

The lexer is ours (`lexer.py`): a single compiled regex that retypes words to the grammar's keyword terminals
(`float`, `seq`, `inf`, ...) only where the parse table accepts them, which is what lark's contextual lexer does,
at a fraction of the cost. Everything else (the rules, the terminals' names, the parse table, the shaping of
each rule's children for the tree builder) comes from lark and the grammar file.

lark's analysis of the grammar (a tenth of a second) is cached between processes in the user's cache directory;
the cache is keyed by a hash of the grammar text and the options, so an edited grammar is analysed again.

The LALR loop that runs lark's table is ours as well (`Parser._drive`): the same steps as lark's
`ParserState.feed_token`, over a copy of the table whose reductions are plain tuples, which takes a fifth off
the parse of a large file. It only accepts or rejects: on a syntax error, lark's own loop parses the text again
and raises its exception (the token, the expected terminals, the interactive parser), so diagnostics are lark's.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from functools import cache
from pathlib import Path
from typing import Any

import lark
from lark.exceptions import UnexpectedCharacters
from lark.parsers.lalr_analysis import Shift

from graphlsp.files import cache_dir

START_SYMBOLS = ["model", "node_seq", "header", "graph_sig", "function_sig"]


def grammar_path() -> Path:
    """The grammar file: shipped inside the package (wheel), or at the repository root (source checkout)."""
    here = Path(__file__).resolve()
    for candidate in (here.parent.parent / "grammar" / "onnxtxt.lark", here.parents[2] / "grammar" / "onnxtxt.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("grammar/onnxtxt.lark not found next to the graphlsp package")


def cache_file() -> str | bool:
    """Where lark keeps its analysis of the grammar (False: nowhere, if there is no user cache directory)."""
    folder = cache_dir()
    if folder is None:
        return False
    return os.path.join(folder, f"onnxtxt-grammar-py{sys.version_info[0]}{sys.version_info[1]}.lark-cache")


# An action of `Parser.actions`: the state to shift (or go) to, or a reduction (children, rule name, callback).
Action = int | tuple[int, str, Any]
_REJECTED = object()
_END = lark.Token("$END", "")


class _Position:
    """The part of lark's ParserState that the lexer reads: the current state (see WindowLexer.lex)."""

    __slots__ = ("stack",)

    def __init__(self, stack: list[int]) -> None:
        self.stack = stack

    @property
    def position(self) -> int:
        return self.stack[-1]


def action_table(parse_table: Any, callbacks: dict[Any, Any]) -> dict[int, dict[str, Action]]:
    """lark's parse table with each reduction's rule resolved to (number of children, rule name, callback).

    lark's loop hashes and compares its Rule objects (Python methods) on every reduction; plain tuples do not.
    """
    table: dict[int, dict[str, Action]] = {}
    for state, actions in parse_table.states.items():
        table[state] = {
            name: arg if action is Shift else (len(arg.expansion), str(arg.origin.name), callbacks[arg])
            for name, (action, arg) in actions.items()
        }
    return table


class Parser:
    """A lark LALR parser over our lexer, with the tree builder applied inline (no intermediate lark Tree)."""

    def __init__(self) -> None:
        from graphlsp.syntax.build import TreeBuilder
        from graphlsp.syntax.lexer import WindowLexer

        self.builder = TreeBuilder()
        self.lark = lark.Lark(
            grammar_path().read_text(encoding="utf-8"),
            parser="lalr",
            lexer=WindowLexer,
            start=START_SYMBOLS,
            maybe_placeholders=True,
            transformer=self.builder,
            cache=cache_file(),
        )
        self.lexer: Any = self.lark.parser.lexer
        lalr = self.lark.parser.parser.parser
        self.lexer.bind(self.lark.terminals, lalr.parse_table)
        self.actions = action_table(lalr.parse_table, lalr.callbacks)
        self.start_states: dict[str, int] = lalr.parse_table.start_states
        self.end_states: dict[str, int] = lalr.parse_table.end_states
        self.lock = threading.Lock()

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
                    return self.lark.parse(text, start=symbol)
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
        except UnexpectedCharacters:
            pass
        return _REJECTED


@cache
def get_parser() -> Parser:
    return Parser()
