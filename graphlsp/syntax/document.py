"""A parsed ONNX text file: its statements ("pieces"), their problems, and incremental reparse after edits.

A file parses in one go when it is well-formed. When it is not, `recovery.py` cuts it into statements and each
is parsed on its own, so one error costs one statement. Every statement is a `Piece`; the positions inside it are
local, and `piece.origin + local` is the offset in the current text. After an edit, the statements around it
are parsed again and the pieces after it only move their origin (`apply_edit`).
"""

from __future__ import annotations

import gc
import re
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

from graphlsp.syntax import tree as t
from graphlsp.syntax.grammar import get_parser
from graphlsp.syntax.positions import LineIndex, line_end_at, split_lines
from graphlsp.syntax.recovery import STRAY, Segment, Segmenter

if TYPE_CHECKING:
    from lark.exceptions import UnexpectedInput  # lark is imported only when a text does not parse (grammar.py)

SYNTAX_ERROR = "GL101"
PROTOBUF_TEXT = "GL102"
INVALID_VALUE = "GL103"
PRINTER_ELLIPSIS = "GL104"

_TERMINAL_TEXT = {
    "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'",
    "LESSTHAN": "'<'", "MORETHAN": "'>'", "EQUAL": "'='", "COMMA": "','", "COLON": "':'", "DOT": "'.'",
    "AT": "'@'", "QMARK": "'?'", "MINUS": "'-'", "ARROW": "'=>'", "IDENT": "a name", "STRING": "a quoted string",
    "NUMBER": "a number", "FLOAT_WORD": "inf or nan", "$END": "the end of the file",
}  # fmt: skip
# possessive: `# # # ...` (a comment holds `#`) must not be cut into comments in every possible way (exponential)
_PROTOBUF_TEXT = re.compile(
    r"\A(?:\s++|#[^\r\n]*+)*+(?:ir_version|producer_name|producer_version|opset_import|graph|model_version|"
    r"doc_string|domain|metadata_props|functions)\s*[:{]"
)


class Problem:
    """A syntax diagnostic. Offsets are local to the piece that holds it (absolute once `shifted`)."""

    __slots__ = ("code", "message", "start", "end", "related", "anchor", "tail")

    code: str
    message: str
    start: int
    end: int
    related: list[tuple[str, int, int]]
    anchor: int  # when >= 0, the message is rendered as `{message} opened at L:C{tail}`
    tail: str

    def __init__(
        self,
        code: str,
        message: str,
        start: int,
        end: int,
        related: list[tuple[str, int, int]] | None = None,
        anchor: int = -1,
        tail: str = "",
    ) -> None:
        self.code = code
        self.message = message
        self.start = start
        self.end = end
        self.related = [] if related is None else related
        self.anchor = anchor
        self.tail = tail

    def __repr__(self) -> str:
        return (
            f"Problem(code={self.code!r}, message={self.message!r}, start={self.start!r}, end={self.end!r}, "
            f"related={self.related!r}, anchor={self.anchor!r}, tail={self.tail!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.code, self.message, self.start, self.end, self.related, self.anchor, self.tail)
        theirs = (other.code, other.message, other.start, other.end, other.related, other.anchor, other.tail)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class Piece:
    """One top-level statement: header, graph_sig, node, graph_end, function_sig, function_end or error."""

    __slots__ = ("kind", "start", "end", "block", "value", "problems", "failed", "origin")

    kind: str
    start: int
    end: int
    block: int
    value: Any
    problems: list[Problem]
    failed: bool  # the statement did not parse (value is None or a repaired parse)
    origin: int

    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        block: int,
        value: Any = None,
        problems: list[Problem] | None = None,
        failed: bool = False,
        origin: int = 0,
    ) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.block = block
        self.value = value
        self.problems = [] if problems is None else problems
        self.failed = failed
        self.origin = origin

    def __repr__(self) -> str:
        return (
            f"Piece(kind={self.kind!r}, start={self.start!r}, end={self.end!r}, block={self.block!r}, "
            f"value={self.value!r}, problems={self.problems!r}, failed={self.failed!r}, origin={self.origin!r})"
        )

    @property
    def abs_start(self) -> int:
        return self.origin + self.start

    @property
    def abs_end(self) -> int:
        return self.origin + self.end


