"""A lone `\\r` ends a line, as in LSP (`\\n`, `\\r\\n` and a lone `\\r` are each one line end): the line index, the
lexer's comments, the cutter of broken files, noqa, fixes, the CLI's line numbers and excerpts, and the server
all count lines the same way, so what an editor shows on a line is what `graphlsp check` reports on it.

onnx's own parser differs, deliberately: its comments run to the next `\\n` only (`SkipWhiteSpace` in
onnx/defs/parser.cc), so `# note\\r  y = Add (a, b)` is all comment to `onnx.parser.parse_model`. An editor shows
that statement on a line of its own; reading it as a comment would hide code the user can see. The test
`test_onnx_parser_reads_a_lone_cr_comment_to_the_next_newline` pins what onnx does, so that a change there is
noticed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx.parser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlsp.lint.config import Settings
from graphlsp.lint.fold import fold_text
from graphlsp.lint.runner import check_stdin
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.format import format_text
from graphlsp.syntax.positions import LineIndex, count_line_ends, line_end_at, line_start_at, split_lines
from tests.conftest import ROOT, example_texts
from tests.lsp.rawclient import RawClient
from tests.lsp.reference import check, line_starts, lsp_offset, lsp_position
from tests.syntax.docdump import dump

TEXTS = example_texts()
H = '<ir_version: 10, opset_import: ["" : 21]>\n'
COMMENTED = H + "g (float[N] a, float[N] b) => (float[N] y) {\r  # the sum\r  y = Add (a, b)\r}\r"


def _cli_json(text: str) -> list[dict[str, object]]:
    proc = subprocess.run([sys.executable, "-m", "graphlsp.cli", "check", "--no-cache", "--format", "json",
                           "--stdin-filename", "m.onnxtxt", "-"], input=text.encode(), capture_output=True,
                          cwd=ROOT, timeout=120)  # fmt: skip
    assert proc.returncode <= 1, proc.stderr.decode()
    return json.loads(proc.stdout)


# ---- the line index


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="a\r\n", max_size=30),
       edits=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6), st.text(alphabet="b\r\n", max_size=4)),
                      max_size=6))  # fmt: skip
def test_line_index_counts_lines_as_lsp_and_follows_edits(text: str, edits: list[tuple[int, int, str]]) -> None:
    idx = LineIndex(text)
    assert idx.starts == line_starts(text)
    for at, length, new in edits:
        start = min(at, len(text))
        end = min(start + length, len(text))
        text = text[:start] + new + text[end:]
        idx.replace(start, end, new, text)
        assert idx.starts == line_starts(text) == LineIndex(text).starts
    assert len(split_lines(text)) == len(idx.starts) == count_line_ends(text) + 1
    for offset in range(len(text) + 1):
        line, col = lsp_position(text, offset, "utf-32")
        assert idx.position(offset) == (line, col)
        assert idx.offset(line, 999) == lsp_offset(text, line, 999, "utf-32")  # the line's end
        if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
            continue  # inside a `\r\n`: no position names it
        assert line_start_at(text, offset) == idx.starts[line]
        end, next_start = line_end_at(text, offset)
        assert end == idx.line_end(line)
        assert next_start == (idx.starts[line + 1] if line + 1 < len(idx.starts) else len(text))


# ---- the text front end


def test_a_comment_ends_at_a_lone_cr() -> None:
    doc = SyntaxDocument(COMMENTED)
    assert not doc.problems
    [node] = doc.node_pieces()
    assert node.value.op.op_type == "Add"
    assert doc.lines.position(node.abs_start) == (3, 2)
    assert check_stdin(COMMENTED.encode(), "m.onnxtxt", Settings()).diagnostics == []


def test_onnx_parser_reads_a_lone_cr_comment_to_the_next_newline() -> None:
    """What onnx 1.23 does on the same text (we differ on purpose; see the module's docstring)."""
    text = H + "g (float[N] a, float[N] b) => (float[N] y) {\n  # the sum\r  y = Add (a, b)\n}\n"
    assert len(SyntaxDocument(text).node_pieces()) == 1
    assert len(onnx.parser.parse_model(text.replace("\r", "\n")).graph.node) == 1
    assert len(onnx.parser.parse_model(text).graph.node) == 0  # to onnx, the Add is part of the comment


def test_a_broken_file_is_cut_at_lone_cr_line_ends() -> None:
    """Recovery: a statement broken on one line does not take the next line with it (the cutter sees the \\r)."""
    text = H + "g (float[N] a) => (float[N] y) {\r  t = Relu (a\r  y = Abs (a) # x\r  z = Neg (y)\r}\r"
    want = sorted((d.code, LineIndex(text.replace("\r", "\n")).position(d.start))
                  for d in check_stdin(text.replace("\r", "\n").encode(), "m.onnxtxt", Settings()).diagnostics)  # fmt: skip
    got = sorted((d.code, LineIndex(text).position(d.start))
                 for d in check_stdin(text.encode(), "m.onnxtxt", Settings()).diagnostics)  # fmt: skip
    assert got == want and any(code == "GL101" for code, _ in got)


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize("line_end", ["\r", "\r\n"])
def test_cli_reports_the_same_lines_whatever_the_line_ends(name: str, line_end: str) -> None:
    """`graphlsp check` on an example with its `\\n` turned into lone `\\r` (or `\\r\\n`): the same findings, at
    the same lines and columns, with the same messages (which cite lines too). The comments in broken.onnxtxt
    (`# expect: ...` after a statement) would swallow the next line if they ran to `\\n`."""
    text = TEXTS[name]

    def key(d: dict[str, object]) -> tuple[object, ...]:
        return d["code"], d["line"], d["col"], d["end_line"], d["end_col"], d["message"]

    want = sorted(map(key, _cli_json(text)))
    assert sorted(map(key, _cli_json(text.replace("\n", line_end)))) == want
    if name == "broken.onnxtxt":
        assert len(want) >= 10


def test_text_output_shows_the_line_under_the_finding() -> None:
    text = H + "g (float[N] x) => (float[N] y) {\r  y = Relu (x)\r  spare = Neg (x)  # keep\r}\r"
    proc = subprocess.run([sys.executable, "-m", "graphlsp.cli", "check", "--no-cache", "--stdin-filename",
                           "m.onnxtxt", "-"], input=text.encode(), capture_output=True, cwd=ROOT, timeout=120)  # fmt: skip
    out = proc.stdout.decode()
    assert "m.onnxtxt:4:3: warning: GL207" in out and "4 |   spare = Neg (x)  # keep\n" in out, out


def test_noqa_on_a_lone_cr_line() -> None:
    text = H + "g (float[N] x) => (float[N] y) {\r  spare = Neg (x)  # noqa: GL207\r  y = Relu (x)  # noqa: GL301\r}\r"
    assert [(d["code"], d["line"]) for d in _cli_json(text)] == [("GL501", 4)]


def test_fixes_and_fold_remove_whole_lone_cr_lines() -> None:
    """A removed node takes its whole line, up to and with its line end (a lone \\r or \\r\\n), and no more."""
    text = H + "g (float[N] x) => (float[N] y) {\r  spare = Neg (x)\r\n  y = Relu (x)\r}\r"
    result = check_stdin(text.encode(), "m.onnxtxt", Settings(), fix=True)
    assert result.fixed_text == text.replace("  spare = Neg (x)\r\n", "")
    text = H + "g (float[N] x) => (float[N] y) {\r  c = Constant <value = float[1] {2.0}> ()\r" \
        "  d = Neg (c)  # gone\r  y = Add (x, d)\r}\r"  # fmt: skip
    out = fold_text(text).text
    assert out == text.replace("  c = Constant <value = float[1] {2.0}> ()\r", "").replace(
        "d = Neg (c)", "d = Constant <value: tensor = float[1] {-2}> ()"), out  # fmt: skip


def test_format_writes_newlines_and_keeps_the_model() -> None:
    formatted = format_text(COMMENTED)
    assert formatted is not None and "\r" not in formatted
    assert formatted == format_text(COMMENTED.replace("\r", "\n"))


# ---- incremental reparse across a lone \r

SNIPPETS = ["\r", "\r\n", "\n", "# c\r", "  z = Neg (a)\r", "x", "(", ")", "#", ""]


@settings(max_examples=250, deadline=None)
@given(name=st.sampled_from(sorted(TEXTS)), line_end=st.sampled_from(["\r", "\r\n"]), data=st.data())
def test_edits_across_a_lone_cr_equal_a_full_parse(name: str, line_end: str, data: st.DataObject) -> None:
    text = TEXTS[name].replace("\n", line_end)
    doc = SyntaxDocument(text)
    for _ in range(data.draw(st.integers(1, 4))):
        crs = [i for i, ch in enumerate(doc.text) if ch in "\r\n"]
        at = data.draw(st.sampled_from(crs)) if crs else 0  # at a line end: joins or splits lines
        start = max(0, at + data.draw(st.integers(-3, 1)))
        end = min(len(doc.text), start + data.draw(st.sampled_from([0, 1, 2, 5])))
        doc.apply_edit(start, end, data.draw(st.sampled_from(SNIPPETS)))
        assert dump(doc) == dump(SyntaxDocument(doc.text))


def test_an_edit_on_a_lone_cr_line_reparses_only_its_statement() -> None:
    text = TEXTS["mlp.onnxtxt"].replace("\n", "\r")
    doc = SyntaxDocument(text)
    node = doc.node_pieces()[1]
    out = node.value.outputs[0]
    report = doc.apply_edit(node.origin + out.start, node.origin + out.end, out.value + "_2")
    assert report.mode == "incremental" and report.pieces == 1
    assert dump(doc) == dump(SyntaxDocument(doc.text))
    # a comment typed at the end of a statement's line ends at the \r: the next statement stays code
    end = doc.lines.line_end(doc.lines.line_of(node.abs_end))
    report = doc.apply_edit(end, end, "  # note")
    assert dump(doc) == dump(SyntaxDocument(doc.text)) and len(doc.node_pieces()) == len(SyntaxDocument(text)
                                                                                           .node_pieces())  # fmt: skip


# ---- the server agrees with the CLI


def test_server_diagnostics_on_lone_cr_text_equal_check() -> None:
    """The server's diagnostics (pulled, UTF-16 positions) on documents with lone `\\r` line ends, opened and then
    edited across a `\\r`, equal `graphlsp check` on the same text (positions as LSP counts them)."""
    client = RawClient()
    try:
        caps = {"general": {"positionEncodings": ["utf-16"]}, "textDocument": {"diagnostic": {}}}
        client.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": caps})
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        ids = iter(range(100, 10**6))

        def diagnostics(uri: str) -> list[tuple[str, int, int]]:
            reply = client.request(next(ids), "textDocument/diagnostic", {"textDocument": {"uri": uri}})
            items = reply["result"]["items"]
            return sorted((str(d["code"]), d["range"]["start"]["line"], d["range"]["start"]["character"])
                          for d in items)  # fmt: skip

        for i, text in enumerate([TEXTS["broken.onnxtxt"].replace("\n", "\r"), COMMENTED,
                                  TEXTS["attention.onnxtxt"].replace("\n", "\r\n")]):  # fmt: skip
            uri = f"file:///cr/{i}.onnxtxt"
            client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "onnxtxt", "version": 1, "text": text}}})  # fmt: skip
            assert diagnostics(uri) == check(text)
            # join two lines (delete a \r), then type a comment before a \r and split a line with a lone \r
            at = text.index("\r", len(text) // 2)
            for version, (start, end, new) in enumerate([(at, at + 1, " "), (at, at, " # c"), (at, at, "\r")], 2):
                rng = {"start": dict(zip(("line", "character"), lsp_position(text, start), strict=True)),
                       "end": dict(zip(("line", "character"), lsp_position(text, end), strict=True))}  # fmt: skip
                text = text[:start] + new + text[end:]
                client.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": rng, "text": new}]}})  # fmt: skip
                assert diagnostics(uri) == check(text), (version, new)
    finally:
        client.close()


def test_check_and_lsp_reference_agree_on_every_example_with_lone_cr() -> None:
    """The reference the server is held to (tests/lsp/reference.py) counts lines as the CLI now does."""
    for text in TEXTS.values():
        cr = text.replace("\n", "\r")
        result = check_stdin(cr.encode(), "m.onnxtxt", Settings())
        idx = LineIndex(cr)
        assert sorted(idx.position(d.start, "utf-16") for d in result.diagnostics) == \
            sorted(lsp_position(cr, d.start) for d in result.diagnostics)  # fmt: skip


def test_every_lexer_regex_stops_a_comment_at_cr() -> None:
    """Every regex of the text front end and the lint layer that knows `#` comments ends them at `\\r` too."""
    sources = [ROOT / "grammar" / "onnxtxt.lark", *(ROOT / "graphlsp" / "syntax").glob("*.py"),
               *(ROOT / "graphlsp" / "lint").glob("*.py"), ROOT / "graphlsp" / "query.py"]  # fmt: skip
    for path in sources:
        assert "#[^\\n]" not in Path(path).read_text(), path


# ---- found on the way: regexes that backtracked without bound


def test_a_comment_full_of_hashes_does_not_stall_recovery() -> None:
    """`# # # ...` before a file that does not parse: the protobuf-text sniffer cut the comment into comments in
    every possible way (36 s for 18 `# `, doubling with each); found by the lone-\\r edits above on the old code,
    where a file of `\\r` lines was one comment line."""
    import time

    text = "# " * 2000 + "\nnot a model ("
    t0 = time.perf_counter()
    doc = SyntaxDocument(text)
    assert doc.problems and time.perf_counter() - t0 < 2


def test_format_strips_a_long_run_of_trailing_spaces_in_linear_time() -> None:
    import time

    # kept as written (a comment inside), spaces not followed by a line end: each start scanned the whole run
    text = H + "g (float[N] a) => (float[N] y) {\n  y = Abs (a  # c\n" + " " * 100_000 + ")\n}\n"
    t0 = time.perf_counter()
    formatted = format_text(text)
    assert formatted is not None and "Abs" in formatted and time.perf_counter() - t0 < 2
