"""`bench stages`, the guard against the next cliff: a stage that grows faster than the model is flagged against the
median model's cost per entry, and a bench that flags one fails `python -m bench`."""

from __future__ import annotations

import time

import pytest

from bench import stages
from tests.conftest import ROOT

YOLO = ROOT / "corpus" / "ultralytics" / "yolov8n.onnx"


def _row(name: str, entries: int, **times: float) -> dict:
    return {"model": name, "nodes": entries, "entries": entries, "stages": dict.fromkeys(stages.STAGES, 0.0) | times}


def test_a_stage_growing_faster_than_the_model_is_over() -> None:
    """Linear stages pass at any size; the one growing with the square of the model fails, above the floor."""
    sizes = [10, 40, 100, 200, 300, 1000]
    rows = [_row(f"m{n}", n, infer=n * 1e-4, declared=n * n * 1e-6) for n in sizes]
    over = stages.judge(rows)
    assert {(m, s) for m, s, _, _ in over} == {("m1000", "declared")}  # 6.7x the median per entry
    rows = [_row(f"m{n}", n, infer=n * 1e-4, declared=n * 1e-5) for n in sizes]
    assert stages.judge(rows) == []
    tiny = [_row("tiny", 2, report=0.04), *(_row(f"m{n}", n, report=n * 1e-6) for n in sizes)]
    assert stages.judge(tiny) == []  # 0.04 s is under the floor however small the model


def test_profile_of_a_real_model_and_a_quadratic_stage_in_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphlsp.infer import contracts

    monkeypatch.setattr(stages, "RUNS", 1)
    row = stages.profile(YOLO)
    assert row["nodes"] == 321 and row["entries"] > 600  # onnxslim declares every value
    assert set(row["stages"]) == set(stages.STAGES) and all(t >= 0 for t in row["stages"].values())
    real = contracts.declaration_findings

    def quadratic(refiner, symbols=None):  # type: ignore[no-untyped-def]
        n = sum(1 for _ in refiner.model.graph.all_nodes())
        end = time.process_time() + n * n * 2e-6  # 0.2 s of CPU on 321 nodes (the bench times CPU)
        while time.process_time() < end:
            pass
        return real(refiner, symbols)

    monkeypatch.setattr(contracts, "declaration_findings", quadratic)
    slow = stages.profile(YOLO)
    assert slow["stages"]["declared"] > 0.2
    others = [_row(f"m{n}", n, declared=n * 1e-6) for n in (50, 100, 200, 400, 800)]
    r = {"rows": [*others, slow], "over": stages.judge([*others, slow])}
    assert ("yolov8n.onnx", "declared") in {(m, s) for m, s, _, _ in r["over"]}
    assert any("OVER: yolov8n.onnx declared" in line for line in stages.report(r))


def test_bench_exits_1_when_a_guard_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.__main__ as entry

    monkeypatch.setattr(stages, "run", lambda: {"rows": [], "over": [("m", "read", 1.0, 0.1)], "failed": True})
    assert entry.main(["stages"]) == 1
    monkeypatch.setattr(stages, "run", lambda: {"rows": [], "over": [], "failed": False})
    assert entry.main(["stages"]) == 0
