"""Splits a file that does not parse into statements, so each can be parsed (and fail) on its own.

The file's statements are: the model header `<...>`, the graph signature up to its `{`, one node per statement,
the closing `}`, then per function its signature, nodes and `}`. This module finds their boundaries from
brackets alone, and notices the common ways a statement breaks (an unclosed bracket, a missing `(`) from what
follows it, so that the next statement still starts in the right place. Decisions about one statement look at
its own tokens and the first token after it, nothing further: an edit elsewhere cannot change them, which is
what lets `document.py` reparse an edited region on its own.
"""

from __future__ import annotations

import re

_SCAN = re.compile(
    r"""(?:[ \t\r\n\f\v]+|\#[^\r\n]*)*+(?:
      (?P<s>"(?:[^"\\]|\\[\s\S])*"?)
    | (?P<w>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<n>[0-9][0-9.]*+(?:[eE][+-]?[0-9]++)?)(?:[ \t]*+,[ \t]*+-?[0-9][0-9.]*+(?:[eE][+-]?[0-9]++)?)*+
    | (?P<a>=>)
    | (?P<p>[\s\S])
    )""",
    re.VERBOSE,
)

OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
# Characters no statement is cut at: half-typed tokens (`@@`, a stray `$`) inside a statement leave it whole, and its
# parse skips them (document.py), so that a keystroke's error stays in its statement and the statement's node stays.
STRAY = frozenset("@?!$%^&*;|~`\\+/'")
CLOSERS = {v: k for k, v in OPENERS.items()}
BRACKET_NAMES = {"(": "'('", "[": "'['", "{": "'{'", "<": "'<'"}


