"""Fixes for findings, as text edits: the editor's quick fixes and `graphlsp check --fix` use the same ones.

Each fix touches only the text it must change; everything else stays byte-identical. As in ruff, a fix is safe
when it changes only what its rule names and keeps the model's meaning (`--fix` applies those): removing a node
whose outputs nothing reads, its comment kept. Every other fix is unsafe, applied by `--fix --unsafe-fixes` or
chosen in the editor: one that guesses (an op name, an opset version to import), rewrites declarations or folds
constants, or would delete a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphlsp.analysis import Analysis
from graphlsp.graph import ops
from graphlsp.graph.core import Node
from graphlsp.graph.findings import Finding
from graphlsp.infer.types import type_str
from graphlsp.syntax import tree as t
from graphlsp.syntax.lower import text_graph
from graphlsp.syntax.positions import line_end_at, line_start_at

Edit = tuple[int, int, str]


@dataclass(slots=True)
class Fix:
    title: str
    edits: list[Edit]
    safe: bool = True  # applied by `--fix` (unsafe ones only on request / in the editor)


def _node_at(a: Analysis, offset: int) -> Node | None:
    """The innermost node whose statement contains offset (a subgraph's node lies inside its owner's span)."""
    hits = [(n, s) for g in a.model.graphs() for n in g.nodes if (s := n.span) is not None and s[0] <= offset <= s[1]]
    best = min(hits, key=lambda h: h[1][1] - h[1][0], default=None)
    return best[0] if best is not None else None


def _unknown_op(a: Analysis, f: Finding) -> list[Fix]:
    node = _node_at(a, f.start)
    if node is None:
        return []
    candidates = ops.op_names(node.domain) + [fn.name for fn in a.model.functions.values() if fn.domain == node.domain]
    hint = ops.closest(node.op_type, candidates)
    if hint is None:
        return []
    if node.op_span is None:
        return []
    s, e = node.op_span
    return [Fix(f"Replace '{node.op_type}' with '{hint}'", [(s, e, hint)], safe=False)]


def _missing_import(a: Analysis, f: Finding) -> list[Fix]:
    """Unsafe: the version imported (1) is a guess, and it decides what every op of the domain means."""
    node = _node_at(a, f.start)
    if node is None or not node.domain:
        return []
    entry = f'"{node.domain}" : 1'
    title = f"Import {node.domain} (version 1)"
    header = a.doc.header()
    if header is None:
        return [Fix(title, [(0, 0, f'<ir_version: 10, opset_import: ["" : 21, {entry}]>\n')], False)]
    o = header.origin
    for e in header.value:
        if e.key.value == "opset_import" and isinstance(e.value, list):
            if e.value:
                return [Fix(title, [(o + e.value[-1].end, o + e.value[-1].end, f", {entry}")], False)]
            return [Fix(title, [(o + e.end - 1, o + e.end - 1, entry)], False)]
    last = header.value[-1]
    return [Fix(title, [(o + last.end, o + last.end, f", opset_import: [{entry}]")], False)]


_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|#[^\r\n]*')


def _has_comment(text: str) -> bool:
    return any(m.group().startswith("#") for m in _COMMENT.finditer(text))


def _unused(a: Analysis, f: Finding) -> list[Fix]:
    """Remove the node: its line when nothing else is on it; a comment after it stays where it was. Safe (the
    graph's outputs do not change) unless a comment lies inside the node's statement."""
    node = _node_at(a, f.start)
    if node is None or any(v is not None and v.is_used for v in node.outputs):
        return []
    text = a.doc.text
    if node.span is None:
        return []
    s, e = node.span
    line_start = line_start_at(text, s)
    line_end, next_line = line_end_at(text, e)
    before, after = text[line_start:s], text[e:line_end]
    if not before.strip() and not after.strip():
        s, e = line_start, next_line
    elif not before.strip() and after.lstrip().startswith("#"):
        e += len(after) - len(after.lstrip())  # the comment moves to where the node began, on its own line
    safe = not _has_comment(text[s:e])
    return [Fix(f"Remove the unused {node.op_type} node", [(s, e, "")], safe)]


def _declared_conflict(a: Analysis, f: Finding) -> list[Fix]:
    for g in a.model.graphs():
        tg = text_graph(g)
        if tg is None:
            continue
        sig, piece = tg.sig, tg.piece
        vis = [*sig.outputs, *(sig.value_infos if isinstance(sig, t.GraphSig) else [])]
        for vi in vis:
            if vi.type is not None and piece.origin + vi.start == f.start:
                value = g.lookup(vi.name.value)
                ty = a.refiner.type_of(value) if value is not None else None
                if ty is None:
                    return []
                o = piece.origin
                return [Fix(f"Declare '{vi.name.value}' as {type_str(ty)}",
                            [(o + vi.type.start, o + vi.type.end, type_str(ty))], safe=False)]  # fmt: skip
    return []


def _fold(a: Analysis, f: Finding) -> list[Fix]:
    from graphlsp.lint.fold import fold_edits

    plan = a.fold_plan()
    node = next((n for n in plan.folds if (n.op_span or (-1, -1))[0] == f.start), None)
    if node is None:
        return []
    part = plan.component(node)
    edits = fold_edits(a, part).edits
    fixes = [Fix(f"Fold this constant subgraph ({len(part)} node{'s' if len(part) != 1 else ''}) into Constants",
                 edits, safe=False)] if edits else []  # fmt: skip
    if len(plan.folds) > len(part):
        every = fold_all(a)
        if every is not None:
            fixes.append(every)
    return fixes


def fold_all(a: Analysis) -> Fix | None:
    """"Fold all constants": every maximal constant subgraph of the file, or None when nothing folds."""
    from graphlsp.lint.fold import fold_edits

    plan = a.fold_plan()
    edits = fold_edits(a).edits if plan.folds else []
    if not edits:
        return None
    n = len(plan.folds)
    return Fix(f"Fold every constant subgraph in the file ({n} node{'s' if n != 1 else ''})", edits, safe=False)


_FIXERS = {"GL204": _unknown_op, "GL205": _missing_import, "GL207": _unused, "GL315": _declared_conflict,
           "GL401": _fold, "GL402": _fold}  # fmt: skip


def fixes_for(a: Analysis, f: Finding, targets: list[str] | None = None) -> list[Fix]:
    """The fixes of a finding; `targets` (the settings') for the deployment rules' (GL701: Casts)."""
    if f.code == "GL701":
        from graphlsp.lint.cast_fix import cast_fixes

        return [Fix(title, edits, safe=False) for title, edits in cast_fixes(a, f, targets or [])]
    fixer = _FIXERS.get(f.code)
    return fixer(a, f) if fixer is not None else []


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (any order) to text."""
    out = text
    for s, e, new in sorted(edits, key=lambda x: (x[0], x[1]), reverse=True):
        out = out[:s] + new + out[e:]
    return out
