"""A node's Python origin as its exporter wrote it: the stack of frames (outermost first), the frame a user would
fix, and the module path from the scopes.

Two writers are read. torch's dynamo exporter puts on every node `pkg.torch.onnx.stack_trace` (Python's traceback
lines: `File "/src/model.py", line 12, in forward` and the code line under it), `pkg.torch.onnx.name_scopes`
(`['', 'encoder', 'encoder.conv1', 'conv2d']`: each enclosing module's qualified name, then the FX node's) and
`pkg.torch.onnx.class_hierarchy` (the modules' classes). The TorchScript exporter writes, with `verbose=True`, the
frames in the doc_string (`/src/model.py(12): forward`, innermost first), and always the scopes in the node's name
(`/encoder/layers.0/attn/MatMul`). Nothing here is evaluated: the lists are read as quoted strings.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlsp.graph.core import Node, NodeOrigin

STACK_TRACE = "pkg.torch.onnx.stack_trace"
NAME_SCOPES = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY = "pkg.torch.onnx.class_hierarchy"
DOC_STRING = "doc_string"  # graph.core.ExportedNode's key for the node's doc_string

MAX_TEXT = 1 << 16  # characters of one metadata value read: an exporter's trace is a few KiB
MAX_FRAMES = 256


class Frame:
    """One Python frame: file as the exporter wrote it, 1-based line, function, and the code line when the
    trace has it."""

    __slots__ = ("file", "line", "function", "code")

    def __init__(self, file: str, line: int, function: str = "", code: str = "") -> None:
        self.file, self.line, self.function, self.code = file, line, function, code

    def __repr__(self) -> str:
        return f"Frame({self.file!r}, {self.line}, {self.function!r}, {self.code!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Frame):
            return NotImplemented
        return (self.file, self.line, self.function, self.code) == (other.file, other.line, other.function, other.code)

    __hash__ = None  # type: ignore[assignment]

    @property
    def basename(self) -> str:
        return self.file.replace("\\", "/").rsplit("/", 1)[-1]


class NodeSource:
    """What a node says of its Python origin. `frames` outermost first; `chosen` the index of the frame a user
    would fix (None when every frame is torch's, onnxscript's or the standard library's); `modules` the enclosing
    modules as (qualified name, class), outermost first, the root module's name ""."""

    __slots__ = ("frames", "chosen", "modules")

    def __init__(self, frames: list[Frame], modules: list[tuple[str, str]]) -> None:
        self.frames = frames
        self.modules = modules
        self.chosen = choose(frames)

    @property
    def frame(self) -> Frame | None:
        return self.frames[self.chosen] if self.chosen is not None else None

    @property
    def module_path(self) -> str:
        """The innermost module's qualified name (`encoder.layers.0.attn`), "" at the root or when unknown."""
        return self.modules[-1][0] if self.modules else ""

    @property
    def module_class(self) -> str:
        return self.modules[-1][1] if self.modules else ""


def of_node(node: Node, origin: NodeOrigin | None = None) -> NodeSource | None:
    """The node's Python origin, None when its exporter wrote none. `origin`: the node's own by default (a view
    of a binary gives the binary node's)."""
    meta = (origin or node.origin).metadata
    frames: list[Frame] = []
    found = dict(meta) if meta else {}
    trace = found.get(STACK_TRACE)
    if trace:
        frames = parse_stack_trace(trace)
    elif DOC_STRING in found:
        frames = parse_torchscript_doc(found[DOC_STRING])
    modules = _modules(node, found)
    if not frames and not modules:
        return None
    return NodeSource(frames, modules)


def modules_of(node: Node, origin: NodeOrigin | None = None) -> list[tuple[str, str]]:
    """The node's enclosing modules only (what an outline needs: the frames are not read)."""
    meta = (origin or node.origin).metadata
    return _modules(node, dict(meta) if meta else {})


def _modules(node: Node, found: dict[str, str]) -> list[tuple[str, str]]:
    scopes = found.get(NAME_SCOPES)
    if scopes:
        names = _strings(scopes)[:-1]  # the last is the FX node's own name
        classes = _strings(found.get(CLASS_HIERARCHY, ""))[:-1]
        if len(classes) != len(names):
            classes = [""] * len(names)
        # torch's stand-in for a node made outside any module (`_empty_nn_module_stack_from_metadata_hook`)
        modules = [("", "") if n.startswith(_NO_MODULE) else (n, c) for n, c in zip(names, classes, strict=True)]
        if modules:
            return modules
    if node.name and node.name.startswith("/"):
        return torchscript_scopes(node.name)
    return []


_NO_MODULE = "_empty_nn_module_stack"
_DYNAMO_FRAME = re.compile(r'\s*File "([^"\n]*)", line (\d+)(?:, in ([^\n]*))?')


def parse_stack_trace(text: str) -> list[Frame]:
    """Python traceback lines (`File "f.py", line 3, in forward` and the code line under it), outermost first."""
    frames: list[Frame] = []
    for raw in text[:MAX_TEXT].splitlines():
        m = _DYNAMO_FRAME.match(raw)
        if m is not None:
            if len(frames) >= MAX_FRAMES:
                break
            frames.append(Frame(m.group(1), int(m.group(2)), (m.group(3) or "").strip()))
        elif frames and not frames[-1].code and raw.strip():
            frames[-1].code = raw.strip()
    return frames


_TORCHSCRIPT_FRAME = re.compile(r"(.+)\((\d+)\): (.*)")


def parse_torchscript_doc(text: str) -> list[Frame]:
    """The TorchScript exporter's doc_string frames (`/src/m.py(12): forward`, innermost first), outermost first."""
    frames = []
    for raw in text[:MAX_TEXT].splitlines():
        m = _TORCHSCRIPT_FRAME.fullmatch(raw.strip())
        if m is not None:
            frames.append(Frame(m.group(1), int(m.group(2)), m.group(3).strip()))
            if len(frames) >= MAX_FRAMES:
                break
    frames.reverse()
    return frames


def torchscript_scopes(name: str) -> list[tuple[str, str]]:
    """The modules a TorchScript node name walks through (`/encoder/layer.0/attn/MatMul`: encoder,
    encoder.layer.0, encoder.layer.0.attn): a child of a Sequential is written with its parent's prefix
    (`/features/features.0/Conv`). `/Flatten` is at the root module."""
    parts = name[:MAX_TEXT].split("/")[1:-1]
    out: list[tuple[str, str]] = [("", "")]
    path = ""
    for part in parts:
        if not part:
            return []
        path = part if not path or part.startswith(path + ".") else f"{path}.{part}"
        out.append((path, ""))
    return out


_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def _strings(text: str) -> list[str]:
    """The quoted strings of a Python list's repr, in order (never evaluated)."""
    return [a if a or not b else b for a, b in _QUOTED.findall(text[:MAX_TEXT])]


# ---- the frame a user would fix

# top-level packages whose frames are the exporter's or the framework's, never the model's
LIBRARIES = frozenset({"torch", "torchgen", "functorch", "onnxscript", "onnx_ir", "onnx", "typing_extensions.py"})
_PACKAGES = re.compile(r"[/\\](?:site|dist)-packages[/\\]([^/\\]+)")
_PYTHON_LIB = re.compile(r"[/\\](?:lib|lib64)[/\\]python\d\.\d+[/\\]|[/\\]Lib[/\\]")
# a source checkout of torch or onnxscript (no site-packages in the path)
_CHECKOUT = re.compile(r"(?:^|[/\\])(?:torch|onnxscript)[/\\](?:nn|_dynamo|fx|onnx|_export|export|_refs|_decomp|_prims|"
                       r"_higher_order_ops|_subclasses|utils|function_libs|ir|rewriter|_internal|_ops\.py|"
                       r"_tensor\.py|functional\.py|overrides\.py|_jit_internal\.py|jit)(?:[/\\]|$)")  # fmt: skip


def is_library(file: str) -> bool:
    """Whether a frame's file is torch's, onnxscript's or the standard library's (or no file: `<frozen ...>`)."""
    if not file or file.startswith("<"):
        return True
    m = _PACKAGES.search(file)
    if m is not None:
        return m.group(1) in LIBRARIES
    if _PYTHON_LIB.search(file):  # the standard library: a Python's lib folder, not its site-packages
        return True
    return _CHECKOUT.search(file) is not None


def choose(frames: list[Frame]) -> int | None:
    """The innermost frame outside torch, onnxscript and the standard library."""
    for i in range(len(frames) - 1, -1, -1):
        if not is_library(frames[i].file):
            return i
    return None
