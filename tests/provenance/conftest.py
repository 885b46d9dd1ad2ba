"""The torch exports the provenance tests share, made once per session (tests/provenance/exports.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from exports import export_all


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    return export_all(tmp_path_factory.mktemp("exports"))
