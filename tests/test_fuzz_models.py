"""The fuzzer of `tests/fuzz_models.py` on a short budget (the whole file well under a minute): mutated and truncated
real models, text and binary, through check, shapes, convert, fold, the safe fixes and format. `make fuzz` runs
the same checks for GRAPHLSP_FUZZ_SECONDS (30 minutes by default)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzz_models as fm

TEXT_EXAMPLES = int(os.environ.get("GRAPHLSP_FUZZ_TEXT_EXAMPLES", "120"))
BINARY_EXAMPLES = int(os.environ.get("GRAPHLSP_FUZZ_BINARY_EXAMPLES", "120"))
_FOLDER = Path(tempfile.mkdtemp(prefix="gl-fuzz-test-"))


class _Drawn:
    """A Chooser whose choices hypothesis draws (and shrinks)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, items: Any) -> Any:
        return self.draw(st.sampled_from(items))

    def blob(self, max_size: int) -> bytes:
        return self.draw(st.binary(max_size=max_size))


@st.composite
def texts(draw: st.DrawFn) -> str:
    return fm.mutate_text(_Drawn(draw))


@st.composite
def binaries(draw: st.DrawFn) -> bytes:
    return fm.mutate_binary(_Drawn(draw))


_SETTINGS = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}


@settings(max_examples=TEXT_EXAMPLES, **_SETTINGS)
@given(texts())
def test_mutated_texts(text: str) -> None:
    fm.check_text(text, _FOLDER)


@settings(max_examples=BINARY_EXAMPLES, **_SETTINGS)
@given(binaries())
def test_mutated_binaries(data: bytes) -> None:
    fm.check_binary(data, _FOLDER)


def test_the_seeds_themselves() -> None:
    for text in fm.text_seeds()[::3]:
        fm.check_text(text, _FOLDER)


def test_length_fields_are_found_and_rewritten() -> None:
    from onnx import ModelProto

    seed = fm.binary_seeds()[0]
    fields = fm.length_fields(seed)
    assert len(fields) > 5
    at, after, n = fields[0]
    assert fm._varint(seed, at) == (n, after)
    data = bytearray(seed)
    data[at:after] = fm._encode_varint(2**63)
    try:
        ModelProto.FromString(bytes(data))
    except Exception:
        return  # protobuf refuses it, as a fuzzed model should make it
    raise AssertionError("a length past the end parsed")


def test_long_run_reports_inputs_and_failures(capsys: Any, tmp_path: Path) -> None:
    assert fm.long_run(2.0, tmp_path / "out", seed=1) == 0
    out = capsys.readouterr().out
    assert "inputs in 2 s, 0 distinct failures" in out
