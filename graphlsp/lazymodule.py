"""A module imported on first use of one of its attributes, for modules whose import costs start-up time that most
runs never need (the op DSL's model: 25 dataclasses, about 8 ms, for a model without op libraries; the text front
end's syntax tree for a binary model).

    if TYPE_CHECKING:
        from graphlsp.oplib import model as m
    else:
        m = lazy_module("graphlsp.oplib.model", globals(), "m")

The first attribute read imports the module the ordinary way (importlib's per-module lock makes a second thread
wait for it, where importlib.util.LazyLoader on Python 3.11 can hand it a module still being executed) and puts it
in the importer's globals under the given name, so later reads are plain module attribute reads."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any


class _Pending:
    __slots__ = ("_name", "_where", "_as")

    def __init__(self, name: str, where: dict[str, Any], as_name: str) -> None:
        self._name = name
        self._where = where
        self._as = as_name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        self._where[self._as] = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


def lazy_module(name: str, where: dict[str, Any], as_name: str) -> Any:
    """The module `name` when it is imported already, else a stand-in that imports it on its first attribute read
    and replaces itself in `where` (the importer's globals) under `as_name`."""
    found: ModuleType | None = sys.modules.get(name)
    return found if found is not None else _Pending(name, where, as_name)
