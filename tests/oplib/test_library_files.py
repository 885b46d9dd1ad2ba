"""Op library files themselves: `graphlsp check` on `*.onnxop` (GL601 syntax, GL602 declaration errors, GL603
warnings, located, with settings and suppressions), the editor's text of a library standing for the file in the
catalog, and the pure answers the editor shows (graphlsp.oplib.query)."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphlsp.cli import main
from graphlsp.lint.config import ConfigError, load_settings
from graphlsp.oplib import query as q
from graphlsp.oplib.catalog import CATALOG

LIBRARY = """\
library acme
domain com.acme

op MyOp since 1 {
  input  A: T[*batch, M, K]
  input  B: T[K, N]
  output Y: T[*batch, M, N]
  attr   scale: float = 1.0
  type   T: float
  let    W = N * 2
  require has(B) and W > 0 else "no"
}
"""

BROKEN = """\
library broken
domain com.acme

op Typo since 1 {
  input  x: T[N]
  output y: T[M]
  type   T: float
  type   U: int64
}

op Bad since 1 {
  input  x: T[N
  output y: T[N]
  type   T: float
}
"""


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]]]:
    code = main(["check", "--no-cache", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_check_reports_a_librarys_problems_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.onnxop"
    path.write_text(BROKEN)
    code, found = check(capsys, str(path))
    assert code == 1
    assert [(d["line"], d["col"], d["code"], d["name"], d["severity"]) for d in found] == [
        (6, 15, "GL602", "op-declaration-error", "error"),  # M: bound by no input
        (8, 10, "GL603", "op-declaration-warning", "warning"),  # U: used by nothing
        (12, 16, "GL601", "op-library-syntax", "error"),  # `T[N` never closed
    ]
    assert "'M' is neither an attribute nor a dim of an input's shape" in str(found[0]["message"])
    # the text output shows the line, as for a model
    main(["check", "--no-cache", str(path)])
    out = capsys.readouterr().out
    assert f"{path}:12:16: error: GL601 expected ',' or ']'" in out and "12 |   input  x: T[N" in out
    # a clean library passes
    (tmp_path / "broken.onnxop").write_text(LIBRARY)
    assert check(capsys, str(path)) == (0, [])


def test_folders_settings_suppressions_and_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "broken.onnxop").write_text(BROKEN)
    (tmp_path / "m.onnxtxt").write_text('<ir_version: 10, opset_import: ["" : 21]>\ng (float x) => (float y) {\n'
                                        "  y = Relu (x)\n}\n")  # fmt: skip
    code, found = check(capsys, str(tmp_path))  # a folder: models and op libraries
    assert code == 1 and {d["code"] for d in found} == {"GL601", "GL602", "GL603"}
    code, found = check(capsys, "--ignore", "GL602,op-library-syntax", str(tmp_path))
    assert code == 0 and [d["code"] for d in found] == ["GL603"]
    # a noqa comment silences a declaration's warning, never a syntax error (it is reported unused there)
    text = BROKEN.replace("type   U: int64", "type   U: int64  # noqa: GL603").replace("T[N\n", "T[N  # noqa\n")
    (tmp_path / "ops" / "broken.onnxop").write_text(text)
    code, found = check(capsys, str(tmp_path / "ops" / "broken.onnxop"))
    assert sorted(str(d["code"]) for d in found) == ["GL501", "GL601", "GL602"]
    # standard input, named by --stdin-filename
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BROKEN.encode())))
    code, found = check(capsys, "--stdin-filename", "x.onnxop", "-")
    assert code == 1 and [d["line"] for d in found] == [6, 8, 12]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    CATALOG.clear_project()  # what other tests' projects put in use
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "acme.onnxop").write_text(LIBRARY)
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = ["ops/*.onnxop"]\n')
    yield tmp_path
    CATALOG.drop_overlay(tmp_path / "ops" / "acme.onnxop")
    CATALOG.clear_project()


def test_an_editors_text_stands_for_the_library_file(project: Path) -> None:
    path = project / "ops" / "acme.onnxop"
    load_settings(project)
    decl = CATALOG.lookup("com.acme", "MyOp", 1)
    assert decl is not None and decl.attrs["scale"].default == 1.0
    # the same text as on disk changes nothing
    generation = CATALOG.generation
    assert not CATALOG.set_overlay(path, LIBRARY, q.analyse(LIBRARY, str(path)).library)
    assert CATALOG.generation == generation and not CATALOG.overlaid(path)
    # typed in the editor: the declarations in use are the editor's
    typed = LIBRARY.replace("scale: float = 1.0", "scale: float = 2.0")
    assert CATALOG.set_overlay(path, typed, q.analyse(typed, str(path)).library)
    decl = CATALOG.lookup("com.acme", "MyOp", 1)
    assert decl is not None and decl.attrs["scale"].default == 2.0
    assert CATALOG.library(path) is not None and CATALOG.overlaid(path)
    # settings read again keep the editor's text; its errors are the editor's to show, not a ConfigError
    broken = typed.replace("T[K, N]", "T[K, Q]\n  output Z: T[P]")
    assert CATALOG.set_overlay(path, broken, q.analyse(broken, str(path)).library)
    load_settings(project)
    assert CATALOG.lookup("com.acme", "MyOp", 1) is None  # the op has an error: left out
    # closed without saving: the file again
    assert CATALOG.drop_overlay(path)
    decl = CATALOG.lookup("com.acme", "MyOp", 1)
    assert decl is not None and decl.attrs["scale"].default == 1.0
    # the file itself with an error is a configuration error, as before
    path.write_text(broken)
    with pytest.raises(ConfigError, match=r"op-libraries: 3 error\(s\)"):
        load_settings(project)


def test_a_file_not_in_use_never_changes_the_catalog(tmp_path: Path) -> None:
    path = tmp_path / "other.onnxop"
    path.write_text(LIBRARY)
    typed = LIBRARY.replace("MyOp", "OtherOp")
    assert not CATALOG.set_overlay(path, typed, q.analyse(typed, str(path)).library)
    assert CATALOG.lookup("com.acme", "OtherOp", 1) is None and CATALOG.library(path) is None
    assert not CATALOG.drop_overlay(path)


def _at(text: str, needle: str, delta: int = 0) -> int:
    return text.index(needle) + delta


def test_names_resolve_as_the_checker_resolves_them() -> None:
    doc = q.analyse(LIBRARY, "/x/acme.onnxop")
    assert doc.library.problems == []

    def target(needle: str, delta: int = 0) -> str | None:
        span = q.definition(doc, _at(LIBRARY, needle, delta))
        return None if span is None else LIBRARY[span[0] : span[1]] + f"@{LIBRARY.count(chr(10), 0, span[0]) + 1}"

    assert target("K, N]") == "K@5"  # bound by A's shape, line 5
    assert target("N]\n  output") == "N@6"  # the first input that has it binds it: B's own
    assert target("*batch, M, N") == "*batch@5"  # a run, to the input's run
    assert target("W > 0") == "W@10"  # a let
    assert target("B) and") == "B@6"  # has(B): the input
    assert target("T[K") == "T@9"  # the type constraint
    assert target("N * 2") == "N@6"
    assert q.hover(doc, _at(LIBRARY, "has(")) == (q.FUNCTION_DOCS["has"], (_at(LIBRARY, "has("), _at(LIBRARY, "(B)")))
    text, _ = q.hover(doc, _at(LIBRARY, "W > 0")) or ("", None)
    assert text == "**W** = `N * 2`"
    assert q.hover(doc, _at(LIBRARY, "library")) is None  # nothing there


def test_the_hover_on_a_models_node_shows_the_declaration() -> None:
    doc = q.analyse(LIBRARY, "/x/acme.onnxop")
    [op] = doc.library.ops
    text = q.declaration_markdown(op, opset=3)
    assert text.splitlines()[:3] == ["**MyOp** (com.acme, opset 3; since version 1)", "",
                                     "declared in the acme op library: `acme.onnxop` line 4"]  # fmt: skip
    assert "```onnxop\nop MyOp since 1 {\n  input  A: T[*batch, M, K]" in text and text.endswith("}\n```")
    long = q.declaration_markdown(op, max_lines=4)
    assert "op MyOp since 1 {\n  input  A: T[*batch, M, K]\n  input  B: T[K, N]\n  ...\n}\n```" in long


@pytest.mark.parametrize("eol", ["\r", "\r\n"])
def test_a_lone_cr_ends_a_line_in_a_library_too(tmp_path: Path, capsys: pytest.CaptureFixture[str], eol: str) -> None:
    # a comment stops at the line end (a lone \r included, as in LSP), so the op after it is read, and every
    # problem is on the same line and column whichever line ends the file uses
    text = BROKEN.replace("op Typo since 1 {", "# typo below\nop Typo since 1 {")

    def found(name: str, data: str) -> list[tuple[int, int, str]]:
        path = tmp_path / name
        path.write_bytes(data.encode())
        main(["check", "--no-cache", "--format", "json", str(path)])
        return sorted((d["line"], d["col"], d["code"]) for d in json.loads(capsys.readouterr().out))

    want = found("lf.onnxop", text)
    assert any(code == "GL602" and line >= 5 for line, _, code in want), want  # Typo's problems: it was read
    assert found("other.onnxop", text.replace("\n", eol)) == want
