"""The diagnostics the server sends after each edit are what a fresh analysis of the same text gives, to the byte:
the server keeps their JSON, their findings' rows, whether the text has a graph and the inputs' dim symbols across
edits, and none of them may go stale. The edits move lines, change findings (through the patched path and through a
rebuild), put a character of two UTF-16 units before a finding, and add and remove a suppression."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from pygls.protocol import default_converter

from bench.models import generate_gpt
from graphlsp.analysis import Analysis
from graphlsp.lint.config import Settings
from graphlsp.lint.diagnostics import collect_analysis, collect_deployment
from graphlsp.lint.runner import finalize
from graphlsp.lsp import convert
from graphlsp.lsp.diagnostics import compute_diagnostics
from graphlsp.lsp.workspace import DocState

URI = "file:///kept/model.onnxtxt"
PATH = "/kept/model.onnxtxt"
_UNSTRUCTURE = default_converter().unstructure


class _Server:
    """What compute_diagnostics reads of the server."""

    pull_client = False

    def __init__(self, encoding: str, settings: Settings) -> None:
        self.encoding, self.settings = encoding, settings

    def settings_for(self, uri: str) -> Settings:
        return self.settings

    def show_size_problems(self, model: object, settings: Settings) -> None:
        """The server's window/showMessage about `dims`: none here (no sizes are bound)."""


def fresh(text: str, encoding: str, settings: Settings) -> list[str]:
    """The diagnostics of a new analysis of the text, through `graphlsp check`'s collection (Diagnostic objects),
    each converted on its own: nothing kept from before."""
    a = Analysis(text, settings.fold_size_cap)
    diags = collect_analysis(a, PATH)
    if a.doc.model.graph is not None:
        diags = sorted(diags + collect_deployment(a, PATH, settings), key=lambda d: (d.start, d.code))
    lines = convert.LspLines(text)
    return [json.dumps(_UNSTRUCTURE(convert.diagnostic(lines, d, URI, encoding)))
            for d in finalize(diags, text, PATH, settings)]  # fmt: skip


Edit = Callable[[str], tuple[int, int, str]]  # the current text -> (start, end, new text), in its line ends


def _ends(text: str, s: str) -> str:
    return s.replace("\n", "\r\n") if "\r\n" in text else s


def replace(old: str, new: str) -> Edit:
    def edit(text: str) -> tuple[int, int, str]:
        at = text.index(_ends(text, old))
        return at, at + len(_ends(text, old)), _ends(text, new)

    return edit


def after(anchor: str, new: str) -> Edit:
    def edit(text: str) -> tuple[int, int, str]:
        at = text.index(_ends(text, anchor)) + len(_ends(text, anchor))
        return at, at, _ends(text, new)

    return edit


LABEL = '["/b.0/a/Concat_3"]'
REACHED = '("/b.0/a/Transpose_3_output_0", "/b.0/a/Concat_3_output_0")'
UNUSED = '"/b.0/a/Identity_0_output_0" = Identity ("/b.0/a/Concat_0_output_0")'
EXTRA = '   ["/kept"] "/kept_output_0" = Constant <value: tensor = float {1.5}> ()\n'
EDITS: list[tuple[str, Edit]] = [
    ("a constant's value, shorter", replace("{0.35355338}", "{0.25}")),
    ("a constant's value, longer", replace("{0.25}", "{0.3535533905932738}")),
    ("a line inserted above every finding", after("=> (float[batch,seq,50] logits) {\n", "\n")),
    ("a finding's message changes (patched)", replace("int64[1] {16}>", "int64[1] {-1}>")),
    ("and back", replace("int64[1] {-1}>", "int64[1] {16}>")),
    ("a two-unit character before a finding", replace(LABEL, '["/b.0/a/Concat_\U0001f600"]')),
    ("the finding's node moved along its line (patched)", replace('_output_0" = Concat <axis: int = 0> ("/b.0/a/Unsqueeze_6',
                                                              '_output_0" =   Concat <axis: int = 0> ("/b.0/a/Unsqueeze_6')),
    ("an edit on that line", replace('<axis: int = 0> ("/b.0/a/Unsqueeze_6', '<axis: int = 0>  ("/b.0/a/Unsqueeze_6')),
    ("an undefined input (rebuilt)", replace(REACHED, '("/b.0/a/Transpose_3_output_0", "/b.0/a/nowhere")')),
    ("defined again", replace('"/b.0/a/nowhere")', '"/b.0/a/Concat_3_output_0")')),
    ("a half-typed token in the inputs (the node kept, patched)", replace(REACHED, REACHED.replace('("', '(@@"', 1))),
    ("another keystroke on the broken line", replace('(@@"', '(@@@"')),
    ("mended", replace('(@@@"', '("')),
    ("a half-typed token in an attribute", replace("<axis: int = 0>", "<axis: int = @@0>")),
    ("mended again", replace("<axis: int = @@0>", "<axis: int = 0>")),
    ("a token the statement breaks at (its node lost)", replace(REACHED, REACHED.replace('("', '($x"', 1))),
    ("and mended", replace('($x"', '("')),
    ("a stray line between two statements", after("=> (float[batch,seq,50] logits) {\n", "@@\n")),
    ("a value edited below it", replace("{0.3535533905932738}", "{0.375}")),
    ("the stray line removed", replace("{\n@@\n", "{\n")),
    ("and the value back", replace("{0.375}", "{0.3535533905932738}")),
    ("a suppression", after(UNUSED, "  # noqa: GL207")),
    ("an edit under the suppression", replace("{0.3535533905932738}", "{0.5}")),
    ("the suppression removed", replace("  # noqa: GL207", "")),
    ("a node line added", after("{0.5}> ()\n", EXTRA)),
    ("a value edited after it", replace("{0.5}", "{0.75}")),
    ("the node line removed", replace(EXTRA, "")),
    ("the blank line removed", replace("=> (float[batch,seq,50] logits) {\n\n", "=> (float[batch,seq,50] logits) {\n")),
    ("the label back", replace('["/b.0/a/Concat_\U0001f600"]', LABEL)),
    ("a perm changed (folds downstream change)", replace("<perm: ints = [0, 2, 1, 3]>", "<perm: ints = [0, 1, 2, 3]>")),
    ("and back", replace("<perm: ints = [0, 1, 2, 3]>", "<perm: ints = [0, 2, 1, 3]>")),
    ("the graph's signature broken", replace("main_graph (", "main_graph ((")),
    ("and mended", replace("main_graph ((", "main_graph (")),
]

