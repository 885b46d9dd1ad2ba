"""The language server's modules import only the floors below them (pyproject.toml's layers contract for
graphlsp.lsp), type-checking imports included: lint-imports leaves those out (`exclude_type_checking_imports`), and
an `if TYPE_CHECKING:` import of a floor above is an import circle all the same."""

from __future__ import annotations

import tomllib

import grimp
import pytest

from tests.conftest import ROOT


def _lsp_contract() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    found = [c for c in config["contracts"] if c.get("containers") == ["graphlsp.lsp"]]
    assert len(found) == 1, "one layers contract inside graphlsp.lsp"
    return found[0]


def _layers(contract: dict[str, object]) -> list[grimp.Layer]:
    layers = contract["layers"]
    assert isinstance(layers, list)
    return [grimp.Layer(*(m.strip() for m in layer.split("|")), independent=True) for layer in layers]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("graphlsp", exclude_type_checking_imports=False, cache_dir=None)


def test_every_module_of_the_server_is_on_a_floor(graph: grimp.ImportGraph) -> None:
    placed = {m for layer in _layers(_lsp_contract()) for m in layer.module_tails}
    modules = {m.removeprefix("graphlsp.lsp.") for m in graph.find_children("graphlsp.lsp")}
    assert modules == placed


def test_no_import_goes_up_a_floor_type_checking_ones_included(graph: grimp.ImportGraph) -> None:
    illegal = graph.find_illegal_dependencies_for_layers(_layers(_lsp_contract()), containers={"graphlsp.lsp"})
    assert not illegal, sorted(f"{d.importer} -> {d.imported}" for d in illegal)


def test_an_import_up_a_floor_is_found(graph: grimp.ImportGraph) -> None:
    """The check can fail: an import of the server from a floor below (as an `if TYPE_CHECKING:` one would be) is
    found."""
    graph.add_import(importer="graphlsp.lsp.workspace", imported="graphlsp.lsp.server", line_number=1,
                     line_contents="from graphlsp.lsp.server import server  # under TYPE_CHECKING")  # fmt: skip
    try:
        illegal = graph.find_illegal_dependencies_for_layers(_layers(_lsp_contract()), containers={"graphlsp.lsp"})
        assert {(d.importer, d.imported) for d in illegal} == {("graphlsp.lsp.workspace", "graphlsp.lsp.server")}
    finally:
        graph.remove_import(importer="graphlsp.lsp.workspace", imported="graphlsp.lsp.server")
