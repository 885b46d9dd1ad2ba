"""No crash, ever: mutated real files (tokens and characters deleted, inserted, duplicated; truncation; random
bytes) go through decoding, parsing with recovery, incremental edits and every lint check without an exception
escaping, and every diagnostic lies inside the file."""

from __future__ import annotations

import functools
import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphlsp.lint.diagnostics import collect
from graphlsp.source import decode
from graphlsp.syntax.document import SyntaxDocument
from tests.conftest import example_texts

EXAMPLES = int(os.environ.get("GRAPHLSP_FUZZ_EXAMPLES", "10000"))
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[0-9.]+|=>|\S')


@functools.cache
def seeds() -> list[bytes]:
    texts = list(example_texts().values())
    try:  # a few of onnx's own models, printed: more constructs than our examples use
        import onnx.printer
        from onnx.backend.test.case.node import collect_testcases

        picked = [c for c in collect_testcases() if c.name in {
            "test_if", "test_loop11", "test_scan9_sum", "test_range_float_type_positive_delta_expanded",
            "test_sequence_map_identity_1_sequence", "test_optional_has_element_empty_optional_input",
            "test_cast_FLOAT_to_FLOAT8E4M3FN", "test_layer_normalization_2d_axis0_expanded",
        }]  # fmt: skip
        texts += [onnx.printer.to_text(c.model) for c in picked]
    except Exception:
        pass
    return [t.encode("utf-8") for t in texts]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[bytes, bytes]:
    original = draw(st.sampled_from(seeds()))
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["del_tok", "ins_tok", "dup_tok", "del_chr", "ins_chr", "dup_chr", "truncate", "bytes"]))
        text = data.decode("utf-8", errors="replace")
        toks = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        if op.endswith("_tok") and toks:
            s, e = draw(st.sampled_from(toks))
            piece = text[s:e]
            if op == "del_tok":
                text = text[:s] + text[e:]
            elif op == "dup_tok":
                text = text[:e] + " " + piece + text[e:]
            else:
                s2, e2 = draw(st.sampled_from(toks))
                text = text[:s] + text[s2:e2] + text[s:]
            data = bytearray(text.encode("utf-8"))
        elif op.endswith("_chr") and data:
            i = draw(st.integers(0, len(data) - 1))
            if op == "del_chr":
                del data[i]
            elif op == "dup_chr":
                data.insert(i, data[i])
            else:
                data.insert(i, draw(st.sampled_from(b'()[]{}<>=,:."#@?-\n 0aZ_\\')))
        elif op == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        else:
            i = draw(st.integers(0, len(data)))
            data[i:i] = draw(st.binary(max_size=16))
    return original, bytes(data)


def _check_inside(doc: SyntaxDocument) -> None:
    n = len(doc.text)
    for d in collect(doc, "fuzz.onnxtxt"):
        assert 0 <= d.start <= d.end <= n, (d.code, d.message, d.start, d.end, n)
        assert 1 <= d.line <= d.end_line <= len(doc.lines.starts)
        for r in d.related:
            assert 1 <= r["line"] <= len(doc.lines.starts)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(mutated())
def test_mutated_files_never_crash(case: tuple[bytes, bytes]) -> None:
    original, data = case
    text, _ = decode(data)
    doc = SyntaxDocument(text)
    _check_inside(doc)
    # the same change as an edit of the original document, through the incremental path
    before = decode(original)[0]
    prefix = 0
    while prefix < min(len(before), len(text)) and before[prefix] == text[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(before), len(text)) - prefix and before[-1 - suffix] == text[-1 - suffix]:
        suffix += 1
    edited = SyntaxDocument(before)
    edited.apply_edit(prefix, len(before) - suffix, text[prefix : len(text) - suffix])
    assert edited.text == text
    _check_inside(edited)


@given(st.binary(max_size=300))
@settings(max_examples=500, deadline=None, database=None)
def test_random_bytes_never_crash(data: bytes) -> None:
    text, _ = decode(data)
    _check_inside(SyntaxDocument(text))
