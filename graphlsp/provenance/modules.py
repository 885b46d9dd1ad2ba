"""The module hierarchy of a model's nodes (from their scopes, `trace.NodeSource.modules`): the path of names a
node sits under, and the nodes of a graph nested by module, run by run in the graph's order (the outline)."""

from __future__ import annotations


def scope_parts(modules: list[tuple[str, str]]) -> list[str]:
    """Modules (NodeSource.modules) as names below each other: `encoder`, `layers.0`, `attn` for
    encoder.layers.0.attn (a module's name relative to its parent's)."""
    out = []
    parent = ""
    for fqn, _ in modules:
        if not fqn:
            continue
        out.append(fqn[len(parent) + 1 :] if parent and fqn.startswith(parent + ".") else fqn)
        parent = fqn
    return out


class ModuleGroup:
    """A run of consecutive nodes inside one module: `name` (relative to the enclosing group's), `path` (the
    qualified name), `cls` (its class, "" when unknown), `children` (groups and node indices, in order)."""

    __slots__ = ("name", "path", "cls", "children")

    def __init__(self, name: str, path: str, cls: str) -> None:
        self.name, self.path, self.cls = name, path, cls
        self.children: list[ModuleGroup | int] = []

    def __repr__(self) -> str:
        return f"ModuleGroup({self.path!r}, {self.children!r})"


def nest(chains: list[list[tuple[str, str]] | None]) -> list[ModuleGroup | int]:
    """Node indices 0..n-1 nested by their module chains ((qualified name, class), outermost first; the root
    module ""): consecutive nodes of one module share its group; a module met again after others is a new group,
    so that each group covers one stretch of the graph. A node whose modules are unknown (None: an exporter's
    unscoped Constant_12) stays in the group it is met in."""
    root: list[ModuleGroup | int] = []
    stack: list[ModuleGroup] = []
    for i, chain in enumerate(chains):
        if chain is None:
            (stack[-1].children if stack else root).append(i)
            continue
        mods = [(fqn, cls) for fqn, cls in chain if fqn]
        k = 0
        while k < len(stack) and k < len(mods) and stack[k].path == mods[k][0]:
            k += 1
        del stack[k:]
        for fqn, cls in mods[k:]:
            parent = stack[-1].path if stack else ""
            name = fqn[len(parent) + 1 :] if parent and fqn.startswith(parent + ".") else fqn
            group = ModuleGroup(name, fqn, cls)
            (stack[-1].children if stack else root).append(group)
            stack.append(group)
        (stack[-1].children if stack else root).append(i)
    return root
