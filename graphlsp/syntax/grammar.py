"""Loads `grammar/onnxtxt.lark` and builds the LALR parser once per process.

The lexer is ours (`lexer.py`): a single compiled regex that retypes words to the grammar's keyword terminals
(`float`, `seq`, `inf`, ...) only where the parse table accepts them, which is what lark's contextual lexer does,
at a fraction of the cost. Everything else (the rules, the terminals' names, the parse table) comes from the
grammar file.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path
from typing import Any

import lark

START_SYMBOLS = ["model", "node_seq", "header", "graph_sig", "function_sig"]


def grammar_path() -> Path:
    """The grammar file: shipped inside the package (wheel), or at the repository root (source checkout)."""
    here = Path(__file__).resolve()
    for candidate in (here.parent.parent / "grammar" / "onnxtxt.lark", here.parents[2] / "grammar" / "onnxtxt.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("grammar/onnxtxt.lark not found next to the graphlsp package")


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
        )
        self.lexer: Any = self.lark.parser.lexer
        parse_table = self.lark.parser.parser.parser.parse_table
        self.lexer.bind(self.lark.terminals, parse_table)
        self.lock = threading.Lock()

    def parse(self, text: str, start: int, end: int, symbol: str) -> Any:
        """Parse text[start:end] as `symbol`; positions in the result are offsets into `text`.

        Raises lark's UnexpectedInput on a syntax error; the builder's semantic problems are left in
        `self.builder.problems` (cleared at the start of each call).
        """
        with self.lock:
            self.builder.problems = []
            self.lexer.window = (text, start, end)
            return self.lark.parse(text, start=symbol)


@cache
def get_parser() -> Parser:
    return Parser()
