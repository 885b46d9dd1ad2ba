"""`:GraphlspGraph` in a headless Neovim (>= 0.11) with editors/nvim against the real graphlsp server: the page of
the buffer's model (unsaved edits included; a binary model's view too) is written and opened with vim.ui.open
(recorded), and it is the page `graphlsp graph` writes for that graph."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import onnx
import pytest

from tests.editors.test_nvim import NVIM, SERVER, WHY, run_nvim

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BINARY = ROOT.parent / "shared" / "realworld" / "silero_vad_16k_op15.onnx"

pytestmark = pytest.mark.skipif(NVIM is None, reason=WHY)


def page_data(path: Path) -> dict:
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "window.ELK" in html  # the whole page, elkjs inlined
    m = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m[1].replace("<\\/", "</"))


def test_graphlsp_graph_writes_and_opens_the_page(tmp_path: Path) -> None:
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not here")
    model = tmp_path / "mlp.onnxtxt"
    shutil.copy(ROOT / "examples" / "mlp.onnxtxt", model)
    binary = tmp_path / BINARY.name
    shutil.copy(BINARY, binary)
    out = tmp_path / "pages"
    out.mkdir()
    r = run_nvim(HERE / "nvim_graph.lua", tmp_path, GRAPHLSP_CMD=json.dumps(SERVER), GRAPHLSP_FILE=str(model),
                 GRAPHLSP_BINARY=str(binary), GRAPHLSP_OUT=str(out))  # fmt: skip
    assert r["command"] is True and r["modified"] is True
    assert r["text_page"] == str(out / "text.html")
    data = page_data(out / "text.html")
    extra = [n for n in data["graph"]["nodes"] if n["outputs"] == ["extra"]]
    assert len(extra) == 1 and extra[0]["op"] == "Relu" and extra[0]["line"] == r["extra_line"]  # unsaved edit
    assert data["graph"]["types"]["extra"] == data["graph"]["types"]["h"] == "float[batch, 8]"
    assert model.read_text(encoding="utf-8") == (ROOT / "examples" / "mlp.onnxtxt").read_text(encoding="utf-8")
    # no file named: the cache folder
    default = Path(r["default_page"])
    assert default.name == "mlp.graph.html" and "graphlsp" in default.parts and page_data(default) == data

    assert r["view_filetype"] == "onnxtxt"
    view = page_data(Path(r["binary_page"]))
    proto = onnx.load(str(BINARY), load_external_data=False)
    assert [n["op"] for n in view["graph"]["nodes"]] == [n.op_type for n in proto.graph.node]
    for n in view["graph"]["nodes"]:  # lines of the view buffer
        assert n["op"] in r["view_lines"][n["line"]]
    assert r["refused"] is True
    assert r["opened"] == [r["text_page"], r["default_page"], r["binary_page"]]
    assert any("no graphlsp server is attached" in m for m in r["messages"])
