"""Editor tests: print why one was skipped (no node, no Neovim) at the end of the run, whatever -r says."""

from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    mine = [r for r in terminalreporter.stats.get("skipped", []) if "tests/editors/" in r.nodeid.replace("\\", "/")]
    if not mine:
        return
    terminalreporter.section("editor tests skipped")
    for r in mine:
        reason = r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
        terminalreporter.line(f"{r.nodeid}: {reason.removeprefix('Skipped: ')}")
