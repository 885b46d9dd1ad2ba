"""Acceptance: onnx's node test cases, declared output types removed, inferred by graphlsp, must equal the expected
outputs' types and shapes. Cases we do not pass yet are listed in known_node_failures.txt with the reason; the test
fails on any other failure, and on a listed case that now passes (so the list only shrinks)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from tests.infer.helpers import read_known
from tests.infer.node_cases import CaseResult, cases, run_case

KNOWN_FILE = Path(__file__).with_name("known_node_failures.txt")


def known_failures() -> dict[str, str]:
    return read_known(KNOWN_FILE)


@pytest.fixture(scope="module")
def results() -> list[CaseResult]:
    return [run_case(name, model) for name, model in cases()]


def test_node_cases_match_expected_types(results: list[CaseResult], capsys: pytest.CaptureFixture[str]) -> None:
    known = known_failures()
    failed = [r for r in results if not r.ok and r.name not in known]
    fixed = [r.name for r in results if r.ok and r.name in known]
    passed = sum(r.ok for r in results)
    with capsys.disabled():
        print(f"\nnode cases: {passed}/{len(results)} inferred exactly ({len(known)} known failures listed)")
    assert not failed, "\n".join(f"{r.name} [{r.op}]: {r.detail}" for r in failed[:40])
    assert not fixed, f"now passing, remove from {KNOWN_FILE.name}: {fixed[:40]}"


def test_no_false_errors_on_node_cases(results: list[CaseResult]) -> None:
    false = [r for r in results if r.detail.startswith("false error")]
    known = known_failures()
    assert [r.name for r in false if r.name not in known] == []


def per_op_table(results: list[CaseResult]) -> list[tuple[str, int, int]]:
    by_op: dict[str, list[bool]] = collections.defaultdict(list)
    for r in results:
        by_op[r.op if "+" not in r.op else "(multi-op models)"].append(r.ok)
    return sorted((op, sum(v), len(v)) for op, v in by_op.items())


def test_node_cases_with_recorded_input_values(capsys: pytest.CaptureFixture[str]) -> None:
    """The same cases with the graph inputs' recorded values known, as a runtime fed them would know them: the
    shape rules read them (Reshape targets, Resize sizes, TopK's k) and the runner computes what depends on the
    data itself (NonZero, NonMaxSuppression, StringSplit, ImageDecoder, Loop-built sequences). Every case is
    inferred exactly: each dim as declared, or as the recorded output has it."""
    from tests.infer.node_cases import cases_with_inputs

    results = [run_case(n, m, (m, i), o) for n, m, i, o in cases_with_inputs()]
    passed = sum(r.ok for r in results)
    with capsys.disabled():
        print(f"\nnode cases with recorded input values: {passed}/{len(results)} inferred exactly")
    assert [r.name for r in results if r.detail.startswith("false error")] == []
    assert [f"{r.name}: {r.detail}" for r in results if not r.ok] == []
