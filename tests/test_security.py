"""A cloned repository is untrusted input (docs/security.md, issue 32): each attack a repository built in a
temporary folder, run as CI and an editor run graphlsp on it. Nothing outside the repository is printed (the planted
secrets are looked for in stdout, stderr and every message the server sends), no file outside it changes, no code
from it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL = "<ir_version: 8, opset_import: [\"\" : 18]>\nagraph (float[N] X) => (float[N] Y) {\n  Y = Relu (X)\n}\n"
SECRETS = ("SECRET-PASSWD-7f3a", "SECRET-DOTENV-91bc", "SECRET-ENVIRON-4d2e", "SECRET-INREPO-c0de")


def _outside(tmp_path: Path) -> tuple[Path, Path]:
    """(the folder that holds the repository and the secrets beside it, the repository)."""
    home = tmp_path / "home"
    repo = home / "work" / "repo"
    (repo / "models").mkdir(parents=True)
    (home / "passwd").write_text(f"root:x:0:0:{SECRETS[0]}:/root:/bin/bash\n")
    (home / ".env").write_text(f"DB_PASSWORD={SECRETS[1]}\nCI_DEPLOY_TOKEN={SECRETS[1]}\n")
    (home / "victim").write_text("precious\n")
    (repo / "models" / "good.onnxtxt").write_text(MODEL)
    return home, repo


def _run(args: list[str], cwd: Path, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(home.parent / "usercache"), "GRAPHLSP_TEST_TOKEN": SECRETS[2]}
    return subprocess.run([sys.executable, "-P", "-m", "graphlsp.cli", *args, *extra], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret} printed:\n{text}"


def _snapshot(folder: Path, skip: Path) -> dict[str, bytes | str]:
    """Every file under `folder` but those under `skip` (the repository): bytes, or a link's target."""
    out: dict[str, bytes | str] = {}
    for dirpath, _, names in os.walk(folder):
        if Path(dirpath) == skip or skip in Path(dirpath).parents:
            continue
        for name in names:
            p = Path(dirpath) / name
            out[str(p)] = os.readlink(p) if p.is_symlink() else p.read_bytes()
    return out


# ---- 1: secrets through links and files that are no models


