"""Where the op DSL's caches live and what keys them: the user's cache folder (graphlsp.files) and the grammar's
digest. Kept apart from the parser so that reading a cached library imports neither it nor lark."""

from __future__ import annotations

import os

from graphlsp.files import cache_dir, digest

__all__ = ["cache_dir", "digest", "grammar_digest", "grammar_path"]


def grammar_path() -> str:
    """`onnxop.lark`: inside the installed package (graphlsp/grammar), or at the repository root."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    for candidate in (os.path.join(package, "grammar", "onnxop.lark"),
                      os.path.join(os.path.dirname(package), "grammar", "onnxop.lark")):  # fmt: skip
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError("grammar/onnxop.lark not found next to the graphlsp package")


def grammar_digest() -> str:
    with open(grammar_path(), "rb") as f:
        return str(digest(f.read()).hexdigest()[:16])
