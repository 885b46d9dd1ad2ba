"""Acceptance 1 of issue 38: every finding on the exports of small torch modules (tests/provenance/torch_modules.py)
points to the exact line of that file that creates the op: in the related information of the diagnostics, the
text output, SARIF's relatedLocations and the github format's second annotation."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from exports import MODULES, makes_lines

from graphlsp.binary.read import read_model
from graphlsp.lint.config import Settings
from graphlsp.lint.output import format_full, format_github, format_sarif
from graphlsp.lint.runner import lint_binary
from graphlsp.provenance.describe import hover
from graphlsp.provenance.locate import Sources

ROOT = Path(__file__).resolve().parents[2]
LINES = makes_lines()


@pytest.fixture(autouse=True)
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the workspace, and the repository the github and SARIF paths are relative to


def _valid_sarif(log: dict) -> None:
    """Against SARIF 2.1.0's schema (../shared/schemas), when it is here."""
    from tests.conftest import SHARED

    schema = SHARED / "schemas" / "sarif-schema-2.1.0.json"
    if schema.exists():
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.validate(log, json.loads(schema.read_text()))


def _diagnostics(path: Path) -> list:
    return lint_binary(str(path), Settings(root=str(ROOT)))


@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
@pytest.mark.parametrize("name", sorted(LINES))
def test_every_finding_points_to_the_line_that_makes_the_op(exported: dict, exporter: str, name: str) -> None:
    line, op = LINES[name]
    diags = _diagnostics(exported[(exporter, name)])
    assert {d.code for d in diags} & {"GL320", "GL321"}, diags  # the module's finding is there
    for d in diags:
        assert d.op in (None, op), d  # the finding is on the op the line makes (or on the input it pins)
        python = [r for r in d.related if r.get("origin")]
        assert len(python) == 1, (d, d.related)
        r = python[0]
        assert (r["file"], r["line"]) == (str(MODULES), line), r
        assert r["message"].startswith(f"made by `torch_modules.py:{line}` `")
        assert MODULES.read_text().splitlines()[line - 1].strip().startswith(r["message"].split("` `")[1][:20])
    text = format_full(diags, {})
    assert text.count(f"at tests/provenance/torch_modules.py:{line}") == len(diags)
    # the hover of the node each finding is on (or comes from) says the same line
    model, _ = read_model(exported[(exporter, name)])
    sources = Sources([str(ROOT)])
    for node in model.graph.nodes:
        if node.op_type == op:
            shown = hover(node, sources)
            assert shown.startswith(f"made by `torch_modules.py:{line}` `"), shown
            assert "◀" in shown  # the chosen frame marked in the stack


@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
def test_sarif_and_github_name_the_python_line(exported: dict, exporter: str) -> None:
    for name, (line, _) in LINES.items():
        diags = _diagnostics(exported[(exporter, name)])
        log = json.loads(format_sarif(diags))
        _valid_sarif(log)
        results = log["runs"][0]["results"]
        assert results
        for result in results:
            (rel,) = result["relatedLocations"]
            physical = rel["physicalLocation"]
            assert physical["artifactLocation"] == {"uri": "tests/provenance/torch_modules.py", "uriBaseId": "%SRCROOT%"}
            assert physical["region"] == {"startLine": line}
        github = format_github(diags).splitlines()
        on_model = [g for g in github if "torch_modules.py" not in g]
        on_python = [g for g in github if g.split(" ", 1)[1].startswith("file=tests/provenance/torch_modules.py,")]
        assert len(on_python) == len(on_model) == len(diags)
        assert all(f",line={line}," in g for g in on_python)


def test_no_python_line_outside_the_repository(exported: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:  # fmt: skip
    """Run from another folder (a repository without the modelling code): the finding still names the frame, but
    github annotates no line of a file the repository does not have, and SARIF gives its absolute URI."""
    monkeypatch.chdir(tmp_path)
    diags = lint_binary(str(exported[("dynamo", "StridedConcat")]), Settings(root=str(ROOT)))
    github = format_github(diags)
    assert "torch_modules.py" not in github
    log = json.loads(format_sarif(diags))
    _valid_sarif(log)
    (result,) = log["runs"][0]["results"]
    (rel,) = result["relatedLocations"]
    assert rel["physicalLocation"]["artifactLocation"] == {"uri": MODULES.as_uri()}
    assert os.path.relpath(MODULES).startswith("..")
