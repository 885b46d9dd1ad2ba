"""onnx's schema history as graphlsp keeps it (graphlsp/graph/ops.py): read from onnx once per onnx build, then from
the user's cache; the cached table is onnx's, and a damaged cache file is read from onnx again."""

from __future__ import annotations

from pathlib import Path

import onnx.defs
import pytest

from graphlsp.graph import ops


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ops._history.cache_clear()
    yield tmp_path
    ops._history.cache_clear()


def _onnx() -> dict[str, dict[str, list[tuple[int, bool]]]]:
    out: dict[str, dict[str, list[tuple[int, bool]]]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        dom = "" if s.domain == "ai.onnx" else s.domain
        out.setdefault(dom, {}).setdefault(s.name, []).append((s.since_version, s.deprecated))
    return {d: {k: sorted(v) for k, v in o.items()} for d, o in out.items()}


def test_the_cached_history_is_onnxs(fresh: Path) -> None:
    first = ops._history()
    [cached] = list(fresh.glob("graphlsp/onnx-history-*.marshal"))
    assert onnx.__version__ in cached.name
    ops._history.cache_clear()
    again = ops._history()  # from the file
    assert again == first == _onnx()
    assert ops.op_versions("Reshape", "") == [v for v in _onnx()[""]["Reshape"]]
    assert ops.known_domains() == set(_onnx())


@pytest.mark.parametrize("junk", [b"", b"\x00garbage", b"N"])  # N: marshal's None
def test_a_damaged_cache_file_is_read_again(fresh: Path, junk: bytes) -> None:
    ops._history()
    [cached] = list(fresh.glob("graphlsp/onnx-history-*.marshal"))
    cached.write_bytes(junk)
    ops._history.cache_clear()
    assert ops._history() == _onnx()
    assert cached.read_bytes() != junk  # written again
