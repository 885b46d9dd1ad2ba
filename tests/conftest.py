"""Shared fixtures: the repository's paths, the example files and the benchmark models; and `missing`, how a test
that needs something not here (`../shared`, the npm registry, node, Neovim) says so: a skip with the reason named,
except in CI (`CI=true`), where a missing resource is a failure."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# ../shared beside the repository: real exporter models (realworld/), the large benchmark models (bench/), the SARIF
# schema (schemas/) and tools (tools/). CI has it; a clone without it runs the rest and names each skip.
SHARED = ROOT.parent / "shared"
SHARED_BENCH = SHARED / "bench"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing(reason: str) -> NoReturn:
    """The test needs something that is not here: skip, naming it; in CI (CI=true) fail instead."""
    if in_ci():
        pytest.fail(f"CI=true and a resource is missing: {reason}", pytrace=False)
    pytest.skip(reason)


def needs(present: object, reason: str) -> pytest.MarkDecorator:
    """`missing` as a mark, for a test or a module (`pytestmark`): `needs(MODELS, "../shared/realworld ...")`."""
    return pytest.mark.needs(present=bool(present), reason=reason)


_OFFLINE = ("connection", "network is unreachable", "temporary failure in name resolution", "could not resolve",
            "no matching distribution", "could not find a version that satisfies")


def offline(log: str) -> bool:
    """Does pip's output say the package index could not be reached (rather than that something failed)?"""
    low = log.lower()
    return any(words in low for words in _OFFLINE)


def load_tool(name: str) -> ModuleType:
    """tools/NAME.py as a module (tools/ is no package), registered as NAME."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def shared(*parts: str) -> Path:
    """A path under ../shared, or `missing` when it is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        missing(f"{shared_reason(*parts)}")
    return path


def shared_reason(*parts: str) -> str:
    return f"../shared/{'/'.join(parts)} is not here ({SHARED}: real models and benchmarks beside the repository)"


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "needs(present, reason): skip with the reason when absent (fail in CI)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        if not mark.kwargs["present"]:
            missing(mark.kwargs["reason"])


def example_texts() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.onnxtxt"))}


@pytest.fixture(scope="session")
def gpt_l24_text() -> str:
    path = SHARED_BENCH / "gpt_L24.onnxtxt"
    if not path.exists():
        from bench.models import generate_gpt

        return generate_gpt(24)
    return path.read_text(encoding="utf-8")
