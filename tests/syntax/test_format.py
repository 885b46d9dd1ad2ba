"""Formatting: the same model, every comment kept in order, and formatting the result changes nothing."""

from __future__ import annotations

import re

import onnx.parser
import onnx.printer
import pytest

from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.format import format_text
from graphlsp.syntax.to_proto import model_to_proto
from tests.conftest import example_texts
from tests.corpus import corpus_models

COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|#[^\n]*')


def comments(text: str) -> list[str]:
    return [m.group().rstrip() for m in COMMENT.finditer(text) if m.group().startswith("#")]


def check(text: str) -> str:
    formatted = format_text(text)
    assert formatted is not None
    assert model_to_proto(SyntaxDocument(formatted).model) == model_to_proto(SyntaxDocument(text).model)
    assert comments(formatted) == comments(text)
    assert format_text(formatted) == formatted
    assert all(line == line.rstrip() for line in formatted.splitlines())
    return formatted


@pytest.mark.parametrize("name", [n for n in example_texts() if n != "broken.onnxtxt"])
def test_examples_format_to_the_same_model(name: str) -> None:
    check(example_texts()[name])


def test_corpus_models_format_to_the_same_model() -> None:
    models = corpus_models("node")[::20] + corpus_models("pytorch-operator")
    for _, model in models:
        check(onnx.printer.to_text(model))


def test_layout_is_canonical() -> None:
    messy = '<ir_version: 8, opset_import: ["" : 18]>\ng (float[N] x) => (float[N] y) {\n  a=Relu(x)   # keep me\n\n\n\n       y   =  Abs  ( a )\n}\n'
    assert check(messy) == (
        '<ir_version: 8, opset_import: ["" : 18]>\ng (float[N] x) => (float[N] y) {\n'
        "   a = Relu (x)  # keep me\n\n   y = Abs (a)\n}\n"
    )


def test_files_with_syntax_errors_are_not_formatted() -> None:
    assert format_text('<ir_version: 8>\ng (float x) => (float y) {\n  y = Relu (x\n}\n') is None


# onnx's printer writes `...` for the data of these types (and its parser cannot read that back)
ELIDED = ["complex64", "complex128", "int4", "uint4", "int2", "uint2", "float4e2m1", "float6e2m3", "float6e3m2"]


@pytest.mark.parametrize("elem", ELIDED)
def test_data_onnx_printer_elides_is_kept(elem: str) -> None:
    values = "{1.5, -2.25, 0, 3}" if elem.startswith("complex") else "{1, 0, 1, 1}"
    text = (
        '<ir_version: 10, opset_import: ["" : 23]>\n'
        "g (bool c) => (y, z, w) {\n"
        f"  y   =   Constant <value = {elem}[4] {values}> ()\n"
        f"  z = If (c) <then_branch = t () => (a) {{ a = Constant <value = {elem}[4] {values}> () }},\n"
        f"               else_branch = e () => (b) {{ b = Constant <value = {elem}[4] {values}> () }}>\n"
        "  w = Constant <value = float[2] {1, 2}> ()\n"
        "}\n"
    )
    formatted = check(text)
    assert formatted.count(values) == 3 and "..." not in formatted
    assert "   w = Constant <value: tensor = float[2] {1,2}> ()" in formatted  # the others are still formatted
    assert onnx.parser.parse_model(formatted) == onnx.parser.parse_model(text)


def test_tensor_names_and_empty_labels_format_to_the_same_model() -> None:
    text = (
        '<ir_version: 10, opset_import: ["" : 21]>\n'
        "g (float[2] x) => (y, z) {\n"
        "  y = Constant <value = float[2] named {1, 2}> ()\n"
        "  [] z = Relu (x)\n"
        "}\n"
    )
    formatted = check(text)
    assert onnx.parser.parse_model(formatted) == onnx.parser.parse_model(text)
