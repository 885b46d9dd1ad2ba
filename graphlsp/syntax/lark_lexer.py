"""The lexer for lark's own LALR loop (grammar.make_lark), which runs only to describe a syntax error: our lexer,
with a character no token starts with raised as lark's UnexpectedCharacters. Imported only when lark is (a module
of its own: lark keeps the lexer class in its cache by name)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer

from graphlsp.syntax.lexer import WindowLexer
from graphlsp.syntax.tokens import BadCharacter


class LarkLexer(WindowLexer, Lexer):
    def lex(self, lexer_state: Any, parser_state: Any) -> Iterator[Any]:  # our Tokens, which lark reads as its own
        try:
            yield from WindowLexer.lex(self, lexer_state, parser_state)
        except BadCharacter as e:
            raise UnexpectedCharacters(e.text, e.pos, 0, 0, allowed=e.allowed) from None
