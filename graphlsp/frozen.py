"""The base of the immutable value classes (types, signatures, conditions, ...), written as plain classes.

They were `@dataclass(frozen=True, slots=True)`: a dataclass compiles its methods with exec() each time its module
is imported, which cost a check ~20 ms of start-up. A subclass lists its fields in `__slots__`, in the order of its
`__init__` parameters, sets them with `object.__setattr__`, and writes its own `__repr__`, `__eq__` and `__hash__`.
This base refuses assignment and deletion as a frozen dataclass does, and pickles and copies an instance by calling
the class with its fields again.
"""

from __future__ import annotations

from typing import Any


class FrozenInstanceError(AttributeError):
    """An assignment to (or deletion of) a field of a frozen value, as dataclasses' error of that name (not
    imported from there: dataclasses and what it imports are a millisecond of a check's start)."""


class Frozen:
    """Instances cannot be changed after `__init__`."""

    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), tuple(getattr(self, name) for name in self.__slots__)
