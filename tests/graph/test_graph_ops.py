"""Op lookup and "did you mean" suggestions (`graphlsp.graph.ops`)."""

from __future__ import annotations

import difflib

from graph_helpers import HEADER, build
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlsp.graph import ops
from graphlsp.graph.suggest import Suggester


def test_schema_lookup_is_cached_and_normalized() -> None:
    assert ops.normalize_domain("ai.onnx") == "" and ops.normalize_domain("ai.onnx.ml") == "ai.onnx.ml"
    a = ops.schema_for("Relu", 18, "")
    assert a is not None and a.since_version == 14
    assert ops.schema_for("Relu", 18, "") is a  # cached: the same object
    assert ops.schema_for("NoSuchOp", 18, "") is None
    assert ops.op_versions("LayerNormalization", "")[0][0] == 17
    assert ops.op_versions("NoSuchOp", "") == []
    assert {"", "ai.onnx.ml"} <= ops.known_domains()


def test_closest_prefers_case_then_similarity() -> None:
    assert ops.closest("relu", ["Relu", "Elu"]) == "Relu"
    assert ops.closest("Softmx", ["Softmax", "Softsign", "Sin"]) == "Softmax"
    assert ops.closest("Zzz", ["Relu", "Softmax"]) is None
    assert ops.closest("Relu", ["Relu"]) is None  # never suggests the name itself


NAMES = [f"/b.{i}/{part}/{op}_output_{k}" for i in range(30) for part in ("l1", "a", "m") for op in ("Add", "MatMul")
         for k in range(4)]  # fmt: skip


EDITS = ["sub", "ins", "del", "swap"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(NAMES), st.integers(0, 10**6), st.sampled_from("xyz0123_"), st.sampled_from(EDITS))
def test_suggester_never_misses_a_one_edit_typo(name: str, where: int, ch: str, edit: str) -> None:
    i = where % len(name)
    typo = {
        "sub": name[:i] + ch + name[i + 1 :],
        "ins": name[:i] + ch + name[i:],
        "del": name[:i] + name[i + 1 :],
        "swap": name[:i] + name[i + 1 : i + 2] + name[i] + name[i + 2 :],
    }[edit]
    finder = Suggester(NAMES)
    assert not finder.small  # the bisection path, not plain difflib
    if typo in NAMES:
        return
    got = finder.closest(typo)
    assert got is not None and got in NAMES and name in finder.one_edit(typo)
    # at least as similar as the name the typo came from (which the search must have looked at)
    ratio = lambda x: difflib.SequenceMatcher(None, typo, x).ratio()  # noqa: E731
    assert ratio(got) >= ratio(name)


def test_undefined_value_suggestion_in_a_large_graph() -> None:
    body = "".join(f"  v{i} = Relu (x)\n" for i in range(700))
    text = HEADER + "g (float x) => (float y) {\n" + body + "  y = Sum (" + ", ".join(f"v{i}" for i in range(699))
    text += ", v_699)\n}\n"
    doc, _, findings = build(text)
    (f,) = [f for f in findings if f.kind == "undefined-value"]
    assert doc.text[f.start : f.end] == "v_699" and f.message.endswith("did you mean 'v699'?")
