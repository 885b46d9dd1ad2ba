"""Safe fixes on a binary model, written as a binary: only what the rule names changes.

Two rules have a fix a binary can take: GL210 (an initializer nothing reads) removes that initializer; GL315 on a
`value_info` entry (an exporter's annotation that inference contradicts, at the sizes `check` is given) removes
that entry, every copy of it. The rest of the file is the same protobuf messages (weights untouched, external data
references kept).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlsp.lint.config import Settings

if TYPE_CHECKING:
    from graphlsp.graph.core import Model
    from graphlsp.graph.findings import Finding

FIXABLE = {"GL210", "GL315"}


def fix_binary(path: str, settings: Settings) -> tuple[bytes | None, int]:
    """The fixed model's bytes (None when nothing changes) and how many findings the fixes remove."""
    from onnx import ModelProto

    from graphlsp.binary.read import read_model
    from graphlsp.files import read_regular

    model, findings = read_model(path)
    unused = {f.value for f in findings if f.code == "GL210" and f.value and settings.enabled(f.code, path)}
    wrong = _contradicted(model, findings, settings) if settings.enabled("GL315", path) else set()
    if not unused and not wrong:
        return None, 0
    proto = ModelProto()
    proto.ParseFromString(read_regular(path))
    graph = proto.graph
    used = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    keep = [t for t in graph.initializer if t.name not in unused or t.name in used]
    removed = len(graph.initializer) - len(keep)
    if removed:
        del graph.initializer[:]
        graph.initializer.extend(keep)
    infos = [vi for vi in graph.value_info if vi.name not in wrong]
    dropped = {vi.name for vi in graph.value_info} & wrong
    if dropped:
        del graph.value_info[:]
        graph.value_info.extend(infos)
    if not removed and not dropped:
        return None, 0
    return proto.SerializeToString(), removed + len(dropped)


def _contradicted(model: Model, findings: list[Finding], settings: Settings) -> set[str]:
    """The main graph's value_info entries that inference contradicts (at the sizes the settings bind, as `check`
    reports them)."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.infer.contracts import condition_findings
    from graphlsp.infer.declared import contradicted_annotations

    analysis = ModelAnalysis(model, findings, settings.fold_size_cap, settings.sizes)
    raw = [*analysis.refiner.findings(), *condition_findings(analysis.refiner)]
    return {f.detail[len("output "):] for f in contradicted_annotations(raw, model)}