SETTINGS = {
    "defaults": Settings(),
    "configured": Settings(severity={"GL402": "warning"}, ignore=["GL207"]),
}


@pytest.mark.parametrize(("encoding", "configured", "line_end"), [
    ("utf-16", "defaults", "\n"), ("utf-8", "configured", "\n"), ("utf-32", "configured", "\r\n"),
    ("utf-16", "defaults", "\r\n"),
])  # fmt: skip
def test_diagnostics_after_each_edit_are_a_fresh_analysis(encoding: str, configured: str, line_end: str) -> None:
    settings = SETTINGS[configured]
    server = _Server(encoding, settings)
    text = generate_gpt(2).replace("\n", line_end)
    state = DocState(URI, 1, text)
    state.open(text, settings.fold_size_cap)
    assert compute_diagnostics(server, state) == fresh(text, encoding, settings)  # type: ignore[arg-type]
    seen = {len(fresh(text, encoding, settings))}
    for what, edit in EDITS:
        start, end, new = edit(state.text)
        state.edit(start, end, new, settings.fold_size_cap)
        text = text[:start] + new + text[end:]
        assert state.text == text
        expected = fresh(text, encoding, settings)
        assert compute_diagnostics(server, state) == expected, what  # type: ignore[arg-type]
        seen.add(len(expected))
    assert len(seen) > 1  # the edits did change what is reported


def test_edits_between_two_computations_that_keep_the_line_count() -> None:
    """A pull client asks for diagnostics after several edits: a line added above the fold hints and one joined
    below them leave as many lines as before, but every hint between them is a line further down."""
    settings = Settings()
    server = _Server("utf-16", settings)
    text = generate_gpt(2)
    state = DocState(URI, 1, text)
    state.open(text, settings.fold_size_cap)
    before = compute_diagnostics(server, state)  # type: ignore[arg-type]
    assert before == fresh(text, "utf-16", settings)
    last = text.rindex('\n   ["/head/')  # the last statement's line joined to the one before it
    for start, end, new in [(last, last + 1, " "), *[after("=> (float[batch,seq,50] logits) {\n", "\n")(text)]]:
        state.edit(start, end, new, settings.fold_size_cap)
        text = text[:start] + new + text[end:]
    assert text.count("\n") == generate_gpt(2).count("\n")
    after_edits = compute_diagnostics(server, state)  # type: ignore[arg-type]
    assert after_edits == fresh(text, "utf-16", settings)
    assert after_edits != before  # the hints moved a line down


def test_a_fold_changed_by_an_edit_makes_only_the_hints_it_moved_again() -> None:
    """After an edit that changes folds (a perm: the shapes downstream), the fold plan's hints are a fresh plan's,
    and the hints away from the change are the same objects as before (their JSON is kept)."""
    text = generate_gpt(4)
    a = Analysis(text)
    before = list(a.fold_plan().fold_hints())
    at = text.index("<perm: ints = [0, 2, 1, 3]>", len(text) // 2)
    a.apply_edit(at, at + len("<perm: ints = [0, 2, 1, 3]>"), "<perm: ints = [0, 1, 2, 3]>")
    after = a.fold_plan().fold_hints()
    assert after is not before
    fresh_hints = Analysis(a.doc.text).fold_plan().fold_hints()
    key = lambda h: (h[0].op_span, h[1], h[2])  # noqa: E731
    assert sorted(map(key, after)) == sorted(map(key, fresh_hints))
    assert sorted(map(key, after)) != sorted(map(key, before))
    kept = {id(h) for h in before} & {id(h) for h in after}
    assert len(kept) >= len(after) // 2  # the first layers' hints, above the edit
