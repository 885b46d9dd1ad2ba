"""Binary models (*.onnx) in Neovim with editors/nvim against the real server: each model of ../shared/realworld
opens as its read-only text view (the plugin's BufReadCmd asks the server for it), with diagnostics (what
`graphlsp check` says of the binary), a hover with a node output's shape, `gd` from an input to its producer; `:w`
is refused and the file on disk stays byte for byte; a model changed on disk shows in the buffer."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

from tests.conftest import needs, shared_reason
from tests.editors.test_nvim import NVIM, WHY, run_nvim
from tests.lsp.binary_targets import realworld, targets

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, "-m", "graphlsp.cli", "serve"]
MODELS = realworld()

pytestmark = [
    needs(NVIM, WHY),
    needs(MODELS, shared_reason("realworld")),
]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_nvim_opens_every_real_model_as_a_read_only_view(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    copies = []
    for p in MODELS:  # writable copies: a write over one would show
        copy = models / p.name
        shutil.copyfile(p, copy)
        copies.append(copy)
    digests = {p: _digest(p) for p in copies}
    want = {p.name: targets(p) for p in copies}
    # the model that changes on disk: a copy of one model, replaced by another while it is open
    changing, replacement = tmp_path / "changing.onnx", MODELS[-1]
    shutil.copyfile(MODELS[0], changing)
    before = targets(changing)
    (tmp_path / "after").mkdir()
    shutil.copyfile(replacement, tmp_path / "after" / changing.name)  # the view's first line names the file
    after = targets(tmp_path / "after" / changing.name)
    spec = {
        "models": [{"path": str(p), "codes": sorted(d.code for d in want[p.name].check), "hover": want[p.name].hover,
                    "use": want[p.name].use} for p in copies],  # fmt: skip
        "change": {"path": str(changing), "replacement": str(replacement), "sha256_after": after.sha256,
                   "codes_before": sorted(d.code for d in before.check),
                   "codes_after": sorted(d.code for d in after.check)},  # fmt: skip
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    r = run_nvim(HERE / "nvim_binary.lua", tmp_path, GRAPHLSP_CMD=json.dumps(SERVER),
                 GRAPHLSP_SPEC=str(tmp_path / "spec.json"))  # fmt: skip
    assert r.get("done") is True, r
    assert [m["name"] for m in r["models"]] == [p.name for p in copies]
    for m in r["models"]:
        t = want[m["name"]]
        assert m["filetype"] == "onnxtxt" and m["modifiable"] is False and m["readonly"] is True, m
        assert m["sha256"] == t.sha256, f"{m['name']}: the buffer is not the server's view"
        assert m["codes"] == sorted(d.code for d in t.check), m["name"]  # `graphlsp check` on the binary
        _, _, name, ty = t.hover
        assert m["hover"][0] == f"**{name}**: `{ty}`", (m["name"], m["hover"])
        assert m["gd_line"] == t.use[3], m["name"]
        assert t.use[2] in m["gd_word"], (m["name"], m["gd_word"])
        # :w stops at 'readonly' (E45), :w! at the plugin's BufWriteCmd, which says why
        assert m["write"]["ok"] is False and "E45" in m["write"]["error"], m["write"]
        assert [msg for msg in m["write_messages"] if "never written" in msg], m["write_messages"]
        assert m["edit_ok"] is False and m["sha256_after"] == t.sha256
    for p, digest in digests.items():
        assert _digest(p) == digest, f"{p.name} changed on disk"
    assert not [p for p in models.iterdir() if p.suffix != ".onnx"], "nothing written beside the models"
    change = r["change"]
    assert change["sha256_before"] == before.sha256 and change["sha256_after"] == after.sha256
    assert change["codes_after"] == sorted(d.code for d in after.check) and change["modified"] is False
    assert not [msg for msg in r["messages"] if "read-only view" in msg], r["messages"]  # a refresh is no edit
