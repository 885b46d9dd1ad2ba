"""Sizes checked against the model: `--dim`, `--input-shape`, config `dims` / `input-shapes` and `--target` that
the model (or the program) cannot take are usage errors (exit 2) naming the option, with the nearest name."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from graphlsp.cli import main
from tests.conftest import ROOT

CNN = ROOT / "corpus" / "models" / "ortsess_cnn.onnx"  # pixel_values [batch_size, 3, height, width]
VIT = ROOT / "corpus" / "models" / "optimum_vit.onnx"  # pixel_values [batch_size, 3, 32, 32]
BERT = ROOT / "corpus" / "models" / "optimum_bert.onnx"  # [batch_size, sequence_length]: no height


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("args", "said"), [
    (["--dim", "heigth=64"], "--dim heigth=64: no dim of the model is named 'heigth' (did you mean 'height'?)"),
    (["--dim", "batch=2"], "(did you mean 'batch_size'?)"),
    (["--input-shape", "pixel_value=1x3x64x64"], "--input-shape pixel_value=1x3x64x64: the model has no input "
                                                 "'pixel_value' (did you mean 'pixel_values'?)"),
    (["--input-shape", "pixel_values=1x64x64"], "'pixel_values' has 4 dims ([batch_size, 3, height, width]), "
                                                "1x64x64 has 3"),
    (["--input-shape", "pixel_values=1x4x64x64"], "dim 1 of 'pixel_values' ([batch_size, 3, height, width]) is fixed "
                                                  "at 3, not 4"),
    (["--dim", "batch_size=2", "--input-shape", "pixel_values=1x3x64x64"], "dim 0 of 'pixel_values' is batch_size, "
                                                                           "given as 2, not 1"),
    (["--dim", "height=0"], "--dim height: '0' is not a size (a positive integer"),
    (["--input-shape", "pixel_values=1x3x0x8"], "'0' is not a size (a positive integer"),
])  # fmt: skip
def test_sizes_the_model_contradicts(capsys: pytest.CaptureFixture[str], args: list[str], said: str) -> None:
    for command in (["check", "--no-cache"], ["shapes"]):
        code, out, err = run(capsys, *command, *args, str(CNN))
        assert code == 2 and said in err and out == "", (command, err)
        assert "Traceback" not in err and "invalid literal" not in err


def test_a_fixed_dim_onnxruntime_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    """The oracle: onnxruntime refuses the size graphlsp refuses ("Got: 224 Expected: 32"), and runs the one it
    takes."""
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(VIT), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="Got: 224 Expected: 32"):
        session.run(None, {"pixel_values": np.zeros((2, 3, 224, 224), np.float32)})
    session.run(None, {"pixel_values": np.zeros((2, 3, 32, 32), np.float32)})
    code, _, err = run(capsys, "check", "--no-cache", "--input-shape", "pixel_values=2x3x224x224", str(VIT))
    assert code == 2 and "dim 2 of 'pixel_values' ([batch_size, 3, 32, 32]) is fixed at 32, not 224" in err
    code, _, err = run(capsys, "check", "--no-cache", "--input-shape", "pixel_values=2x3x32x32", str(VIT))
    assert code != 2 and "error:" not in err


def test_config_sizes_are_checked_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copyfile(CNN, tmp_path / "cnn.onnx")
    (tmp_path / "graphlsp.toml").write_text('dims = { heigth = 64 }\ninput-shapes = { pixel_values = [1, 3, 8] }\n')
    for _ in range(2):  # the second run reads the results cache: it refuses the sizes all the same
        code, out, err = run(capsys, "check", str(tmp_path))
        assert code == 2 and out == ""
        assert f"{tmp_path / 'graphlsp.toml'}: dims: heigth: no dim of the model is named 'heigth' (did you mean " \
               "'height'?)" in err, err  # fmt: skip
        assert "input-shapes: pixel_values: 'pixel_values' has 4 dims" in err
    (tmp_path / "graphlsp.toml").write_text("dims = { height = 0 }\n")
    code, _, err = run(capsys, "check", "--no-cache", str(tmp_path))
    assert code == 2 and "positive integers" in err


def test_a_name_is_unknown_when_no_model_of_the_folder_has_it(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:  # fmt: skip
    shutil.copyfile(CNN, tmp_path / "cnn.onnx")
    shutil.copyfile(BERT, tmp_path / "bert.onnx")
    code, _, err = run(capsys, "check", "--no-cache", "--dim", "height=64", str(tmp_path))
    assert code != 2 and "error:" not in err, "the CNN has height: bert need not"
    code, _, err = run(capsys, "check", "--no-cache", "--dim", "heigth=64", str(tmp_path))
    assert code == 2 and "--dim heigth=64: no dim of the model is named 'heigth'" in err


@pytest.mark.parametrize(("target", "said"), [
    ("ort:cpu", "graphlsp: error: --target: unknown target 'ort:cpu' (did you mean 'onnxruntime:cpu'?)"),
    ("onnxruntime:cuad", "(did you mean 'onnxruntime:cuda'?)"),
    (",", "--target: no target given"),
    ("", "--target: no target given"),
])  # fmt: skip
def test_targets(capsys: pytest.CaptureFixture[str], target: str, said: str) -> None:
    code, _, err = run(capsys, "check", "--no-cache", "--target", target, str(CNN))
    assert code == 2 and said in err and "targets: unknown" not in err, err


def test_one_refusal_of_many_models_is_said_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for name in ("a.onnx", "b.onnx", "c.onnx"):
        shutil.copyfile(VIT, tmp_path / name)
    shutil.copyfile(CNN, tmp_path / "cnn.onnx")  # takes 224: no error of its own
    code, out, err = run(capsys, "check", "--no-cache", "--input-shape", "pixel_values=1x3x224x224", str(tmp_path))
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("graphlsp: error: --input-shape pixel_values=1x3x224x224: dim 2 of 'pixel_values'")
    assert line.endswith(f"(3 models: {tmp_path / 'a.onnx'}, {tmp_path / 'b.onnx'}, {tmp_path / 'c.onnx'})"), line


def test_a_config_name_the_files_given_lack_is_a_warning(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The config is the project's: a model without its `height` (bert) checked alone, as pre-commit checks the
    files a commit changes, is checked, with a warning; the folder, where no model has `heigth`, is refused."""
    shutil.copyfile(BERT, tmp_path / "bert.onnx")
    (tmp_path / "graphlsp.toml").write_text("dims = { height = 64 }\n")
    code, out, err = run(capsys, "check", "--no-cache", str(tmp_path / "bert.onnx"))
    assert code == 0 and "in 1 file." in out
    assert "graphlsp: warning: " in err and "dims: height: no dim of the model is named 'height'" in err
    code, out, err = run(capsys, "shapes", str(tmp_path / "bert.onnx"))
    assert code == 0 and "input_ids" in out and "graphlsp: warning: " in err
    code, _, err = run(capsys, "check", "--no-cache", str(tmp_path))
    assert code == 2 and "graphlsp: error: " in err
