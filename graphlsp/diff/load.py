"""One side of a diff: a model file read and checked as `graphlsp check` would (its analysis and diagnostics)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.graph.core import Model
    from graphlsp.lint.config import Settings
    from graphlsp.lint.diagnostics import Diagnostic

EMPTY = "/dev/null"  # git names a side that does not exist so


class LoadError(Exception):
    """The model cannot be read (the message says why)."""


class Side:
    """A model file read: its IR, its analysis (inferred types) and what `check` says of it."""

    __slots__ = ("path", "name", "analysis", "diagnostics", "binary")

    def __init__(self, path: str, name: str, analysis: Analysis | ModelAnalysis | None,
                 diagnostics: list[Diagnostic], binary: bool) -> None:  # fmt: skip
        self.path = path
        self.name = name  # what the output calls it (git's name of the file, not its temporary copy)
        self.analysis = analysis
        self.diagnostics = diagnostics
        self.binary = binary

    @property
    def model(self) -> Model | None:
        return self.analysis.model if self.analysis is not None else None


def load(path: str, settings: Settings, name: str | None = None, binary: bool | None = None) -> Side:
    """Read and check one model; `binary` None: by its suffix. Raises LoadError."""
    from graphlsp.lint.runner import finalize, lint_text

    shown = name or path
    if path == EMPTY:
        return Side(path, shown, None, [], False)
    is_binary = path.lower().endswith(".onnx") if binary is None else binary
    if is_binary:
        from graphlsp.analysis import ModelAnalysis
        from graphlsp.binary.read import read_model
        from graphlsp.lint.diagnostics import collect_binary

        try:
            model, findings = read_model(path)
        except OSError as e:
            raise LoadError(f"{shown}: {e.strerror or e}") from None
        except Exception as e:  # protobuf's DecodeError and friends
            raise LoadError(f"{shown}: cannot load binary ONNX model: {type(e).__name__}: {e}") from None
        analysis = ModelAnalysis(model, findings, settings.fold_size_cap, settings.sizes)
        diags = finalize(collect_binary(analysis, shown, settings), "", shown, settings)
        return Side(path, shown, analysis, diags, True)
    from graphlsp.source import read_source

    try:
        source = read_source(path)
    except OSError as e:
        raise LoadError(f"{shown}: {e.strerror or e}") from None
    if source.error is not None and not source.text:
        raise LoadError(f"{shown}: {source.error[1]}")
    text_analysis, diags = lint_text(source.text, shown, settings, source.error)
    if any(p.code.startswith("GL1") for p in text_analysis.doc.problems):
        first = next(d for d in diags if d.code.startswith("GL1"))
        raise LoadError(f"{shown}:{first.line}:{first.col}: {first.code} {first.message}")
    return Side(path, shown, text_analysis, diags, False)
