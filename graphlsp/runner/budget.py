"""What one constant evaluation may spend: wall time, node runs, body runs and bytes built, nested bodies included.

The runner checks a node's output sizes before it runs, but a node with a body (Loop, Scan, If, a function call)
runs many nodes inside onnx.reference, where a Loop of 1e9 iterations inside an If branch or inside another Loop
is not visible from the outside. A `Budget` is installed for the evaluation of one node of the model (`active`),
and onnx.reference's evaluator (a subclass, `runner.reference`) charges it for every node it runs, every body
or function body it enters and every output it builds, however deep: the iterations of nested Loops multiply
into the body runs, so one limit bounds the product of the enclosing trip counts. Exceeding any limit raises
BudgetExceeded, and the value stays unknown.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

SECONDS = 2.0  # wall time of one node's evaluation, its bodies included
STEPS = 1 << 16  # node runs inside bodies and function bodies
BODY_RUNS = 1 << 14  # entries into a body or function body (a Loop's iterations, nested ones multiplied)
BYTES_PER_CAP = 64  # bytes built in all, as a multiple of the runner's size cap (a Loop's scan outputs pile up)


class BudgetExceeded(Exception):
    """The evaluation went over its budget: not a finding on the model, the value stays unknown."""


class Budget:
    __slots__ = ("deadline", "steps", "bodies", "bytes_left", "size_cap")

    def __init__(self, size_cap: int, seconds: float = SECONDS, steps: int = STEPS, bodies: int = BODY_RUNS) -> None:
        self.deadline = time.monotonic() + seconds
        self.steps = steps
        self.bodies = bodies
        self.size_cap = size_cap
        self.bytes_left = size_cap * BYTES_PER_CAP

    def _clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise BudgetExceeded("evaluation stopped: over its time budget")

    def node(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise BudgetExceeded(f"evaluation stopped: more than {STEPS} node runs inside bodies")
        self._clock()

    def body(self) -> None:
        self.bodies -= 1
        if self.bodies < 0:
            raise BudgetExceeded(f"evaluation stopped: more than {BODY_RUNS} body runs (nested Loop iterations "
                                 "multiply)")  # fmt: skip
        self._clock()

    def built(self, value: Any) -> None:
        size = _bytes(value)
        if size > self.size_cap:
            raise BudgetExceeded(f"evaluation stopped: a value of {size} bytes inside a body exceeds the cap")
        self.bytes_left -= size
        if self.bytes_left < 0:
            raise BudgetExceeded("evaluation stopped: bodies built more bytes than the budget allows")


def _bytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.size) * 16 if value.dtype == object else int(value.nbytes)
    if isinstance(value, list):
        return sum(_bytes(x) for x in value)
    return 0


# per thread (a new thread starts without one), as a thread-local would be, without importing threading
_budget: ContextVar[Budget | None] = ContextVar("budget", default=None)


def current() -> Budget | None:
    """The budget of the evaluation running on this thread, if any."""
    return _budget.get()


@contextmanager
def active(budget: Budget | None) -> Iterator[None]:
    token = _budget.set(budget)
    try:
        yield
    finally:
        _budget.reset(token)
