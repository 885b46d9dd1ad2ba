"""The language clients the end-to-end tests of tests/lsp share (tests/lsp/clients.py): `vscode` (a push client),
`neovim` (a pull client), and `client`, each test run with both."""

from __future__ import annotations

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.clients import NEOVIM, SERVER, VSCODE, start


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def vscode(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, VSCODE)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def neovim(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, NEOVIM)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=["vscode", "neovim"])
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Every feature test runs twice: with a push client (VS Code's profile) and a pull client (Neovim's); the
    client's `profile` says which."""
    await start(lsp_client, VSCODE if request.param == "vscode" else NEOVIM)
    lsp_client.profile = request.param  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()
