"""A header alone parses, but a model is its main graph: one GL101 saying so, as onnx's parser refuses it too."""

from __future__ import annotations

import onnx.parser
import pytest

from graphlsp.analysis import Analysis
from graphlsp.lint.diagnostics import collect_analysis

HEADER = '<ir_version: 8, opset_import: ["" : 17]>'


@pytest.mark.parametrize("text", [HEADER, HEADER + "\n# nothing else\n"])
def test_a_header_alone_is_a_syntax_error(text: str) -> None:
    with pytest.raises(Exception, match="Identifier expected"):
        onnx.parser.parse_model(text)
    (d,) = collect_analysis(Analysis(text), "m.onnxtxt")
    assert (d.code, d.line, d.col) == ("GL101", 1, len(HEADER) + 1)
    assert "main graph" in d.message


def test_the_finding_goes_once_the_graph_is_typed() -> None:
    a = Analysis(HEADER + "\n")
    assert [d.code for d in collect_analysis(a, "m.onnxtxt")] == ["GL101"]
    a.apply_edit(len(HEADER) + 1, len(HEADER) + 1, "g (float[N] x) => (float[N] y) {\n  y = Relu (x)\n}\n")
    assert collect_analysis(a, "m.onnxtxt") == []
