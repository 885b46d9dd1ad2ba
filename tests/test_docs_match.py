"""The docs say what the program does: every command has its section in docs/cli.md, example findings show the
severity word as `check` prints it, the kernel-table cache file is named as it is written, `fit` is described as
it works, the rules are listed in code order, and every timing says when (and on what) it was measured."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphlsp.cli import main
from tests.conftest import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
_FINDING = re.compile(r"(?:^|\s)(?:[\w./-]+\.(?:onnx|onnxtxt|onnxtext|onnxop))(?::\d+:\d+|: [^:\n]*?)?: "
                      r"(?:(error|warning|info|hint): )?(GL\d{3}) ")  # fmt: skip
_TIME = re.compile(r"\b\d+(\.\d+)? ?(ms|s|µs|us)\b(?!\w)")
_DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b\d{1,2} (?:January|February|March|April|May|June|July|August|"
                   r"September|October|November|December) 20\d\d\b")  # fmt: skip


def test_every_command_has_its_section_in_cli_md() -> None:
    from graphlsp.cli_parser import _COMMANDS

    text = (ROOT / "docs" / "cli.md").read_text()
    listing = text.split("```", 2)[1]
    for command in _COMMANDS:
        assert re.search(rf"^## .*`graphlsp {command}", text, re.M), command
        assert f"graphlsp {command}" in listing, command


def test_example_findings_show_the_severity_word() -> None:
    """`check` prints `error: GL701 ...`; a doc's example prints the same."""
    for path in DOCS:
        for block in re.findall(r"```\n(.*?)```", path.read_text(), re.S):
            for m in _FINDING.finditer(block):
                assert m.group(1) is not None, f"{path.name}: {m.group(0)!r}"


def test_the_kernel_table_cache_is_named_as_it_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    from graphlsp.runtime import kernels

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GRAPHLSP_ORT_TABLES", raising=False)
    kernels.installed_table.cache_clear()
    try:
        assert kernels.installed_table() is not None
    finally:
        kernels.installed_table.cache_clear()
    found = kernels.installed_version()
    assert found is not None
    dist, version = found
    (written,) = [p.name for p in (tmp_path / "graphlsp").iterdir() if version in p.name]
    documented = written.replace(version, "<version>").replace(dist, "onnxruntime")
    assert f"`~/.cache/graphlsp/{documented}`" in (ROOT / "docs" / "deployment.md").read_text(), documented


def test_fit_is_described_as_it_works() -> None:
    """tests/graphview/test_graph_view_fit.py shows fit fitting both; the page's doc says so."""
    text = " ".join((ROOT / "docs" / "graph.md").read_text().split())
    assert "**fit** shows the whole graph, its width and its height" in text


def test_rules_are_listed_in_code_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == sorted(listed) and len(listed) > 40
    documented = re.findall(r"^\| (GL\d{3}) \|", (ROOT / "docs" / "rules.md").read_text(), re.M)
    assert documented == listed


def test_timings_say_when_they_were_measured() -> None:
    """A paragraph with a timing has a date in it, in its section's heading, or (a table) in the paragraph before."""
    for path in [ROOT / "README.md", *DOCS]:
        text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
        heading_dated, before = False, ""
        for para in re.split(r"\n\s*\n", text):
            if para.startswith("#"):
                heading_dated = bool(_DATE.search(para))
            timed = _TIME.search(re.sub(r"a pause of [\d.]+ s", "", para))  # a setting, not a measurement
            dated = _DATE.search(para) or heading_dated or (para.startswith("|") and _DATE.search(before))
            assert not timed or dated, f"{path.name}: {para[:200]}"
            before = para
