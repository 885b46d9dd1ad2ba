"""Judging one body value: graphlsp's (dtype, shape) against the (dtype, shape) observed in each run, as EXACT,
PARTIAL, UNKNOWN or WRONG (see the entry script's docstring); and the result of one model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .dims import Evaluator

CLASSES = "EPUW"


@dataclass
class Verdict:
    cls: str
    why: str = ""
    one_run: bool = False
    varying: bool = False  # some dim differs between iterations of one run


def judge(tool: Any, seen: dict[int, set[tuple[str, tuple[int, ...]]]], envs: list[dict[str, int]],
          ev: Evaluator) -> Verdict:  # fmt: skip
    runs = sorted(seen)
    one = len(runs) < 2
    ranks = {len(s) for r in runs for _, s in seen[r]}
    varying = len(ranks) > 1 or any(len({s[i] for _, s in seen[r]}) > 1 for r in runs for i in range(min(ranks)))
    if tool is None:
        return Verdict("U", one_run=one, varying=varying)
    dtype, shape = tool
    if dtype == "not a tensor":
        return Verdict("W", "kind", one, varying)
    dtypes = {dt for r in runs for dt, _ in seen[r]}
    if dtype is not None and any(dt != dtype for dt in dtypes):
        return Verdict("W", "dtype", one, varying)
    if shape is None:
        return Verdict("E" if len(ranks) > 1 else "U", one_run=one, varying=varying)
    if len(ranks) > 1 or len(shape) not in ranks:
        return Verdict("W", "rank", one, varying)
    cls = "E"
    for r in runs:
        for i, dm in enumerate(shape):
            sizes = {s[i] for _, s in seen[r]}
            v = ev.eval(dm, envs[r])
            if v is not None:
                if sizes != {v}:
                    return Verdict("W", f"dim {i}", one, varying)
            elif len(sizes) == 1:
                cls = "P"
    return Verdict(cls, one_run=one, varying=varying)


def fmt_shape(dtype: Any, shape: Any) -> str:
    if shape is None:
        return f"{dtype or '?'}[?rank]"
    return f"{dtype or '?'}[{', '.join('?' if x is None else str(x) for x in shape)}]"


def fmt_seen(seen: set[tuple[str, tuple[int, ...]]]) -> str:
    shapes = sorted({s for _, s in seen})
    text = " | ".join(str(list(s)) for s in shapes[:4]) + (f" | ... ({len(shapes)} shapes)" if len(shapes) > 4 else "")
    return f"{sorted({dt for dt, _ in seen})[0]} {text}"


@dataclass
class Result:
    model: str
    error: str = ""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    bodies: int = 0
    body_nodes: int = 0
    values: int = 0
    one_run: int = 0
    varying: int = 0
    runs: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # runs not used, and why
    wrong: list[dict[str, Any]] = field(default_factory=list)
    open: list[dict[str, Any]] = field(default_factory=list)  # PARTIAL and UNKNOWN values
    inconsistent: list[str] = field(default_factory=list)
    classes: dict[str, str] = field(default_factory=dict)
    per_body: dict[str, dict[str, int]] = field(default_factory=dict)
    peer_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    peer_errors: dict[str, str] = field(default_factory=dict)
    peer_classes: dict[str, dict[str, str]] = field(default_factory=dict)
    behind: list[str] = field(default_factory=list)  # values a peer resolves further than graphlsp
    time: float = 0.0
