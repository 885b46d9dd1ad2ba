"""`graphlsp cost` on the inputs that broke other commands (tests/test_never_crash.py's) and on bodies it must not
follow forever: an answer, exit 0, never a traceback; what it cannot count it says is unknown, with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphlsp.cli import main
from tests.test_never_crash import H, function_chain, nested_ifs

CASES = {
    "nested ifs": nested_ifs(60),
    "function chain": function_chain(40),
    "recursive function": function_chain(4, recursive=True),
    "no nodes": H + "g (float[N] x) => (float[N] x) {\n}\n",
    "no inputs": H + "g () => (float[3] y) {\n  y = Constant <value = float[3] {1, 2, 3}> ()\n}\n",
    "unknown op": H + "g (float[N] x) => (y) {\n  y = com.acme.Frob (x)\n}\n",
    "bad attributes": H + 'g (float[N, 4, H, W] x, float[8, 4, 3, 3] w) => (y, z) {\n  y = Conv <kernel_shape = "x"> '
                      "(x, w)\n  z = Einsum <equation = \"ab,,->\"> (x, w)\n}\n",
    "loop without trip count": H + "g (bool c, float[2] x) => (y) {\n  y = Loop (, c, x) <body = b (int64 i, bool k,"
                               " float[2] a) => (bool k2, float[2] a2) {\n  k2 = Identity (k)\n  a2 = Relu (a)\n"
                               "}>\n}\n",
    "scan without inputs": H + "g (float[2] s) => (t) {\n  t = Scan <num_scan_inputs = 0, body = b (float[2] a) => "
                           "(float[2] a2) {\n  a2 = Relu (a)\n}> (s)\n}\n",
    "strings": H + "g (string[N] x) => (y) {\n  y = Identity (x)\n}\n",
}


@pytest.mark.parametrize("name", list(CASES))
def test_cost_never_crashes(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.onnxtxt"
    path.write_text(CASES[name])
    for args in ([], ["--by", "node", "--format", "json"], ["--by", "op", "--format", "csv"]):
        code = main(["cost", str(path), *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "internal error" not in err and "Traceback" not in err
    data = json.loads(main(["cost", str(path), "--format", "json"]) == 0 and capsys.readouterr().out)
    assert all(u["why"] for u in data["unknown"])  # every unknown count says why


def test_unbounded_loop_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.onnxtxt"
    path.write_text(CASES["loop without trip count"])
    main(["cost", str(path), "--format", "json"])
    unknown = json.loads(capsys.readouterr().out)["unknown"]
    assert [u["op"] for u in unknown] == ["Loop"] and unknown[0]["why"].startswith("unbounded: ")