class Block:
    """The statements of the main graph (is_graph) or of one function."""

    __slots__ = ("index", "is_graph", "sig", "nodes", "end")

    index: int
    is_graph: bool
    sig: Piece | None
    nodes: list[Piece]
    end: Piece | None

    def __init__(self, index: int, is_graph: bool, sig: Piece | None, nodes: list[Piece], end: Piece | None) -> None:
        self.index = index
        self.is_graph = is_graph
        self.sig = sig
        self.nodes = nodes
        self.end = end

    def __repr__(self) -> str:
        return (
            f"Block(index={self.index!r}, is_graph={self.is_graph!r}, sig={self.sig!r}, nodes={self.nodes!r}, "
            f"end={self.end!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.index, self.is_graph, self.sig, self.nodes, self.end)
        theirs = (other.index, other.is_graph, other.sig, other.nodes, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class ReparseReport:
    """What an edit cost: "incremental" (only `pieces` statements, in [start, end) of the new text) or "full"."""

    __slots__ = ("mode", "start", "end", "pieces", "reason", "old_pieces", "new_pieces")

    mode: str
    start: int
    end: int
    pieces: int
    reason: str
    old_pieces: list[Piece]  # incremental: the statements replaced...
    new_pieces: list[Piece]  # ...and what replaced them

    def __init__(
        self,
        mode: str,
        start: int,
        end: int,
        pieces: int,
        reason: str = "",
        old_pieces: list[Piece] | None = None,
        new_pieces: list[Piece] | None = None,
    ) -> None:
        self.mode = mode
        self.start = start
        self.end = end
        self.pieces = pieces
        self.reason = reason
        self.old_pieces = [] if old_pieces is None else old_pieces
        self.new_pieces = [] if new_pieces is None else new_pieces

    def __repr__(self) -> str:
        return (
            f"ReparseReport(mode={self.mode!r}, start={self.start!r}, end={self.end!r}, pieces={self.pieces!r}, "
            f"reason={self.reason!r}, old_pieces={self.old_pieces!r}, new_pieces={self.new_pieces!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.mode, self.start, self.end, self.pieces, self.reason, self.old_pieces, self.new_pieces)
        theirs = (other.mode, other.start, other.end, other.pieces, other.reason, other.old_pieces, other.new_pieces)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


def _describe(token: Any) -> str:
    if token.type == "$END":
        return "the end of the file"
    text = str(token)
    if len(text) > 24:
        text = text[:21] + "..."
    return f"'{text}'"


def _expected(names: set[str]) -> str:
    names = {n for n in names if not n.startswith("__") and n not in ("SIMPLE_NODE", "NUMBERS")}  # (one-token forms)
    if {"NUMBER", "STRING", "IDENT"} <= names:
        # A value position: say so rather than list every literal and type keyword.
        return "a value (a number, a quoted string, a type, a graph or @reference)"
    words = sorted({_TERMINAL_TEXT.get(n, n.lower()) for n in names})
    if "a name" in words and len(words) > 6:
        words = [w for w in words if not (w.isalpha() and w.islower())]
    if len(words) > 6:
        words = words[:6] + ["..."]
    if not words:
        return "something else"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def lark_problem(err: UnexpectedInput, text: str, end: int) -> Problem:
    """A person-readable diagnostic from lark's exception."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        if ch == '"':
            return Problem(SYNTAX_ERROR, "unterminated string: no closing '\"'", pos, min(end, pos + 1))
        if text.startswith("...", pos):
            return Problem(
                PRINTER_ELLIPSIS,
                "'...' stands for tensor data that onnx's printer left out; onnx's parser cannot read it back",
                pos,
                pos + 3,
            )
        return Problem(SYNTAX_ERROR, f"unexpected character {ch!r}", pos, pos + 1)
    if isinstance(err, UnexpectedToken):
        tok = err.token
        pos = (tok.start_pos or 0) if tok.type != "$END" else end
        tok_end = (tok.end_pos or 0) if tok.type != "$END" else end
        if tok.type == "DOT" and text.startswith("...", pos):
            return Problem(
                PRINTER_ELLIPSIS,
                "'...' stands for tensor data that onnx's printer left out; onnx's parser cannot read it back",
                pos,
                pos + 3,
            )
        expected = set(err.expected)
        try:  # the exact set: LALR's default reductions make err.expected too wide
            if err.interactive_parser is not None:
                expected = set(err.interactive_parser.accepts()) or expected
        except Exception:
            pass
        return Problem(SYNTAX_ERROR, f"expected {_expected(expected)}, found {_describe(tok)}", pos, tok_end or pos)
    return Problem(SYNTAX_ERROR, str(err).splitlines()[0], end, end)


STRAY_SKIPS = 8  # stray characters a statement's parse steps over before it gives the statement up


def _skipping_stray(text: str, start: int, end: int, symbol: str, err: UnexpectedInput) -> Any:
    """The parse of text[start:end] with the stray characters it stops at (`@@` half typed, recovery.STRAY) read as
    blanks, or None when it stops at anything else. The statement keeps its node, marked failed (its syntax error
    speaks for it): a keystroke's error costs the keystroke, not the statement's node and what reads it."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

    parser = get_parser()
    for _ in range(STRAY_SKIPS):
        if isinstance(err, UnexpectedCharacters):
            s = err.pos_in_stream or 0
            e = s + 1
        elif isinstance(err, UnexpectedToken) and err.token.type != "$END":
            s, e = err.token.start_pos or 0, err.token.end_pos or 0
        else:
            return None
        if not start <= s < e <= end or any(c not in STRAY for c in text[s:e]):
            return None
        text = text[:s] + " " * (e - s) + text[e:]
        try:
            return parser.parse(text, start, end, symbol)
        except UnexpectedInput as again:
            err = again
    return None


_BODY = ("node", "error")  # the kinds of statement a graph's or a function's body holds
FREEZE_MIN = 256 << 10  # characters: the first parse this large in a process freezes what exists then
_frozen = [False]


def _freeze(size: int) -> None:
    """After the first large parse, move what exists out of the young generation, or the next collections scan it
    all (a tenth of a cold parse, a fifth of the first analysis after it). Only once: frozen objects are never
    collected, and a model left behind (its graph is cyclic garbage) would stay for good, so a server that froze
    after every parse would grow without end (a model of 10k nodes analysed 20 times: 1 GB instead of 0.3)."""
    if size >= FREEZE_MIN and not _frozen[0]:
        _frozen[0] = True
        gc.freeze()


class SyntaxDocument:
    """The syntax of one file. Build with `SyntaxDocument(text)`; edit with `apply_edit`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = LineIndex(text)
        self.pieces: list[Piece] = []
        self._with_problems: list[Piece] = []  # the pieces that hold problems, in order
        self._model: t.Model | None = None
        self._has_graph: bool | None = None
        self._memo: dict[Any, Any] | None = None
        self.last_report = ReparseReport("full", 0, len(text), 0)
        self._parse_all()

    # ---- full parse
    def _parse_all(self) -> None:
        text = self.text
        parser = get_parser()
        self._model = None
        self._has_graph = None
        enabled = gc.isenabled()
        gc.disable()  # the parse allocates ~1M small objects; the cyclic GC only slows it down
        try:
            self._memo = {}  # the full parse and, if it fails, the statements' parses: each long list checked once
            model = parser.try_parse(text, 0, len(text), "model", self._memo)
            if model is None:
                self.pieces = self._recover()
            else:
                self.pieces = self._pieces_of(model, parser.builder.problems)
        finally:
            self._memo = None
            if enabled:
                _freeze(len(text))
                gc.enable()
        self._with_problems = [p for p in self.pieces if p.problems]
        self.last_report = ReparseReport("full", 0, len(text), len(self.pieces))

    def _pieces_of(self, model: t.Model, problems: list[tuple[str, int, int]]) -> list[Piece]:
        pieces: list[Piece] = []
        if model.header:
            pieces.append(Piece("header", model.header[0].start, model.header[-1].end, 0, model.header))
            # the header's brackets: widen to the `<` and `>`
            pieces[-1].start = self.text.rfind("<", 0, model.header[0].start)
            pieces[-1].end = self.text.find(">", model.header[-1].end) + 1
        graph = model.graph
        assert graph is not None
        self._block_pieces(pieces, graph.sig, graph.nodes, graph.end, 0, "graph")
        for i, fn in enumerate(model.functions):
            self._block_pieces(pieces, fn.sig, fn.nodes, fn.end, i + 1, "function")
        for message, start, end in problems:
            self._attach(pieces, Problem(INVALID_VALUE, message, start, end))
        return pieces

    def _block_pieces(
        self, pieces: list[Piece], sig: Any, nodes: list[t.Node], end: int, block: int, kind: str
    ) -> None:
        brace = self.text.find("{", sig.end)
        pieces.append(Piece(f"{kind}_sig", sig.start, brace + 1, block, sig))
        for node in nodes:
            pieces.append(Piece("node", node.start, node.end, block, node))
        pieces.append(Piece(f"{kind}_end", end - 1, end, block))

    @staticmethod
    def _attach(pieces: list[Piece], problem: Problem) -> None:
        i = bisect_right(pieces, problem.start, key=lambda p: p.start) - 1
        pieces[max(i, 0)].problems.append(problem)

    def _recover(self) -> list[Piece]:
        text = self.text
        if not text.strip() or not any(not line.lstrip().startswith("#") for line in split_lines(text) if line.strip()):
            piece = Piece("error", 0, len(text), 0, failed=True)
            piece.problems.append(
                Problem(
                    SYNTAX_ERROR,
                    "empty file: expected a model, e.g. `main (float[N] x) => (float[N] y) { y = Relu(x) }`",
                    0,
                    0,
                )
            )
            return [piece]
        if _PROTOBUF_TEXT.match(text):
            piece = Piece("error", 0, len(text), 0, failed=True)
            start = len(text) - len(text.lstrip())
            first_line_end = line_end_at(text, start)[0]
            piece.problems.append(
                Problem(
                    PROTOBUF_TEXT,
                    "this is protobuf text format (a printed ModelProto), not ONNX text syntax: load it with "
                    "google.protobuf.text_format, save it with onnx.save, then run `graphlsp convert model.onnx "
                    "model.onnxtxt`",
                    start,
                    first_line_end,
                )
            )
            return [piece]
        return [self._parse_segment(seg) for seg in Segmenter(text).run()]

    def _parse_segment(self, seg: Segment, text: str | None = None) -> Piece:
        """The statement `seg` of `text` (the document's text unless given) parsed as a piece."""
        from lark.exceptions import UnexpectedInput

        text = self.text if text is None else text
        piece = Piece(seg.kind, seg.start, seg.end, seg.block)
        for sp in seg.problems:
            piece.problems.append(Problem(SYNTAX_ERROR, sp.message, sp.start, sp.end, sp.related, sp.anchor, sp.tail))
        parser = get_parser()
        if seg.symbol is None:
            piece.failed = bool(seg.problems)
            if seg.kind in ("graph_sig", "function_sig") and seg.end > seg.start:
                # A signature without its `{`: if it breaks earlier, that is the better message.
                symbol = "graph_sig" if seg.kind == "graph_sig" else "function_sig"
                try:
                    parser.parse(text, seg.start, seg.end, symbol, self._memo)
                except UnexpectedInput as err:
                    first = lark_problem(err, text, seg.end)
                    if first.start < seg.end:
                        piece.problems[:] = [first]
            return piece
        if seg.repair:
            text = text[: seg.end] + seg.repair
        stop = seg.end + len(seg.repair)
        if seg.symbol == "function_sig":  # the statement holds the body's `{`, the grammar's function_sig does not
            stop = text.rindex("{", seg.start, stop)
        skipped = False
        try:
            value = parser.parse(text, seg.start, stop, seg.symbol, self._memo)
        except UnexpectedInput as err:
            if not seg.problems:
                piece.problems.append(lark_problem(err, text, seg.end))
            value = _skipping_stray(text, seg.start, stop, seg.symbol, err)
            if value is None:
                piece.failed = True
                return piece
            skipped = True
        if seg.symbol == "header":  # the model rule checks its header's keys; a statement parsed alone, here
            parser.builder.check_model_header(value.items)
        for message, start, end in parser.builder.problems:
            piece.problems.append(Problem(INVALID_VALUE, message, start, end))
        piece.failed = skipped or bool(seg.problems)
        if seg.symbol == "node_seq":
            if len(value) == 1:
                piece.value = value[0]
            elif not value:
                piece.kind = "error"
            else:  # the cutter kept two statements together; keep the first, report the rest
                piece.value = value[0]
        elif seg.symbol == "header":
            piece.value = value.items
        else:
            piece.value = value
        return piece

    # ---- views
    @property
    def problems(self) -> list[Problem]:
        """Every problem, with absolute offsets into the current text."""
        out = []
        for p in self._with_problems:
            o = p.origin
            for q in p.problems:
                message = q.message
                if q.anchor >= 0:
                    line, col = self.lines.position(q.anchor + o)
                    message = f"{message} opened at {line + 1}:{col + 1}{q.tail}"
                elif q.tail:
                    message += q.tail
                related = [(m, s + o, e + o) for m, s, e in q.related]
                out.append(Problem(q.code, message, q.start + o, q.end + o, related))
        return out

    @property
    def model(self) -> t.Model:
        """The statements assembled as a Model. Positions inside are local to each statement's piece."""
        if self._model is None:
            self._model = self._assemble()
        return self._model

    @property
    def has_graph(self) -> bool:
        """Whether `model` has a main graph, kept across incremental edits (they replace node statements with node
        statements, which cannot make or unmake the graph): the editor asks at every edit, and assembling the
        model of a big file costs most of a millisecond."""
        if self._has_graph is None:
            self._has_graph = self.model.graph is not None
        return self._has_graph

    def _assemble(self) -> t.Model:
        header: list[t.HeaderEntry] = []
        graph: t.Graph | None = None
        functions: list[t.Function] = []
        current: Any = None
        nodes: list[t.Node] = []
        for p in self.pieces:
            if p.kind == "header" and p.value is not None:
                header = p.value
            elif p.kind in ("graph_sig", "function_sig"):
                current = p.value
                nodes = []
                if p.value is None:
                    current = None
            elif p.kind == "node" and p.value is not None:
                nodes.append(p.value)
            elif p.kind == "graph_end" and current is not None and graph is None:
                graph = t.Graph(current, nodes, current.start, p.end)
                current = None
            elif p.kind == "function_end" and current is not None:
                functions.append(t.Function(current, nodes, current.start, p.end))
                current = None
        if current is not None and isinstance(current, t.GraphSig) and graph is None:
            graph = t.Graph(current, nodes, current.start, len(self.text))
        elif current is not None and isinstance(current, t.FunctionSig):
            functions.append(t.Function(current, nodes, current.start, len(self.text)))
        return t.Model(header, graph, functions, 0, len(self.text))

    def blocks(self) -> list[Block]:
        """The main graph (block 0) and each function (block i + 1): signature piece, node pieces, end piece.

        A block whose signature did not parse has sig None; pieces that did not parse are left out of `nodes`.
        """
        out: list[Block] = []
        for p in self.pieces:
            if p.kind in ("graph_sig", "function_sig"):
                out.append(Block(p.block, p.kind == "graph_sig", p if p.value is not None else None, [], None))
            elif p.kind == "node" and p.value is not None and out and out[-1].index == p.block:
                out[-1].nodes.append(p)
            elif p.kind in ("graph_end", "function_end") and out and out[-1].index == p.block:
                out[-1].end = p
        return out

    def header(self) -> Piece | None:
        for p in self.pieces:
            if p.kind == "header" and p.value is not None:
                return p
        return None

    def node_pieces(self) -> list[Piece]:
        return [p for p in self.pieces if p.kind == "node" and p.value is not None]

    def piece_at(self, offset: int) -> Piece | None:
        """The statement containing the offset (ends inclusive), if any."""
        i = bisect_right(self.pieces, offset, key=lambda p: p.abs_start) - 1
        if 0 <= i < len(self.pieces) and self.pieces[i].abs_start <= offset <= self.pieces[i].abs_end:
            return self.pieces[i]
        return None

    # ---- edits
    def apply_edit(self, start: int, end: int, new: str) -> ReparseReport:
        """Replace text[start:end] with `new` and reparse as little as possible; returns what was reparsed."""
        old_text = self.text
        start = max(0, min(start, len(old_text)))
        end = max(start, min(end, len(old_text)))
        new_text = old_text[:start] + new + old_text[end:]
        delta = len(new) - (end - start)
        report = self._try_incremental(start, end, new, new_text, delta)
        if report is None:
            self.text = new_text
            self.lines = LineIndex(new_text)
            self._parse_all()
            report = self.last_report
        self.last_report = report
        self._model = None
        return report

    def apply_lsp_edit(
        self, start: tuple[int, int], end: tuple[int, int], new: str, encoding: str = "utf-16"
    ) -> ReparseReport:
        a = self.lines.offset(start[0], start[1], encoding)
        b = self.lines.offset(end[0], end[1], encoding)
        return self.apply_edit(a, b, new)

    def _try_incremental(self, start: int, end: int, new: str, new_text: str, delta: int) -> ReparseReport | None:
        pieces = self.pieces
        if not pieces:
            return None
        lines = self.lines
        # The edited lines, widened to whole statements; a statement sharing a line is taken whole.
        lo = lines.line_start(lines.line_of(start))
        end_line = lines.line_of(end)
        hi = lines.line_end(end_line)
        if hi < end:  # between the \r and the \n of a line end: what is typed there starts the next line
            hi = lines.line_end(end_line + 1)
        first = bisect_left(pieces, lo, key=lambda p: p.abs_end)  # first piece ending at or after lo
        last = bisect_right(pieces, hi, key=lambda p: p.abs_start)  # pieces[first:last] touch [lo, hi]
        # A statement that did not parse may have been cut by looking at what is now edited: parsed again too.
        while 0 < first < len(pieces) and pieces[first - 1].kind in _BODY and pieces[first - 1].failed:
            first -= 1
        for p in pieces[first:last]:
            if p.kind not in _BODY:
                return None
        if first == 0 or last >= len(pieces):
            return None
        before, after = pieces[first - 1], pieces[last]
        # The statement before must have ended by itself: a cut one was cut by looking at what is now edited.
        if before.block != after.block or before.failed:
            return None
        if before.kind not in ("node", "graph_sig", "function_sig"):
            return None
        if after.kind not in ("node", "graph_end", "function_end"):
            return None
        region_start = min(lo, pieces[first].abs_start) if last > first else lo
        region_end = max(hi, pieces[last - 1].abs_end) if last > first else hi
        if region_start < before.abs_end or region_end > after.abs_start:
            return None  # the widened region reaches into a neighbour: let the full parse decide
        new_end = region_end + delta
        parser = get_parser()
        nodes = parser.try_parse(new_text, region_start, new_end, "node_seq")
        if nodes is not None:
            problems = parser.builder.problems
            new_pieces = [Piece("node", n.start, n.end, before.block, n) for n in nodes]
            for message, s, e in problems:
                if not new_pieces:
                    return None
                self._attach(new_pieces, Problem(INVALID_VALUE, message, s, e))
        else:
            found = self._cut_window(first, last, new_text, delta)
            if found is None:
                return None
            new_pieces = found
        if delta:
            for p in pieces[last:]:
                p.origin += delta
        old_pieces = pieces[first:last]
        pieces[first:last] = new_pieces
        if any(p.problems for p in old_pieces) or any(p.problems for p in new_pieces):
            self._with_problems = [p for p in pieces if p.problems]
        self.lines.replace(start, end, new, new_text)
        self.text = new_text
        return ReparseReport("incremental", region_start, new_end, len(new_pieces), "", old_pieces, new_pieces)

    def _cut_window(self, first: int, last: int, new_text: str, delta: int) -> list[Piece] | None:
        """The statements that replace pieces[first:last], cut by recovery as the whole text would cut them, or
        None when that cannot be told from a window around them.

        The window runs from the statement before (whose end the first edited token may move) to the statement
        after them and, when that is a node, the one after it (a statement's cut looks at its own tokens and the
        first token after it). It is cut as `Segmenter.run` cuts a block's body; the cut is the whole text's when
        the window's first and last statements come out as they were and no cut before the last looked past the
        window's end."""
        pieces = self.pieces
        before, after = pieces[first - 1], pieces[last]
        tail = [after]
        if after.kind == "node":
            if last + 1 >= len(pieces) or pieces[last + 1].block != after.block:
                return None
            tail.append(pieces[last + 1])
            if tail[-1].kind not in ("node", "graph_end", "function_end"):
                return None
        if any(p.kind != "node" and p is not tail[-1] for p in tail) or tail[-1].abs_end <= tail[-1].abs_start:
            return None
        head = [before] if before.kind == "node" else []
        w_start = before.abs_start if head else before.abs_end
        cutter = Segmenter(new_text, w_start, tail[-1].abs_end + delta)
        end_kind = "graph_end" if before.block == 0 else "function_end"
        if cutter.run_nodes(before.block, end_kind) != len(cutter.toks):
            return None  # a `}` closed the body before the window's end
        segs = cutter.segments
        if len(segs) < len(head) + len(tail) or 0 <= cutter.ran_out < len(segs) - 1:
            return None
        ends = [(segs[0], head[0], 0)] if head else []
        ends += [(seg, p, delta) for seg, p in zip(segs[len(segs) - len(tail) :], tail, strict=True)]
        for seg, p, shift in ends:
            if (seg.kind, seg.start, seg.end) != (p.kind, p.abs_start + shift, p.abs_end + shift):
                return None
        middle = segs[len(head) : len(segs) - len(tail)]
        if any(seg.kind not in _BODY for seg in middle):
            return None
        return [self._parse_segment(seg, new_text) for seg in middle]
