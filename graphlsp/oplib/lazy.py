"""A checked library as the cache keeps it: each op's declaration pickled on its own, behind a table of
(domain, op, since). Loading it reads the table only; a declaration is unpickled when a model uses its op, so a
check that meets three of onnxruntime's 183 contrib ops builds three declarations, not 11,000 objects."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, SupportsIndex

from graphlsp.lazymodule import lazy_module

if TYPE_CHECKING:
    from graphlsp.oplib import model as m
else:
    m = lazy_module("graphlsp.oplib.model", globals(), "m")  # read when a library is in use

TAG = "graphlsp-oplib-lazy-1"


def dump(lib: m.Library) -> bytes:
    keys = [(op.domain, op.name, op.since) for op in lib.ops]
    blobs = [pickle.dumps(op, protocol=pickle.HIGHEST_PROTOCOL) for op in lib.ops]
    return pickle.dumps((TAG, lib.name, lib.path, lib.version, lib.problems, keys, blobs),
                        protocol=pickle.HIGHEST_PROTOCOL)  # fmt: skip


def load(data: bytes) -> m.Library | None:
    """The library a `dump` holds (None when the bytes are something else)."""
    held = pickle.loads(data)
    if not (isinstance(held, tuple) and len(held) == 7 and held[0] == TAG):
        return None
    _, name, path, version, problems, keys, blobs = held
    return m.Library(name, path, LazyOps(keys, blobs), problems, version)


class LazyOps(list["m.OpDecl"]):
    """A library's declarations, each unpickled on first use (`decl(i)`); anything that reads the list as a whole
    unpickles them all first, so it is an ordinary list to every other reader."""

    def __init__(self, keys: list[tuple[str, str, int]], blobs: list[bytes]) -> None:
        super().__init__()
        self.keys = keys
        self._blobs = blobs
        self._decls: list[m.OpDecl | None] = [None] * len(keys)
        self._full = False

    def decl(self, i: int) -> m.OpDecl:
        d = self._decls[i]
        if d is None:
            d = pickle.loads(self._blobs[i])
            self._decls[i] = d
        assert d is not None
        return d

    @property
    def full(self) -> bool:
        """Whether every declaration is unpickled and the list holds them."""
        return self._full

    def loaded(self) -> list[m.OpDecl]:
        """The declarations unpickled so far (every one, once the list was read as a whole)."""
        return [d for d in self._decls if d is not None]

    def _fill(self) -> None:
        if not self._full:
            self._full = True
            list.extend(self, [self.decl(i) for i in range(len(self.keys))])

    # ---- every reader of the whole list
    def __len__(self) -> int:
        return len(self.keys) if not self._full else list.__len__(self)

    def __iter__(self) -> Iterator[m.OpDecl]:
        self._fill()
        return list.__iter__(self)

    def __reversed__(self) -> Iterator[m.OpDecl]:
        self._fill()
        return list.__reversed__(self)

    def __getitem__(self, i: Any) -> Any:
        self._fill()
        return list.__getitem__(self, i)

    def __contains__(self, x: object) -> bool:
        self._fill()
        return list.__contains__(self, x)

    def __eq__(self, other: object) -> bool:
        self._fill()
        if isinstance(other, LazyOps):
            other._fill()
        return list.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._fill()
        return list.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)

    def copy(self) -> list[m.OpDecl]:
        return list(self)

    def index(self, x: m.OpDecl, *args: Any) -> int:
        self._fill()
        return list.index(self, x, *args)

    def count(self, x: m.OpDecl) -> int:
        self._fill()
        return list.count(self, x)

    def __add__(self, other: Any) -> Any:
        return list(self) + list(other)

    # ---- writers: the list is filled first, then changed as a list
    def append(self, x: m.OpDecl) -> None:
        self._fill()
        list.append(self, x)

    def extend(self, xs: Any) -> None:
        self._fill()
        list.extend(self, xs)

    def insert(self, i: SupportsIndex, x: m.OpDecl) -> None:
        self._fill()
        list.insert(self, i, x)

    def remove(self, x: m.OpDecl) -> None:
        self._fill()
        list.remove(self, x)

    def pop(self, i: SupportsIndex = -1) -> m.OpDecl:
        self._fill()
        return list.pop(self, i)

    def clear(self) -> None:
        self._fill()
        list.clear(self)

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._fill()
        list.sort(self, *args, **kwargs)

    def reverse(self) -> None:
        self._fill()
        list.reverse(self)

    def __setitem__(self, i: Any, x: Any) -> None:
        self._fill()
        list.__setitem__(self, i, x)

    def __delitem__(self, i: Any) -> None:
        self._fill()
        list.__delitem__(self, i)

    def __iadd__(self, xs: Any) -> Any:
        self._fill()
        return list.__iadd__(self, xs)
