"""onnx's node test cases with every input turned into an initializer: the runner evaluates each graph output and
must reproduce the expected values within onnx's tolerances. Shared by the acceptance test and the README table.

    python -m tests.runner.node_eval [--table] [--failures]
"""

from __future__ import annotations

import collections
import functools
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnx.printer
from onnx import numpy_helper

from graphlsp.analysis import Analysis
from graphlsp.runner.runner import is_random

OK, WRONG, NOT_EVALUATED, RANDOM, NOT_REPRESENTABLE = "ok", "wrong", "not evaluated", "random", "not representable"


@dataclass
class EvalResult:
    name: str
    op: str
    status: str
    detail: str = ""


@functools.cache
def testcases() -> list[Any]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [c for c in collect_testcases() if c.data_sets]


def case_op(model: onnx.ModelProto) -> str:
    ops = sorted({n.op_type for n in model.graph.node})
    return ops[0] if len(model.graph.node) == 1 else "(multi-op models)"


def with_initializers(model: onnx.ModelProto, inputs: list[Any]) -> onnx.ModelProto | None:
    """The model with its graph inputs replaced by initializers holding the recorded values (None when an input
    is a sequence or an optional, which an initializer cannot hold)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = []
    for vi, value in zip(model.graph.input, inputs, strict=False):
        if vi.type.WhichOneof("value") != "tensor_type":
            return None
        if isinstance(value, onnx.TensorProto):
            tensor = onnx.TensorProto()
            tensor.CopyFrom(value)
            tensor.name = vi.name
        elif isinstance(value, (np.ndarray, np.generic)):
            tensor = numpy_helper.from_array(np.asarray(value), vi.name)
        else:
            return None
        inits.append(tensor)
    names = {t.name for t in inits}
    kept = [vi for vi in m.graph.input if vi.name not in names]
    del m.graph.input[:]
    m.graph.input.extend(kept)
    m.graph.initializer.extend(inits)
    return m


def _close(want: Any, got: Any, rtol: float, atol: float) -> str:
    """"" when got matches want as onnx's backend test runner compares them, else why not."""
    if isinstance(want, onnx.TensorProto):
        want = numpy_helper.to_array(want)
    if isinstance(want, (list, tuple)):
        if not isinstance(got, list) or len(got) != len(want):
            return f"expected a sequence of {len(want)}, got {type(got).__name__}"
        return next((r for w, g in zip(want, got, strict=True) if (r := _close(w, g, rtol, atol))), "")
    if want is None:
        return "" if got is None else f"expected an empty optional, got {type(got).__name__}"
    if not isinstance(got, np.ndarray):
        return f"expected a tensor, got {type(got).__name__}"
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} != expected {list(want.shape)}"
    if want.dtype == object:
        return "" if np.array_equal(got.astype(object), want) else "strings differ"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != expected {want.dtype}"
    if want.dtype.kind not in "biufc":
        got, want = got.astype(np.float32), want.astype(np.float32)
        rtol = max(rtol, 2**-6)
    try:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    except AssertionError as e:
        return "values differ: " + " ".join(str(e).split())[:160]
    return ""


def run_case(case: Any) -> EvalResult:
    model = case.model
    op = case_op(model)
    inputs, expected = case.data_sets[0]
    m = with_initializers(model, list(inputs))
    if m is None:
        return EvalResult(case.name, op, NOT_REPRESENTABLE, "a sequence or optional input")
    if any(is_random(n.op_type) for n in m.graph.node):
        return EvalResult(case.name, op, RANDOM, "never evaluated: non-deterministic")
    a = Analysis(onnx.printer.to_text(m))
    graph = a.model.graph
    assert graph is not None
    for vi, value, want in zip(model.graph.output, graph.outputs, expected, strict=False):
        ok, got = a.runner.known(value)
        if not ok:
            refused = a.runner.refused.get(value.producer, "") if value.producer is not None else ""
            if refused.startswith("non-deterministic"):
                return EvalResult(case.name, op, RANDOM, f"never evaluated: {refused}")
            why = a.runner.errors.get(value.producer) if value.producer is not None else None
            why = why or (a.runner.failures.get(value.producer, "") if value.producer is not None else "")
            return EvalResult(case.name, op, NOT_EVALUATED, f"{vi.name}: {why or 'not computed'}")
        problem = _close(want, got, case.rtol, case.atol)
        if problem:
            return EvalResult(case.name, op, WRONG, f"{vi.name}: {problem}")
    return EvalResult(case.name, op, OK)


def run_all() -> list[EvalResult]:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return [run_case(c) for c in testcases()]


def summary(results: list[EvalResult], deterministic: bool = False) -> tuple[int, int]:
    """(reproduced, cases whose inputs an initializer can hold [and whose ops are deterministic])."""
    skip = {NOT_REPRESENTABLE, RANDOM} if deterministic else {NOT_REPRESENTABLE}
    counted = [r for r in results if r.status not in skip]
    return sum(r.status == OK for r in counted), len(counted)


def per_op(results: list[EvalResult]) -> list[tuple[str, int, int]]:
    by_op: dict[str, list[bool]] = collections.defaultdict(list)
    for r in results:
        if r.status != NOT_REPRESENTABLE:
            by_op[r.op].append(r.status == OK)
    return sorted((op, sum(v), len(v)) for op, v in by_op.items())


def main(argv: list[str]) -> int:
    results = run_all()
    ok, total = summary(results)
    ok_d, total_d = summary(results, deterministic=True)
    print(f"node cases reproduced by the runner: {ok}/{total} ({100 * ok / total:.1f}%); of the deterministic ones "
          f"{ok_d}/{total_d} ({100 * ok_d / total_d:.1f}%); {sum(r.status == NOT_REPRESENTABLE for r in results)} "
          f"with sequence/optional inputs left out")  # fmt: skip
    if "--failures" in argv:
        for r in results:
            if r.status not in (OK, NOT_REPRESENTABLE):
                print(f"{r.name}\t[{r.op}] {r.status}: {r.detail}")
    if "--table" in argv:
        rows = per_op(results)
        print("| op | cases | reproduced |\n|---|---|---|")
        for op, good, n in rows:
            print(f"| {op} | {n} | {good} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
