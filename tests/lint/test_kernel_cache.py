"""The installed onnxruntime's kernel table as kept in the user's cache folder: read lazily, op by op, and the same
table the registry gives; a damaged or foreign file is ignored and written again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphlsp.runtime import installed, kernels


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder, the table caches cleared before and after."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GRAPHLSP_ORT_TABLES", raising=False)
    kernels.installed_table.cache_clear()
    kernels.table_for.cache_clear()
    yield tmp_path / "graphlsp"
    kernels.installed_table.cache_clear()
    kernels.table_for.cache_clear()


@pytest.fixture(scope="module")
def registry() -> dict[str, Any]:
    """The installed registry in the form the table was always used in (it was kept as JSON)."""
    got = installed.read_installed()
    assert got is not None
    return dict(json.loads(json.dumps(got)), format=kernels.FORMAT)


def _plain(table: dict[str, Any]) -> dict[str, Any]:
    """A table with its per-op entries decoded, as plain dicts."""
    return {**table,
            "providers": {p: {d: dict(ops.items()) for d, ops in domains.items()}
                          for p, domains in table["providers"].items()},
            "schemas": {d: dict(ops.items()) for d, ops in table["schemas"].items()}}  # fmt: skip


def _reads(monkeypatch: pytest.MonkeyPatch, registry: dict[str, Any]) -> list[int]:
    """Count the registry reads (a kept table is read without one)."""
    calls: list[int] = []

    def read() -> dict[str, Any]:
        calls.append(1)
        return json.loads(json.dumps(registry))

    monkeypatch.setattr(installed, "read_installed", read)
    return calls


def _kept(folder: Path) -> Path:
    files = list(folder.glob("onnxruntime*.kernels.marshal"))
    assert len(files) == 1
    return files[0]


def test_the_kept_table_is_the_registry_and_is_decoded_op_by_op(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                                registry: dict[str, Any]) -> None:  # fmt: skip
    reads = _reads(monkeypatch, registry)
    first = kernels.installed_table()
    assert first is not None and reads == [1]
    kernels.installed_table.cache_clear()
    table = kernels.installed_table()
    assert table is not None and reads == [1]  # from the cache folder this time
    conv = table["providers"]["cpu"][""]
    assert type(dict.__getitem__(conv, "Conv")) is bytes  # not decoded until read
    assert conv["Conv"] == registry["providers"]["cpu"][""]["Conv"]
    assert type(dict.__getitem__(conv, "Conv")) is list and type(dict.__getitem__(conv, "Relu")) is bytes
    assert conv.get("Relu") == registry["providers"]["cpu"][""]["Relu"] and conv.get("NoSuchOp") is None
    assert table["schemas"][""].get("Conv") == registry["schemas"][""]["Conv"]
    assert _plain(table) == registry == _plain(first)
    assert table["providers"]["cpu"][""] == registry["providers"]["cpu"][""]  # equality decodes what it compares


@pytest.mark.parametrize("damage", ["truncated", "flipped", "json", "empty", "other-format"])
def test_a_damaged_or_foreign_kept_table_is_ignored_and_written_again(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      registry: dict[str, Any],
                                                                      damage: str) -> None:  # fmt: skip
    reads = _reads(monkeypatch, registry)
    assert kernels.installed_table() is not None
    path = _kept(cache)
    good = path.read_bytes()
    bad = {
        "truncated": good[: len(good) // 2],
        "flipped": good[:-100] + bytes([good[-100] ^ 1]) + good[-99:],
        "json": json.dumps(registry).encode(),
        "empty": b"",
        "other-format": kernels.pack_table({**registry, "format": kernels.FORMAT + 1}),
    }[damage]
    path.write_bytes(bad)
    kernels.installed_table.cache_clear()
    table = kernels.installed_table()
    assert table is not None and reads == [1, 1]  # read from onnxruntime again
    assert _plain(table) == registry
    assert path.read_bytes() == good  # and kept again


def test_unpack_refuses_what_pack_did_not_write(registry: dict[str, Any]) -> None:
    packed = kernels.pack_table(registry)
    table = kernels.unpack_table(packed)
    assert table is not None and _plain(table) == registry
    assert kernels.unpack_table(packed[:-1]) is None
    assert kernels.unpack_table(b"x" + packed[1:]) is None
    assert kernels.unpack_table(kernels.pack_table({**registry, "format": 1})) is None


def test_a_check_reads_the_kept_table(cache: Path, monkeypatch: pytest.MonkeyPatch, registry: dict[str, Any]) -> None:
    """The verdicts from a kept table are those from the registry read afresh."""
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_text

    text = ('<ir_version: 10, opset_import: ["" : 21]>\n'
            "g (bfloat16[N] x, float[N] z) => (bfloat16[N] y, float[N] w) {\n  y = Abs (x)\n  w = Relu (z)\n}\n")
    reads = _reads(monkeypatch, registry)
    settings = Settings(targets=["onnxruntime:cpu"])
    fresh = [(d.code, d.message) for d in lint_text(text, "m.onnxtxt", settings)[1]]
    kernels.installed_table.cache_clear()
    kernels.table_for.cache_clear()
    kept = [(d.code, d.message) for d in lint_text(text, "m.onnxtxt", settings)[1]]
    assert reads == [1] and fresh == kept and any(code == "GL701" for code, _ in kept)


_MODULES_AFTER_CHECK = """
import sys, graphlsp.cli
try:
    graphlsp.cli.main(["check", "--no-cache", "--quiet", sys.argv[1]])
except SystemExit:
    pass
print(" ".join(sorted(sys.modules)))
"""


def test_a_check_without_the_cache_imports_no_json() -> None:
    """The kernel table is kept as marshal and the text output is no JSON: the json package (2 ms of imports) is
    not loaded (the table is kept by the first run)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    model = ROOT / "corpus" / "models" / "torchvision_ssdlite.onnx"
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _MODULES_AFTER_CHECK, str(model)], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()  # fmt: skip
    assert "graphlsp.lint.deployment" in out and "json" not in out
