"""The graph page: one self-contained HTML file (styles, elkjs and the page's script inlined; no network).

With data the page draws that graph as it loads (`graphlsp graph`); without, it waits for the editor to send one
(VS Code's webview posts `{"type": "graph", "data": ...}`).
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from typing import Any

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<title>{title} — graphlsp</title>
<style>{css}</style>
</head>
<body>
<header>
<h1 id="title">{title}</h1>
<input id="search" type="search" placeholder="search nodes and values" spellcheck="false">
<button id="fit" title="the whole graph in the window">fit</button>
<button id="collapse" title="collapse every group">collapse</button>
<span id="stats">laying out…</span>
</header>
<div id="crumbs"></div>
<div id="model-problems" hidden></div>
<div id="error" hidden></div>
<main>
<svg id="graph" xmlns="http://www.w3.org/2000/svg">
<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto">
<path d="M0,0L8,4L0,8z"/></marker></defs>
<g id="layer"></g>
</svg>
<div id="results" hidden></div>
<aside id="panel" hidden></aside>
</main>
<script type="application/json" id="graph-data">{data}</script>
<script nonce="{nonce}">{elk}</script>
<script nonce="{nonce}">{page}</script>
</body>
</html>
"""


POLICY = "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; img-src data:; font-src data:"


@cache
def _asset(name: str) -> str:
    return resources.files("graphlsp.graphview").joinpath("assets", name).read_text(encoding="utf-8")


def _script(text: str) -> str:
    """Script text safe inside a <script> element: no `</script` or `<!--` ends or changes it (both only occur
    in the scripts' strings and regular expressions, where `<\\/` and `<\\!` mean the same)."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def page(graph: dict[str, Any] | None) -> str:
    """The page; with `graph` (graphview.graph_json) embedded, else a shell the editor sends the graph to."""
    # every "<" of the JSON is inside a string, where \u003c says the same: nothing in it can end the element
    data = "" if graph is None else json.dumps(graph, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")
    title = _html_text(str(graph.get("title") or "graph")) if graph is not None else "graph"
    # a Content-Security-Policy: only the page's own two scripts run (their nonce is new for every page), nothing
    # is fetched; names are escaped already, the policy keeps it so should one ever slip through
    nonce = os.urandom(18).hex()
    return TEMPLATE.format(title=title, css=_asset("page.css"), data=data, elk=_script(_asset("elk.js")),
                           page=_script(_asset("page.js")), nonce=nonce, policy=POLICY.format(nonce=nonce))  # fmt: skip
