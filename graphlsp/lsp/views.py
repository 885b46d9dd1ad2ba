"""Binary models in the editor: which documents are views of a `.onnx` file, the view's diagnostics (what
`graphlsp check` says of the binary, on the view's lines), and the two commands that write files beside the model
(save the model as ONNX text, fold its constants into a new binary).

A view document is named by the model's own `file:` URI (Neovim: the buffer of `model.onnx`, filetype onnxtxt) or
by the same path under the `graphlsp-view:` scheme (VS Code's virtual document). Its text is never the client's:
the server reads the file and renders it (`graphlsp.view.render`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from graphlsp.analysis import Analysis
from graphlsp.graph.findings import Finding
from graphlsp.lint.diagnostics import Diagnostic
from graphlsp.lint.rules import rule
from graphlsp.view import HEADER, BinaryView

SCHEME = "graphlsp-view"
RENDER = "graphlsp.renderView"
SAVE_AS_TEXT = "graphlsp.saveViewAsText"
FOLD_BINARY = "graphlsp.foldBinary"
RENDER_REVISION = "graphlsp.renderRevision"  # a model at a git revision, for "Compare with HEAD"
VIEW_CHANGED = "graphlsp/viewChanged"  # server -> client: {uri, path}: render the view again (the file changed)


def fs_path(uri: str) -> str | None:
    """The file a `file:` or `graphlsp-view:` URI names (absolute, normalised), else None."""
    from pygls.uris import to_fs_path

    if uri.startswith(SCHEME + ":"):
        uri = "file" + uri[len(SCHEME) :]
        if not uri.startswith("file://"):  # graphlsp-view:/abs/path (VS Code writes no authority)
            uri = "file://" + uri[len("file:") :]
    try:
        path = to_fs_path(uri)
    except Exception:
        return None
    return os.path.normpath(os.path.abspath(path)) if path else None


def view_path(uri: str) -> str | None:
    """The binary model a document shows, when the document is a view of one."""
    if uri.startswith(SCHEME + ":") or (uri.startswith("file:") and uri.lower().endswith(".onnx")):
        return fs_path(uri)
    return None


def command_target(args: tuple[Any, ...]) -> tuple[str | None, dict[str, Any]]:
    """A command's model and options: `{"uri": ...}` or `{"path": ...}` (with options beside), or a plain URI or
    path string."""
    first = args[0] if args else None
    opts: dict[str, Any] = dict(first) if isinstance(first, dict) else {}
    where = first if isinstance(first, str) else opts.get("uri") or opts.get("path")
    if not isinstance(where, str) or not where:
        return None, opts
    if "://" in where or where.startswith(SCHEME + ":"):
        return fs_path(where), opts
    return os.path.normpath(os.path.abspath(os.path.expanduser(where))), opts


def unreadable(path: str, error: OSError, cap: int) -> BinaryView:
    """The view of a file that cannot be read at all (gone, no permission): it says why, and is rendered again
    at the next look (its stamp never matches)."""
    message = f"cannot read this file: {error.strerror or error}"
    text = HEADER.format(name=Path(path).name) + "# " + message + "\n"
    return BinaryView(path, (-1, -1), text, Analysis(text, cap), [Finding("GL106", message, 0, 0)], message)


def diagnostics(view: BinaryView, path: str, sources: Any = None) -> list[Diagnostic]:
    """`graphlsp check` on the binary (before settings and suppressions), placed on the view's lines; with
    `sources` (graphlsp.provenance.locate.Sources), a finding on a node the exporter says a Python line made
    carries that line as related information."""
    lines = view.analysis.doc.lines
    size = len(view.text)
    out = []
    for f in view.all_findings():
        r = rule(f.code)
        start = min(max(f.start, 0), size)
        end = min(max(start, f.end), size)
        (line, col), (end_line, end_col) = lines.position(start), lines.position(end)
        related = []
        for msg, s, e in f.related:
            if s >= 0:
                rl, rc = lines.position(min(s, size))
                related.append({"message": msg, "line": rl + 1, "col": rc + 1, "start": min(s, size),
                                "end": min(max(s, e), size)})  # fmt: skip
        d = Diagnostic(path, line + 1, col + 1, end_line + 1, end_col + 1, f.severity or r.severity, f.code, r.name,
                       f.message, start, end, related, detail=f.detail)  # fmt: skip
        if f.node is not None:
            d.graph, d.node, d.node_index, d.op = f.node.graph.path, f.node.name, f.node.index, f.node.qualified_op
        maker = f.node or f.cause
        origin = view.origin_of(maker) if maker is not None and sources is not None else None
        if origin is not None:
            from graphlsp.provenance.describe import related as python_related

            d.related += python_related(maker, sources, origin)  # type: ignore[arg-type]
        out.append(d)
    return out


def beside(path: str, suffix: str) -> str:
    """`dir/model.onnx` -> `dir/model<suffix>`."""
    p = Path(path)
    return str(p.with_name((p.name[: -len(".onnx")] if p.name.lower().endswith(".onnx") else p.name) + suffix))


def model_text(path: str) -> str:
    """The whole model as ONNX text, every tensor's data written out (external data stays a reference to its
    file, which the text finds when it sits beside the model): what `graphlsp convert model.onnx -` prints."""
    from graphlsp.binary.read import read_model
    from graphlsp.syntax.printer import print_model

    model, _ = read_model(path)
    return print_model(model, data="full")


def fold_binary(path: str, output: str, cap: int) -> tuple[int, int, int]:
    """`graphlsp fold model.onnx -o output` (graphlsp/cli.py): every maximal constant subgraph of the binary
    becomes Constant nodes, the rest of the model is the same protobuf messages; written to `output` (beside the
    model: external data stays where it is) only when something folds. Returns (folded, constants, removed)."""
    from graphlsp.lint.fold import fold_binary as fold_file

    data, r, _ = fold_file(path, cap)
    if r.folded:
        from graphlsp.files import write_file

        write_file(output, data)  # a link planted at `output` is replaced, never written through
    return r.folded, r.constants, r.removed