def test_the_folder_walk_follows_no_link_out_and_prints_nothing_of_a_file_that_is_no_model(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    (repo / "models" / "bert.onnxtxt").symlink_to(home / "passwd")
    (repo / "models" / "env.onnxtxt").symlink_to("/proc/self/environ")
    (repo / "models" / "resnet.onnxtxt").symlink_to("../../../.env")
    (repo / "models" / "inside.onnxtxt").symlink_to("good.onnxtxt")  # a link inside the tree is one of its files
    (repo / "models" / "notes.onnxtxt").write_text(f"password = {SECRETS[3]}\nmore = lines\n")
    r = _run(["check", "--no-cache", "."], repo, home)
    _no_secret(r.stdout, r.stderr)
    assert "bert" not in r.stdout + r.stderr and "env.onnxtxt" not in r.stdout + r.stderr
    assert "resnet" not in r.stdout + r.stderr
    assert "notes.onnxtxt" in r.stdout and "is not a model" in r.stdout, r.stdout
    j = _run(["check", "--no-cache", "--format", "json", "."], repo, home)
    findings = json.loads(j.stdout)
    assert sorted({Path(f["file"]).name for f in findings}) == ["notes.onnxtxt"]
    assert [f["code"] for f in findings] == ["GL105"]  # one finding for the whole file


def test_named_files_as_pre_commit_passes_them_are_read_but_never_quoted(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    (repo / "models" / "bert.onnxtxt").symlink_to(home / "passwd")
    (repo / "models" / "env.onnxtxt").symlink_to("/proc/self/environ")
    (repo / "models" / "resnet.onnxtxt").symlink_to("../../../.env")
    (repo / "lib.onnxop").symlink_to(home / ".env")
    names = ["models/bert.onnxtxt", "models/env.onnxtxt", "models/resnet.onnxtxt", "lib.onnxop"]
    for fmt in ("text", "json", "sarif", "github", "concise"):
        r = _run(["check", "--no-cache", "--format", fmt, *names], repo, home)
        _no_secret(r.stdout, r.stderr)
        assert r.returncode == 2  # /proc/self/environ is refused outright
    r = _run(["check", "--no-cache", *names], repo, home)
    assert "models/env.onnxtxt: a file of the kernel's /proc file system" in r.stderr, r.stderr
    for name in ("models/bert.onnxtxt", "models/resnet.onnxtxt", "lib.onnxop"):
        assert f"{name}:1:1: error: GL105" in r.stdout and "nothing of it is shown" in r.stdout, r.stdout
    for cmd in (["graph", "--format", "json", "models/bert.onnxtxt"], ["fold", "models/resnet.onnxtxt"],
                ["shapes", "models/bert.onnxtxt"], ["convert", "models/env.onnxtxt", "-"]):  # fmt: skip
        r = _run(cmd, repo, home)
        _no_secret(r.stdout, r.stderr)


# ---- 2: the repository's config names files outside it


@pytest.mark.parametrize("entry", ["../../../.env", "/proc/self/environ", "/etc/pass*", "../../../pass*",
                                   "models/../../../../.env", "up/.env"])  # fmt: skip
def test_a_repositorys_config_names_nothing_outside_it(tmp_path: Path, entry: str) -> None:
    home, repo = _outside(tmp_path)
    (repo / "up").symlink_to(home)
    (repo / "pyproject.toml").write_text(f'[tool.graphlsp]\nop-libraries = ["{entry}"]\n')
    r = _run(["check", "--no-cache", "models/good.onnxtxt"], repo, home)
    _no_secret(r.stdout, r.stderr)
    assert r.returncode == 2 and "op-libraries" in r.stderr and ("outside" in r.stderr or "out of" in r.stderr
                                                                  or "absolute" in r.stderr), r.stderr  # fmt: skip


def test_a_config_file_that_names_a_file_of_the_repository_that_is_no_op_library_quotes_nothing(
    tmp_path: Path,
) -> None:
    home, repo = _outside(tmp_path)
    (repo / ".env").write_text(f"TOKEN={SECRETS[3]}\n")
    (repo / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = [".env"]\nper-file-ignores = {}\n')
    r = _run(["check", "--no-cache", "models/good.onnxtxt"], repo, home)
    _no_secret(r.stdout, r.stderr)
    assert r.returncode == 2 and "is not an op library" in r.stderr, r.stderr
    (repo / "pyproject.toml").write_text('[tool.graphlsp]\nper-file-ignores = { "../*" = ["GL2"] }\n')
    r = _run(["check", "--no-cache", "models/good.onnxtxt"], repo, home)
    assert r.returncode == 2 and "per-file-ignores" in r.stderr and "'..'" in r.stderr, r.stderr


def test_the_users_own_config_may_name_files_anywhere(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    (home / "ops").mkdir()
    (home / "ops" / "a.onnxop").write_text("library mine\ndomain my.ops\n")
    own = home / "graphlsp.toml"
    own.write_text(f'op-libraries = ["{home}/ops/*.onnxop", "{home}/ops/a.onnxop"]\n')
    r = _run(["check", "--no-cache", "--config", str(own), "models/good.onnxtxt"], repo, home)
    assert r.returncode == 0, r.stderr


# ---- 3: writes through planted links


def test_the_result_cache_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    elsewhere = home / "elsewhere"
    elsewhere.mkdir()
    (repo / ".graphlsp_cache").symlink_to(elsewhere, target_is_directory=True)
    before = _snapshot(home, repo)
    r = _run(["check", "."], repo, home)
    assert r.returncode == 0, r.stderr
    assert _snapshot(home, repo) == before
    assert list(elsewhere.iterdir()) == []
    (repo / ".graphlsp_cache").unlink()
    (repo / ".graphlsp_cache").mkdir()
    (repo / ".graphlsp_cache" / ".gitignore").symlink_to(home / "victim")
    r = _run(["check", "."], repo, home)
    assert r.returncode == 0, r.stderr
    assert (home / "victim").read_text() == "precious\n"
    assert not (repo / ".graphlsp_cache" / ".gitignore").is_symlink()
    assert len(list((repo / ".graphlsp_cache").glob("*.json"))) == 1
    r = _run(["check", "."], repo, home)  # read back from the cache: the same answer
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


def test_planted_cache_entries_are_never_read(tmp_path: Path) -> None:
    """A repository that ships `.graphlsp_cache/` cannot have its entries taken for graphlsp's: every key holds
    the user's own salt."""
    home, repo = _outside(tmp_path)
    r = _run(["check", "models/good.onnxtxt"], repo, home)
    assert r.returncode == 0
    entries = list((repo / ".graphlsp_cache").glob("*.json"))
    assert len(entries) == 1
    forged = {"diagnostics": [{"file": "x", "line": 1, "col": 1, "end_line": 1, "end_col": 1, "severity": "error",
                               "code": "GL101", "name": "syntax-error", "message": SECRETS[3]}]}  # fmt: skip
    entries[0].write_text(json.dumps(forged))
    (home.parent / "usercache" / "graphlsp" / "salt").unlink()  # another user (or a fresh machine) runs it
    r = _run(["check", "models/good.onnxtxt"], repo, home)
    _no_secret(r.stdout, r.stderr)
    assert r.returncode == 0, r.stdout


def test_outputs_replace_a_planted_link_and_never_write_through_it(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    m = repo / "m.onnxtxt"
    m.write_text(MODEL.replace("Y = Relu (X)", "C = Constant <value = float[1] {1.0}> ()\n  D = Add (C, C)\n"
                               "  Y = Add (X, D)"))  # fmt: skip
    (repo / "m.graph.html").symlink_to(home / "victim")
    r = _run(["graph", "m.onnxtxt"], repo, home)
    assert r.returncode == 0, r.stderr
    assert (home / "victim").read_text() == "precious\n"
    assert not (repo / "m.graph.html").is_symlink() and "<svg" in (repo / "m.graph.html").read_text()
    (repo / "m.folded.onnxtxt").symlink_to(home / "victim")
    r = _run(["fold", "m.onnxtxt", "-o", "m.folded.onnxtxt"], repo, home)
    assert r.returncode == 0, r.stderr
    assert (home / "victim").read_text() == "precious\n" and not (repo / "m.folded.onnxtxt").is_symlink()
    r = _run(["convert", "m.onnxtxt", "m.onnx"], repo, home)
    assert r.returncode == 0, r.stderr
    (repo / "m.folded.onnx").symlink_to(home / "victim")
    r = _run(["fold", "m.onnx", "-o", "m.folded.onnx"], repo, home)
    assert r.returncode == 0, r.stderr
    assert (home / "victim").read_text() == "precious\n" and not (repo / "m.folded.onnx").is_symlink()
    (repo / "x.onnxtxt").symlink_to(home / "victim")
    r = _run(["convert", "m.onnx", "x.onnxtxt"], repo, home)
    assert (home / "victim").read_text() == "precious\n"


def test_check_fix_replaces_a_link_and_keeps_the_file_it_named(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    outside_model = home / "model.onnxtxt"
    outside_model.write_text(MODEL.replace("Y = Relu (X)", "Z = Relu (X)\n  Y = Relu (X)"))
    (repo / "fixme.onnxtxt").symlink_to(outside_model)
    r = _run(["check", "--no-cache", "--fix", "--unsafe-fixes", "fixme.onnxtxt"], repo, home)
    assert "Z = Relu" in outside_model.read_text(), r.stderr  # the model outside is not written


def test_the_servers_commands_write_through_no_planted_link(tmp_path: Path) -> None:
    """The server's "save as text" and "fold" commands (graphlsp/lsp/commands.py) used to write `<target>.tmp`,
    which a repository could plant as a link."""
    from graphlsp.lsp import commands, views

    home, repo = _outside(tmp_path)
    r = _run(["convert", "models/good.onnxtxt", "m.onnx"], repo, home)
    m = repo / "m.onnx"
    m.write_bytes(_foldable_binary())
    for name in ("m.onnxtxt.tmp", "m.folded.onnx.tmp", "m.onnxtxt", "m.folded.onnx"):
        (repo / name).symlink_to(home / "victim")
    (repo / "m.folded.onnx").unlink()
    commands._write_text(str(repo / "m.onnxtxt"), views.model_text(str(m)))
    assert views.fold_binary(str(m), str(repo / "m.folded.onnx"), 1 << 20)[0] > 0
    assert (home / "victim").read_text() == "precious\n"
    assert not (repo / "m.onnxtxt").is_symlink() and not (repo / "m.folded.onnx").is_symlink()
    assert r.returncode == 0


def _foldable_binary() -> bytes:
    import onnx
    from onnx import TensorProto, helper

    c = helper.make_node("Constant", [], ["c"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
    d = helper.make_node("Add", ["c", "c"], ["d"])
    y = helper.make_node("Add", ["x", "d"], ["y"])
    g = helper.make_graph([c, d, y], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return onnx.ModelProto.SerializeToString(model)


# ---- 4: a glob that never ends


@pytest.mark.parametrize("pattern", ["d/**/**/**/**/**/**/**/**/*.onnxop", "/**/*.x"])
def test_a_glob_past_its_budget_is_a_config_error_within_two_seconds(tmp_path: Path, pattern: str) -> None:
    home, repo = _outside(tmp_path)
    deep = repo / "d"
    for i in range(40):
        deep = deep / f"n{i}"
    deep.mkdir(parents=True)
    (deep / "x.onnxop").write_text("library x\n")
    (repo / "pyproject.toml").write_text(f'[tool.graphlsp]\nop-libraries = ["{pattern}"]\n')
    from graphlsp.lint.config import ConfigError, load_settings

    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="op-libraries") as e:
        load_settings(repo)
    assert time.perf_counter() - t0 < 2
    assert pattern in str(e.value)


def test_one_double_star_finds_the_deep_library(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    deep = repo / "d"
    for i in range(40):
        deep = deep / f"n{i}"
    deep.mkdir(parents=True)
    (deep / "x.onnxop").write_text("library x\n")
    (repo / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = ["d/**/*.onnxop"]\n')
    from graphlsp.lint.config import load_settings

    assert load_settings(repo).op_libraries == [str(deep / "x.onnxop")]


# ---- 5: no code of the repository runs


PLANTED = "import pathlib; pathlib.Path({marker!r}).write_text('ran')\n"


def test_python_m_graphlsp_imports_no_module_of_the_repository(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    marker = home / "ran"
    for name in ("lark.py", "onnx.py", "onnxruntime.py", "numpy.py", "tomllib.py"):
        (repo / name).write_text(PLANTED.format(marker=str(marker)))
    (repo / "pyproject.toml").write_text('[tool.graphlsp]\nselect = ["GL"]\n')
    env = {**os.environ, "XDG_CACHE_HOME": str(home.parent / "usercache")}
    for cmd in (["-m", "graphlsp", "check", "--no-cache", "."], ["-m", "graphlsp.cli", "check", "--no-cache", "."]):
        r = subprocess.run([sys.executable, *cmd], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert not marker.exists(), cmd


def test_the_server_started_as_the_docs_say_runs_no_code_of_the_workspace(tmp_path: Path) -> None:
    """`python -P -m graphlsp.cli serve` with the workspace as working directory (what the VS Code extension starts
    when the setting names an interpreter): a `graphlsp/` package the repository ships is not imported."""
    home, repo = _outside(tmp_path)
    marker = home / "ran"
    (repo / "graphlsp").mkdir()
    (repo / "graphlsp" / "__init__.py").write_text(PLANTED.format(marker=str(marker)))
    (repo / "lark.py").write_text(PLANTED.format(marker=str(marker)))
    messages = _serve(repo, home, [_open(repo / "models" / "good.onnxtxt", MODEL)])
    assert not marker.exists()
    assert any(m.get("method") == "textDocument/publishDiagnostics" for m in messages)


def test_the_server_sends_no_secret_in_any_message(tmp_path: Path) -> None:
    home, repo = _outside(tmp_path)
    (repo / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = ["../../../.env", "/proc/self/environ"]\n')
    (repo / "models" / "env.onnx").symlink_to("/proc/self/environ")
    (repo / "models" / "bert.onnx").symlink_to(home / "passwd")
    good = repo / "models" / "good.onnxtxt"
    steps = [_open(good, MODEL)]
    for i, name in enumerate(("env.onnx", "bert.onnx")):
        steps.append({"jsonrpc": "2.0", "id": 10 + i, "method": "workspace/executeCommand",
                      "params": {"command": "graphlsp.renderView", "arguments": [{"path": str(repo / "models" / name)}]}})  # fmt: skip
    messages = _serve(repo, home, steps)
    text = json.dumps(messages)
    _no_secret(text)
    shown = [m for m in messages if m.get("method") == "window/showMessage"]
    assert shown and "configuration error" in shown[0]["params"]["message"], messages


def _open(path: Path, text: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": path.as_uri(), "languageId": "onnxtxt", "version": 1, "text": text}}}  # fmt: skip


def _serve(repo: Path, home: Path, steps: list[dict[str, object]]) -> list[dict[str, object]]:
    """Every message the server sends for `steps` between initialize and exit (it runs in `repo`, started as the
    extension starts an interpreter: `python -P -m graphlsp.cli serve`), its stderr checked for secrets."""
    import queue
    import threading

    from tests.lsp.rawclient import read_messages

    env = {**os.environ, "XDG_CACHE_HOME": str(home.parent / "usercache"), "GRAPHLSP_TEST_TOKEN": SECRETS[2]}
    proc = subprocess.Popen([sys.executable, "-P", "-m", "graphlsp.cli", "serve"], cwd=repo, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    got: queue.Queue[dict[str, object]] = queue.Queue()
    threading.Thread(target=read_messages, args=(proc.stdout, got.put), daemon=True).start()

    def send(message: dict[str, object]) -> None:
        body = json.dumps(message).encode()
        assert proc.stdin is not None
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    messages: list[dict[str, object]] = []

    def until(done: object, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                m = got.get(timeout=0.5)
            except queue.Empty:
                continue
            messages.append(m)
            if "id" in m and "method" in m:  # a request of the server's: answer it
                send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            if callable(done) and done(m):
                return
        raise AssertionError(f"no answer: {messages}")

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": repo.as_uri(),
          "capabilities": {}}})  # fmt: skip
    until(lambda m: m.get("id") == 1)
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    for step in steps:
        send(step)
        if "id" in step:
            until(lambda m, i=step["id"]: m.get("id") == i and "method" not in m)
        else:
            until(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    send({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
    until(lambda m: m.get("id") == 99)
    send({"jsonrpc": "2.0", "method": "exit"})
    _, err = proc.communicate(timeout=30)
    _no_secret(err.decode("utf-8", "replace"))
    return messages


# ---- 6: the graph page's policy


def test_the_graph_page_runs_only_its_own_scripts() -> None:
    import re

    from graphlsp.graphview.page import page

    html = page({"title": "</title><script>alert(1)</script>", "graphs": []})
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None and "default-src 'none'" in policy[1]
    nonce = re.search(r"'nonce-([0-9a-f]+)'", policy[1])
    assert nonce is not None and len(nonce[1]) >= 32
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts and all(f'nonce="{nonce[1]}"' in s or 'type="application/json"' in s for s in scripts), scripts
    assert nonce[1] not in page(None)  # a new nonce for every page


def test_the_docs_say_how_to_run_it_safely() -> None:
    text = (ROOT / "docs" / "security.md").read_text()
    for needle in ("-P", "untrustedWorkspaces", "/proc", ".graphlsp_cache", "pull_request", "op-libraries"):
        assert needle in text, needle
    readme = (ROOT / "editors" / "vscode" / "README.md").read_text()
    assert '["-P", "-m", "graphlsp.cli", "serve"]' in readme
