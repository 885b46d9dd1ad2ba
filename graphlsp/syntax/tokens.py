"""The parser's tokens, and the error of a character no token starts with (no lark import: see lexer.py)."""

from __future__ import annotations

from typing import Any

_str_new = str.__new__


class Token(str):
    """A token: its text (the str), its terminal's name (`type`), its text again (`value`, a plain str: cheaper to
    read than the str subclass) and its offsets in the text. Lines and columns are not kept (None), as in lark's
    Token made by `make_token`."""

    __slots__ = ("type", "start_pos", "value", "line", "column", "end_line", "end_column", "end_pos")

    type: str
    start_pos: int | None
    value: str
    line: int | None
    column: int | None
    end_line: int | None
    end_column: int | None
    end_pos: int | None

    def __new__(cls, kind: str, value: str, start: int | None = None, end: int | None = None) -> Token:
        tok = _str_new(cls, value)
        tok.type = kind
        tok.value = value
        tok.start_pos = start
        tok.end_pos = end
        tok.line = tok.column = tok.end_line = tok.end_column = None
        return tok

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.type, self.value, self.start_pos, self.end_pos)


class BadCharacter(Exception):  # noqa: N818  # lark's name for it is UnexpectedCharacters
    """A character no token starts with, at `pos` of `text`; `allowed`: the terminals the parser could take there."""

    def __init__(self, text: str, pos: int, allowed: set[str]) -> None:
        super().__init__(f"unexpected character at {pos}")
        self.text = text
        self.pos = pos
        self.allowed = allowed
