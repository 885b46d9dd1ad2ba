"""Acceptance: on every model shipped with onnx and on gpt_L24, each value is equal to or more precise than onnx's
own `infer_shapes(strict_mode=True, data_prop=True)`, never contradicting it, with no false error; gpt_L24 is 100%
resolved. Gaps we know of are listed in known_oracle_gaps.txt (the test fails when one closes, too)."""

from __future__ import annotations

from pathlib import Path

import onnx.parser
import pytest

from tests.corpus import DATA_CORPORA, corpus_models
from tests.infer.helpers import read_known
from tests.infer.oracle import Comparison, compare

KNOWN_FILE = Path(__file__).with_name("known_oracle_gaps.txt")


def known_gaps() -> dict[str, str]:
    return read_known(KNOWN_FILE)


def models() -> list[tuple[str, onnx.ModelProto]]:
    return [m for corpus in DATA_CORPORA for m in corpus_models(corpus)]


@pytest.mark.parametrize("name,model", models(), ids=[n for n, _ in models()])
def test_equal_or_more_precise_than_onnx(name: str, model: onnx.ModelProto) -> None:
    r = compare(model)
    assert r.contradictions == [], r.contradictions[:5]
    assert r.false_errors == [], r.false_errors[:5]
    gap = bool(r.less_precise)
    if name in known_gaps():
        assert gap, f"{name} is no longer less precise than onnx: remove it from {KNOWN_FILE.name}"
    else:
        assert not gap, r.less_precise[:5]


def test_gpt_l24_fully_resolved(gpt_l24_text: str, capsys: pytest.CaptureFixture[str]) -> None:
    r: Comparison = compare(onnx.parser.parse_model(gpt_l24_text))
    with capsys.disabled():
        print(f"\ngpt_L24: {r.values} values typed by onnx; ours equal {r.equal}, more precise {r.more_precise}, "
              f"less precise {len(r.less_precise)}, contradictions {len(r.contradictions)}, "
              f"unresolved {len(r.unresolved)}")  # fmt: skip
    assert r.contradictions == []
    assert r.false_errors == []
    if "gpt_L24" in known_gaps():
        assert r.unresolved or r.less_precise
    else:
        assert r.less_precise == []
        assert r.unresolved == []
