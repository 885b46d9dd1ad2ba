"""A node's Python origin in words: the related information a finding carries, and the hover's lines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphlsp.provenance.trace import NodeSource, of_node

if TYPE_CHECKING:
    from graphlsp.graph.core import Node, NodeOrigin
    from graphlsp.provenance.locate import Sources
    from graphlsp.provenance.trace import Frame

CODE_LIMIT = 120  # characters of a code line shown


def _code(frame: Frame, sources: Sources | None) -> str:
    """The frame's code line: the trace's, else the file's when it may be read."""
    code = frame.code
    if not code and sources is not None:
        place = sources.place(frame.file)
        text = sources.line(place, frame.line) if place is not None else None
        code = text.strip() if text else ""
    return code if len(code) <= CODE_LIMIT else code[: CODE_LIMIT - 1] + "…"


def made_by(frame: Frame, sources: Sources | None) -> str:
    """`made by `model.py:12` `y = x.reshape(2, -1)``."""
    code = _code(frame, sources)
    where = f"made by `{frame.basename}:{frame.line}`"
    return f"{where} `{code.replace('`', chr(39))}`" if code else where


def related(node: Node, sources: Sources, origin: NodeOrigin | None = None) -> list[dict[str, Any]]:
    """A finding's related information from its node's Python origin: the chosen frame, as a location when the
    file is on this machine (`file` None otherwise; `origin` is the path the exporter wrote)."""
    src = of_node(node, origin)
    frame = src.frame if src is not None else None
    if frame is None:
        return []
    place = sources.place(frame.file)
    return [{"message": made_by(frame, sources), "file": place.path if place is not None else None,
             "line": frame.line, "col": 1, "origin": frame.file}]  # fmt: skip


def hover(node: Node, sources: Sources | None, origin: NodeOrigin | None = None) -> str:
    """Markdown: where the node was made, its module, and the whole stack (innermost first)."""
    src = of_node(node, origin)
    if src is None:
        return ""
    return hover_of(src, sources)


def definition(node: Node, sources: Sources, origin: NodeOrigin | None = None) -> tuple[str, int] | None:
    """The file and 1-based line of the frame that made the node, when the file is on this machine."""
    src = of_node(node, origin)
    frame = src.frame if src is not None else None
    place = sources.place(frame.file) if frame is not None else None
    return (place.path, frame.line) if place is not None and frame is not None else None


def hover_of(src: NodeSource, sources: Sources | None) -> str:
    lines = []
    frame = src.frame
    if frame is not None:
        lines.append(made_by(frame, sources))
        if sources is not None:
            place = sources.place(frame.file)
            if place is None:
                lines[-1] += f" (`{frame.file}` is not in this workspace; a `path-map` setting maps it)"
            elif frame.code and place.readable:
                now = sources.line(place, frame.line)
                if now is not None and now.strip() != frame.code.strip():
                    lines[-1] += " (the file has changed since the export)"
    if src.module_path:
        cls = src.module_class.rsplit(".", 1)[-1]
        lines.append(f"module `{src.module_path}`" + (f" (`{cls}`)" if cls else ""))
    if src.frames:
        stack = [f"- `{f.basename}:{f.line}` in `{f.function or '?'}`" + (" ◀" if i == src.chosen else "")
                 for i, f in reversed(list(enumerate(src.frames)))]  # fmt: skip
        lines.append("Python stack (innermost first):\n" + "\n".join(stack))
    return "\n\n".join(lines)
