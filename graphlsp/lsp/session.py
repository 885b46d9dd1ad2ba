"""The session: initialize (the editor's initializationOptions, the once-per-process warm-up), and the editor's
settings (workspace/configuration, workspace/didChangeConfiguration), on top of each project's `[tool.graphlsp]`.
A change of settings sends every open document's diagnostics again and has the editor ask again for what depends
on them."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types as lsp

from graphlsp.analysis import warm_up
from graphlsp.lsp.diagnostics import publish_if_latest
from graphlsp.lsp.workspace import GraphLspServer, refresh_support

log = logging.getLogger("graphlsp.lsp")


async def initialize(ls: GraphLspServer, params: lsp.InitializeParams) -> None:
    ls.loop = asyncio.get_running_loop()
    if isinstance(params.initialization_options, dict):
        ls.options = dict(params.initialization_options.get("graphlsp", params.initialization_options))
    try:  # the once-per-process costs, paid before the client sends its first document
        await asyncio.get_running_loop().run_in_executor(ls.worker, warm_up)
    except Exception:
        log.exception("warm-up failed")


async def _fetch_configuration(ls: GraphLspServer) -> None:
    caps = getattr(ls.protocol, "client_capabilities", None)
    if not getattr(getattr(caps, "workspace", None), "configuration", False):
        return
    try:
        result = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="graphlsp")])
        )
    except Exception:
        log.exception("workspace/configuration failed")
        return
    if result and isinstance(result[0], dict):
        ls.options = {**ls.options, **result[0]}
        ls.forget_settings()


async def initialized(ls: GraphLspServer, params: lsp.InitializedParams) -> None:
    await _fetch_configuration(ls)


async def configuration_changed(ls: GraphLspServer, params: lsp.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get("graphlsp"), dict):
        ls.options = {**ls.options, **settings["graphlsp"]}
        ls.forget_settings()
    else:
        await _fetch_configuration(ls)
    for state in list(ls.docs.values()):
        await publish_if_latest(ls, state, state.version)
    if ls.pull_client and refresh_support(ls, "diagnostics"):
        ls.workspace_diagnostic_refresh(None)
    if refresh_support(ls, "inlayHint"):
        ls.workspace_inlay_hint_refresh(None)  # hints depend on the settings: have the editor ask again
