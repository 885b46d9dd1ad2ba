"""`graphlsp fold` on binary models: a binary comes out, onnxruntime computes the same outputs with it, and every
initializer and node that did not fold is the same message as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from graphlsp.cli import main
from tests.binary.models import feeds, real_models, run
from tests.conftest import needs, shared, shared_reason

MODELS = [p for p in real_models() if p.stat().st_size < 12 << 20]


@needs(MODELS, shared_reason("realworld"))
@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_fold_writes_a_binary_that_computes_the_same(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "folded.onnx"
    for data in path.parent.glob(path.name + ".*"):  # external data: the folded model goes beside it, and so
        shutil.copyfile(data, tmp_path / data.name)  # does the source here
    if any(tmp_path.iterdir()):
        path = Path(shutil.copyfile(path, tmp_path / path.name))
    assert main(["fold", str(path), "-o", str(out)]) == 0
    before, after = onnx.load(path), onnx.load(out)
    try:
        onnx.checker.check_model(before)
    except onnx.checker.ValidationError:  # an op onnx does not define (the GenAI builder's): onnxruntime judges
        pass
    else:
        onnx.checker.check_model(after)
    assert [t.SerializeToString() for t in before.graph.initializer] == [
        t.SerializeToString() for t in after.graph.initializer
    ]
    kept = {n.SerializeToString() for n in after.graph.node}
    untouched = [n for n in before.graph.node if n.SerializeToString() in kept]
    assert len(untouched) >= len(after.graph.node) - sum(n.op_type == "Constant" for n in after.graph.node)
    inputs = feeds(before)
    try:
        want = run(before.SerializeToString(), inputs)
    except Exception as e:  # the model needs inputs of a kind our feeder does not make
        pytest.skip(f"onnxruntime does not run it on generic inputs: {str(e)[:120]}")
    got = run(after.SerializeToString(), inputs)
    for a, b in zip(want, got, strict=True):
        # a folded value is rounded once where the runtime may round twice: floats agree to 1e-5
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(a, b)


def test_fold_never_writes_text_to_a_binary_path_or_binary_to_a_text_path(tmp_path: Path) -> None:
    text = tmp_path / "m.onnxtxt"
    text.write_text('<ir_version: 10, opset_import: ["" : 21]>\ng (float[2] x) => (float[2] y) {\n  y = Relu (x)\n}\n')
    assert main(["fold", str(text), "-o", str(tmp_path / "out.onnx")]) == 2
    assert not (tmp_path / "out.onnx").exists()
    binary = tmp_path / "m.onnx"
    onnx.save(onnx.parser.parse_model(text.read_text()), binary)
    assert main(["fold", str(binary), "-o", str(tmp_path / "out.onnxtxt")]) == 2
    assert not (tmp_path / "out.onnxtxt").exists()


def test_fix_on_a_binary_writes_a_binary_without_the_unused_initializers(tmp_path: Path) -> None:
    source = shared("realworld", "silero_vad_op18_ifless.onnx")  # pytorch 2.9 left three initializers nothing reads
    path = tmp_path / "m.onnx"
    path.write_bytes(source.read_bytes())
    assert main(["check", "--no-cache", "--diff", str(path)]) == 1
    assert path.read_bytes() == source.read_bytes()  # --diff writes nothing
    assert main(["check", "--no-cache", "--fix", str(path)]) == 0
    before, after = onnx.load(source), onnx.load(path)
    gone = {t.name for t in before.graph.initializer} - {t.name for t in after.graph.initializer}
    assert gone == {"val_7", "val_41", "val_7_2"}
    assert [n.SerializeToString() for n in before.graph.node] == [n.SerializeToString() for n in after.graph.node]
    kept = {t.name: t.SerializeToString() for t in after.graph.initializer}
    assert all(kept[t.name] == t.SerializeToString() for t in before.graph.initializer if t.name in kept)
    inputs = feeds(before, size=512)  # silero reads 512-sample chunks
    for a, b in zip(run(before.SerializeToString(), inputs), run(after.SerializeToString(), inputs), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert main(["check", "--no-cache", str(path)]) == 0
