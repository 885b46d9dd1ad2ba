"""Shared fixtures: the repository's paths, the example files and the benchmark models."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SHARED_BENCH = ROOT.parent / "shared" / "bench"


def example_texts() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.onnxtxt"))}


@pytest.fixture(scope="session")
def gpt_l24_text() -> str:
    path = SHARED_BENCH / "gpt_L24.onnxtxt"
    if not path.exists():
        from bench.models import generate_gpt

        return generate_gpt(24)
    return path.read_text(encoding="utf-8")
