"""Safe fixes on a binary model, written as a binary: only what the rule names changes.

Today one rule has a fix a binary can take: GL210 (an initializer nothing reads) removes that initializer. The
rest of the file is the same protobuf messages (weights untouched, external data references kept).
"""

from __future__ import annotations

from graphlsp.lint.config import Settings

FIXABLE = {"GL210"}


def fix_binary(path: str, settings: Settings) -> tuple[bytes | None, int]:
    """The fixed model's bytes (None when nothing changes) and how many findings the fixes remove."""
    from onnx import ModelProto

    from graphlsp.binary.read import read_model
    from graphlsp.files import read_regular

    _, findings = read_model(path)
    unused = {f.value for f in findings if f.code in FIXABLE and f.value and settings.enabled(f.code, path)}
    if not unused:
        return None, 0
    proto = ModelProto()
    proto.ParseFromString(read_regular(path))
    graph = proto.graph
    used = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    keep = [t for t in graph.initializer if t.name not in unused or t.name in used]
    removed = len(graph.initializer) - len(keep)
    if not removed:
        return None, 0
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return proto.SerializeToString(), removed
