"""The README and docs/: a README that fits on a page, links that lead somewhere, no issue numbers a reader cannot
see, and the output they show is what graphlsp prints."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def test_the_readme_fits_on_a_page() -> None:
    assert len(README.read_text().splitlines()) <= 250


def test_no_issue_numbers_in_the_readme_or_docs() -> None:
    for path in [README, *DOCS]:
        text = path.read_text()
        found = re.findall(r"(?i)\bissues?\s*#?\d+|\bissues' closing notes|(?<![\w&])#\d+\b", text)
        assert found == [], f"{path.name}: {found}"


def test_relative_links_and_images_exist() -> None:
    for path in [README, *DOCS]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
            if "://" in target:
                continue
            assert (path.parent / target).exists(), f"{path.name}: {target}"
    assert (ROOT / "docs" / "images" / "editor.png").read_bytes().startswith(b"\x89PNG")


def test_the_wheel_command_builds_graphlsp_alone() -> None:
    text = "".join(p.read_text() for p in [README, *DOCS, *(ROOT / "editors").glob("*/README.md")])
    commands = re.findall(r"pip wheel [^\n#]*", text)
    assert commands and all("--no-deps" in c for c in commands), commands


def test_the_readmes_check_output_is_what_graphlsp_prints() -> None:
    block = README.read_text().split("$ graphlsp check --format concise examples/broken.onnxtxt\n", 1)[1]
    shown = [line for line in block.split("```", 1)[0].splitlines() if line != "..."]
    out = subprocess.run([sys.executable, "-m", "graphlsp.cli", "check", "--no-cache", "--format", "concise",
                          "examples/broken.onnxtxt"], cwd=ROOT, capture_output=True, text=True).stdout  # fmt: skip
    assert shown and all(line in out.splitlines() for line in shown), (shown, out)


def test_docs_rules_lists_every_rule() -> None:
    from graphlsp.lint.rules import RULES

    text = (ROOT / "docs" / "rules.md").read_text()
    for r in RULES.values():
        assert f"| {r.code} | {r.name} | {r.severity} | {r.summary} |" in text, r.code