class Tok:
    __slots__ = ("kind", "text", "start", "end")

    kind: str  # s (string), w (word), n (number), a (arrow), p (punctuation)
    text: str  # a run of numbers: its first
    start: int
    end: int

    def __init__(self, kind: str, text: str, start: int, end: int) -> None:
        self.kind = kind
        self.text = text
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Tok(kind={self.kind!r}, text={self.text!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.kind, self.text, self.start, self.end)
        theirs = (other.kind, other.text, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class SegProblem:
    """A problem found while cutting. When `anchor` >= 0 the message reads `{message} opened at L:C{tail}`,
    with L:C the anchor's position in the current text (rendered late, so an edit above it cannot stale it)."""

    __slots__ = ("message", "start", "end", "related", "anchor", "tail")

    message: str
    start: int
    end: int
    related: list[tuple[str, int, int]]
    anchor: int
    tail: str

    def __init__(
        self,
        message: str,
        start: int,
        end: int,
        related: list[tuple[str, int, int]] | None = None,
        anchor: int = -1,
        tail: str = "",
    ) -> None:
        self.message = message
        self.start = start
        self.end = end
        self.related = [] if related is None else related
        self.anchor = anchor
        self.tail = tail

    def __repr__(self) -> str:
        return (
            f"SegProblem(message={self.message!r}, start={self.start!r}, end={self.end!r}, "
            f"related={self.related!r}, anchor={self.anchor!r}, tail={self.tail!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.message, self.start, self.end, self.related, self.anchor, self.tail)
        theirs = (other.message, other.start, other.end, other.related, other.anchor, other.tail)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class Segment:
    """A statement's extent. `symbol` is the grammar start symbol to parse it with (None: not parseable)."""

    __slots__ = ("kind", "start", "end", "symbol", "block", "problems", "repair")

    kind: str  # header, graph_sig, node, graph_end, function_sig, function_end, error
    start: int
    end: int
    symbol: str | None
    block: int  # 0: the main graph, i + 1: function i
    problems: list[SegProblem]
    repair: str  # closers to append so that a cut statement can still be parsed

    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        symbol: str | None,
        block: int,
        problems: list[SegProblem] | None = None,
        repair: str = "",
    ) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.symbol = symbol
        self.block = block
        self.problems = [] if problems is None else problems
        self.repair = repair

    def __repr__(self) -> str:
        return (
            f"Segment(kind={self.kind!r}, start={self.start!r}, end={self.end!r}, symbol={self.symbol!r}, "
            f"block={self.block!r}, problems={self.problems!r}, repair={self.repair!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.kind, self.start, self.end, self.symbol, self.block, self.problems, self.repair)
        theirs = (other.kind, other.start, other.end, other.symbol, other.block, other.problems, other.repair)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


def tokenize(text: str, start: int = 0, end: int | None = None) -> list[Tok]:
    """The tokens of text[start:end]. A run of numbers on one line (`0.92, -0.87, 1e-3`, the bulk of a converted
    model's text) is one token: no decision of the cutter looks inside a tensor's numbers, and a token each made
    recovering from one error in a 30 MB text cost 10 s and 1 GB (a clean parse: 0.7 s, 180 MB)."""
    end = len(text) if end is None else end
    toks = []
    pos = start
    match = _SCAN.match
    while True:
        m = match(text, pos, end)
        if m is None:
            break
        kind = m.lastgroup or "p"
        s = m.start(kind)
        pos = m.end()
        toks.append(Tok(kind, m.group(kind), s, pos))
    return toks


class Segmenter:
    def __init__(self, text: str, start: int = 0, end: int | None = None) -> None:
        """The statements of text[start:end] (a window: `run_nodes`) or of the whole text (`run`)."""
        self.text = text
        self.toks = tokenize(text, start, end)
        self.segments: list[Segment] = []
        # the index of the first segment whose cutting looked for a bracket's closer past the last token: in a window,
        # the segments from there on may be cut otherwise in the whole text (-1: none did)
        self.ran_out = -1

    # ---- helpers
    def _at_line_start(self, j: int) -> bool:
        if j == 0:
            return True
        gap = self.text[self.toks[j - 1].end : self.toks[j].start]
        return "\n" in gap or "\r" in gap

    def _line_first_token(self, j: int, floor: int) -> int:
        """The first token on token j's line, but not before token `floor`."""
        while j > floor and not self._at_line_start(j):
            j -= 1
        return j

    def _match(self, j: int) -> int:
        """Index of the bracket closing the one at j, or -1."""
        depth = 0
        for k in range(j, len(self.toks)):
            t = self.toks[k]
            if t.kind != "p":
                continue
            if t.text in OPENERS:
                depth += 1
            elif t.text in CLOSERS:
                depth -= 1
                if depth == 0:
                    return k
        if self.ran_out < 0:
            self.ran_out = len(self.segments)
        return -1

    def _looks_like_node(self, j: int) -> bool:
        """Does a node statement start at token j? `[label]? ids = Op(.Op)*(:ov)? (` or `<`, not a graph `=>`."""
        toks = self.toks
        n = len(toks)
        if j < n and toks[j].text == "[":
            k = j + 1
            while k < n and toks[k].text != "]" and k - j < 4:
                k += 1
            if k >= n or toks[k].text != "]":
                return self._out_of_tokens(k >= n, False)
            j = k + 1
        k = j
        while k < n and (toks[k].kind in "sw" or toks[k].text == ","):
            k += 1
        if k >= n or toks[k].text != "=":
            return self._out_of_tokens(k >= n, False)
        k += 1
        if k >= n or toks[k].kind != "w":
            return self._out_of_tokens(k >= n, False)
        k += 1
        while k + 1 < n and toks[k].text in (".", ":") and toks[k + 1].kind == "w":
            k += 2
        if k >= n or toks[k].text not in ("(", "<"):
            return self._out_of_tokens(k + 1 >= n, False)
        if toks[k].text == "(":
            close = self._match(k)
            if close >= 0 and close + 1 < n and toks[close + 1].kind == "a":
                return False  # `name = g (x) => ...`: a graph-valued attribute
            return self._out_of_tokens(close + 1 >= n, True)
        return True

    def _out_of_tokens(self, ran_out: bool, answer: bool) -> bool:
        """`answer`, noting when it was given for want of further tokens (see `ran_out`)."""
        if ran_out and self.ran_out < 0:
            self.ran_out = len(self.segments)
        return answer

    # ---- statements
    def _bracket_group(self, j: int) -> int:
        """Index after the group opened at j; if it never closes, after the last token."""
        close = self._match(j)
        return close + 1 if close >= 0 else len(self.toks)

    def _add(self, kind: str, i: int, j: int, symbol: str | None, block: int) -> Segment:
        toks = self.toks
        if j <= i:
            start = end = toks[i].start if i < len(toks) else len(self.text)
        else:
            start, end = toks[i].start, toks[j - 1].end
        seg = Segment(kind, start, end, symbol, block)
        self.segments.append(seg)
        return seg

    def _signature(self, i: int, kind: str, symbol: str, block: int) -> int:
        """A graph or function signature: up to and including the `{` at depth 0."""
        toks = self.toks
        depth = 0
        j = i
        while j < len(toks):
            t = toks[j]
            if t.kind == "p":
                if t.text == "{" and depth == 0:
                    self._add(kind, i, j + 1, symbol, block)
                    return j + 1
                if t.text in OPENERS:
                    depth += 1
                elif t.text in CLOSERS:
                    depth = max(0, depth - 1)
            j += 1
        seg = self._add(kind, i, j, None, block)
        what = "graph" if kind == "graph_sig" else "function"
        seg.problems.append(SegProblem(f"expected '{{' to start the {what}'s nodes", seg.end, seg.end))
        return j

    @staticmethod
    def _can_start_node(tok: Tok) -> bool:
        return tok.kind in "sw" or tok.text in ("[", ",", "=")

    def _stray(self, i: int, block: int) -> int:
        """Tokens that cannot start a statement: one error up to the next token that can (or a `}`)."""
        toks = self.toks
        j = i
        while j < len(toks) and not self._can_start_node(toks[j]) and toks[j].text != "}":
            j += 1
        seg = self._add("error", i, j, None, block)
        first = toks[i]
        if first.kind == "p" and first.text not in "(){}[]<>=,:.@?-":
            message = f"unexpected character {first.text!r}"
        else:
            message = f"unexpected {first.text[:20]!r}: expected a node such as `y = Relu (x)` or '}}'"
        seg.problems.append(SegProblem(message, first.start, first.end))
        return j

    def _node(self, i: int, block: int) -> int:
        """One node statement starting at token i; returns the index after it."""
        toks = self.toks
        n = len(toks)
        if not self._can_start_node(toks[i]):
            return self._stray(i, block)
        stack: list[int] = []  # token indices of open brackets
        seen_eq = False
        op_name = ""
        inputs_open = -1
        trailing = -1  # the `<` of attributes after the inputs
        j = i
        problem: SegProblem | None = None
        end = -1
        while j < n:
            t = toks[j]
            x = t.text if t.kind == "p" else ""
            if not stack:
                if x == "}":
                    if j == i:
                        break
                    problem = self._missing_inputs(op_name, toks[j - 1].end)
                    end = j
                    break
                if x == "=":
                    if seen_eq:  # a second `=` at depth 0: a new statement has begun on this line
                        end = self._line_first_token(j, i + 1)
                        problem = self._missing_inputs(op_name, toks[end - 1].end)
                        break
                    seen_eq = True
                elif seen_eq and not op_name and t.kind == "w":
                    op_name = t.text
                elif x in OPENERS:
                    if x == "(" and seen_eq:
                        inputs_open = j
                    elif x in "(<" and not seen_eq and j > i and toks[j - 1].kind == "w":
                        # `y Relu (x)`: the op and its inputs, but no `=` before them
                        inputs_open = j if x == "(" else -1
                        op_name = toks[j - 1].text
                        seen_eq = True
                        problem = SegProblem("expected '=' between the outputs and the op", toks[j - 1].start,
                                             toks[j - 1].start)  # fmt: skip
                    elif x == "[" and seen_eq:
                        end = j
                        problem = self._missing_inputs(op_name, toks[j - 1].end)
                        break
                    stack.append(j)
                elif x in CLOSERS:
                    end = j + 1
                    problem = SegProblem(f"unexpected '{x}' with nothing open", t.start, t.end)
                    break
            else:
                top = toks[stack[-1]].text
                if x in OPENERS:
                    stack.append(j)
                elif x in CLOSERS:
                    if CLOSERS[x] == top:
                        opened = stack.pop()
                        if not stack and opened == inputs_open:
                            if (j + 1 < n or self._out_of_tokens(True, False)) and toks[j + 1].text == "<":
                                trailing = j + 1
                                stack.append(trailing)
                                j += 2
                                continue
                            end = j + 1
                            break
                        if not stack and opened == trailing:
                            end = j + 1
                            break
                    else:
                        end = j
                        problem = self._unclosed(stack, inputs_open, op_name, j, end)
                        break
                elif stack == [inputs_open] and not (t.kind in "sw" or x == "," or x in STRAY):
                    end = j
                    if x == "=":
                        end = max(self._line_first_token(j, inputs_open + 1), inputs_open + 1)
                    problem = self._unclosed(stack, inputs_open, op_name, j, end)
                    break
                elif top != "{" and self._at_line_start(j) and self._looks_like_node(j):
                    end = j
                    problem = self._unclosed(stack, inputs_open, op_name, j, end)
                    break
            j += 1
        if end < 0:
            end = j
            self._out_of_tokens(True, False)
            if stack:
                problem = self._unclosed(stack, inputs_open, op_name, None, end)
            elif j >= n and j > i and problem is None:
                problem = self._missing_inputs(op_name, len(self.text))
        seg = self._add("node", i, end, "node_seq", block)
        if problem is not None:
            seg.problems.append(problem)
            # Close what is open so the statement can still be parsed and reach the graph.
            seg.repair = "".join(OPENERS[toks[k].text] for k in reversed(stack)) if stack else ""
        return max(end, i + 1)

    def _missing_inputs(self, op: str, at: int) -> SegProblem:
        what = f" of {op}" if op else ""
        return SegProblem(f"expected '(' and the inputs{what}", at, at)

    def _unclosed(self, stack: list[int], inputs_open: int, op: str, found_at: int | None, cut: int) -> SegProblem:
        found = self.toks[found_at] if found_at is not None else None
        opener = self.toks[stack[-1]]
        closer = OPENERS[opener.text]
        if stack[-1] == inputs_open:
            what = f"the inputs of {op}" if op else "the inputs"
        elif opener.text == "<":
            what = f"the attributes of {op}" if op else "the attributes"
        elif opener.text == "[":
            what = "the list"
        elif opener.text == "{":
            what = "the block"
        else:
            what = "the group"
        message = f"expected '{closer}' to close {what}"
        if found is not None:
            shown = found.text if len(found.text) <= 20 else found.text[:17] + "..."
            tail = f", found '{shown}'"
            at_start, at_end = found.start, found.end
        else:
            tail = " before the end of the file"
            at_start = at_end = len(self.text)
        if found_at is not None and cut > 0:
            # Point just after the statement's last token, where the closer belongs.
            at_start = at_end = self.toks[cut - 1].end
        return SegProblem(message, at_start, at_end, [("opened here", opener.start, opener.end)], opener.start, tail)

    def _header(self, i: int) -> int:
        """The model header `<...>`; if its `>` is missing, it ends where the graph's signature begins."""
        toks = self.toks
        depth = 0
        for k in range(i + 1, len(toks)):
            t = toks[k]
            if t.text == ">" and t.kind == "p" and depth == 0:
                self._add("header", i, k + 1, "header", 0)
                return k + 1
            if t.text == "[" and t.kind == "p":
                depth += 1
            elif t.text == "]" and t.kind == "p":
                depth = max(0, depth - 1)
            elif t.kind == "a" or (t.kind == "p" and t.text in "({"):
                cut = self._line_first_token(k, i + 1)
                if cut == i + 1:  # header and graph on one line: the graph starts at its name
                    cut = k - 1 if toks[k - 1].kind in "sw" else k
                seg = self._add("header", i, cut, None, 0)
                what = "the opset list" if depth else "the model header"
                closer = "]" if depth else ">"
                seg.problems.append(SegProblem(f"expected '{closer}' to close {what}", toks[cut - 1].end,
                                               toks[cut - 1].end, [("opened here", toks[i].start, toks[i].end)],
                                               toks[i].start if not depth else -1))  # fmt: skip
                return cut
        seg = self._add("header", i, len(toks), None, 0)
        seg.problems.append(SegProblem("expected '>' to close the model header", len(self.text), len(self.text)))
        return len(toks)

    def _block(self, j: int, block: int, end_kind: str) -> int:
        """Nodes up to the closing `}` of a graph or function body."""
        toks = self.toks
        while j < len(toks):
            if toks[j].text == "}" and toks[j].kind == "p":
                self._add(end_kind, j, j + 1, None, block)
                return j + 1
            j = self._node(j, block)
        last = self.segments[-1] if self.segments else None
        seg = self._add(end_kind, j, j, None, block)
        if not (last and any(p.start == len(self.text) for p in last.problems)):  # not twice at the end of file
            seg.problems.append(SegProblem("expected '}' to close the node list", len(self.text), len(self.text)))
        return j

    def run_nodes(self, block: int, end_kind: str) -> int:
        """The node statements of a window inside a block's body, and its closing `}` if the window reaches it (as
        `_block` cuts them); the index of the first token not cut (after the `}`)."""
        toks = self.toks
        j = 0
        while j < len(toks):
            if toks[j].text == "}" and toks[j].kind == "p":
                self._add(end_kind, j, j + 1, None, block)
                return j + 1
            j = self._node(j, block)
        return j

    def run(self) -> list[Segment]:
        toks = self.toks
        j = 0
        if toks and toks[0].text == "<":
            j = self._header(0)
        if j < len(toks):
            j = self._signature(j, "graph_sig", "graph_sig", 0)
            j = self._block(j, 0, "graph_end")
        block = 0
        while j < len(toks):
            block += 1
            j = self._signature(j, "function_sig", "function_sig", block)
            j = self._block(j, block, "function_end")
        return self.segments
