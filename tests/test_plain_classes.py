"""The value classes a check imports are plain classes (a dataclass costs an exec() per class at each start-up),
and behave as the dataclasses they replaced: constructor, repr, equality, hashing, frozenness, pickling."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from graphlsp.frozen import FrozenInstanceError
from graphlsp.graph.core import Node, TypeSpec
from graphlsp.infer.sizes import InputSizes
from graphlsp.infer.types import SequenceType, TensorType
from graphlsp.lint.config import Settings
from graphlsp.ops.signature import Param

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "corpus" / "models" / "optimum_bart__decoder_model_merged.onnx"

_DATACLASSES_AFTER_CHECK = """
import dataclasses, json, sys
import graphlsp.cli
try:
    graphlsp.cli.main(["check", "--no-cache", "--quiet", sys.argv[1]])
except SystemExit:
    pass
print(json.dumps(sorted({f"{c.__module__}.{c.__qualname__}" for m in list(sys.modules.values())
                         if getattr(m, "__name__", "").startswith("graphlsp") for c in vars(m).values()
                         if isinstance(c, type) and c.__module__ == m.__name__ and dataclasses.is_dataclass(c)})))
"""


def test_a_check_creates_no_dataclass() -> None:
    out = subprocess.run([sys.executable, "-c", _DATACLASSES_AFTER_CHECK, str(MODEL)], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert json.loads(out.strip().splitlines()[-1]) == []  # after the check's own findings (GL320 is info)


def test_a_check_imports_none_of_the_modules_it_does_not_use() -> None:
    code = "import sys, graphlsp.cli\ntry:\n    graphlsp.cli.main(['check', '--no-cache', '--quiet', sys.argv[1]])\n" \
           "except SystemExit:\n    pass\nprint(sorted(m for m in ('dataclasses', 'pathlib', 'json', 'threading', 'argparse') " \
           "if m in sys.modules))"  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code, str(MODEL)], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    assert out.strip().splitlines()[-1] == "[]"  # after the check's own findings (GL320 is info)


def test_frozen_value_refuses_change_and_survives_pickle_and_copy() -> None:
    t = TensorType(1, (2, "n"))
    assert repr(t) == "TensorType(elem=1, shape=(2, 'n'), sparse=False)"
    for change in (lambda: setattr(t, "elem", 3), lambda: delattr(t, "shape"), lambda: setattr(t, "other", 1)):
        with pytest.raises(FrozenInstanceError):
            change()
    for again in (pickle.loads(pickle.dumps(t)), copy.copy(t), copy.deepcopy(t)):
        assert again == t and hash(again) == hash(t) and type(again) is TensorType
    assert t.elem == 1 and t.shape == (2, "n")


def test_equality_is_by_fields_of_the_same_class() -> None:
    assert TensorType(1, (2,)) == TensorType(1, (2,)) != TensorType(1, (2,), sparse=True)
    assert SequenceType(None) != TensorType(None, ())  # another class, even with equal leading fields
    assert hash(TypeSpec("tensor", 1, (3,))) == hash(TypeSpec("tensor", 1, (3,)))
    assert Param("X", "T", "single", True, 1) != Param("X", "T", "single", True, 2)
    with pytest.raises(TypeError):
        hash(Settings())  # mutable: unhashable, as a dataclass with eq and without frozen


def test_default_factories_give_fresh_objects() -> None:
    a, b = Settings(), Settings()
    assert a == b and a.select == [] and a.select is not b.select and a.sizes == InputSizes()
    n1, n2 = (Node(None, 0, None, "", "Relu") for _ in range(2))  # type: ignore[arg-type]
    assert n1.inputs == [] and n1.inputs is not n2.inputs and n1.attributes is not n2.attributes
    assert n1 != n2  # nodes compare by identity


def test_settings_pickle_keeps_its_fields() -> None:
    s = Settings(select=["GL1"], sizes=InputSizes((("batch", 8),)))
    assert pickle.loads(pickle.dumps(s)) == s


def test_a_fold_of_text_imports_none_of_the_modules_it_does_not_use(tmp_path: Path) -> None:
    """lark (a text that parses), argparse, dataclasses and the report's modules (a fold that succeeds)."""
    code = "import sys, graphlsp.cli\ntry:\n    graphlsp.cli.main(['fold', sys.argv[1], '-o', sys.argv[2]])\n" \
           "except SystemExit:\n    pass\nprint(sorted(m for m in ('lark', 'argparse', 'dataclasses', 'urllib.parse', " \
           "'graphlsp.lint.output') if m in sys.modules))"  # fmt: skip
    model, out = ROOT / "examples" / "attention.onnxtxt", str(tmp_path / "folded.onnxtxt")
    for _ in range(2):  # the first run of a new grammar (or lark) makes the kept parse table with lark
        found = subprocess.run([sys.executable, "-c", code, str(model), out], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout  # fmt: skip
    assert found.strip().splitlines()[-1] == "[]"
