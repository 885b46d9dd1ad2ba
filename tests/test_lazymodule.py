"""graphlsp/lazymodule.py: a module imported on its first attribute read, once, also when threads race to it; and
a binary check that needs neither the op DSL's model nor the syntax tree never imports them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from graphlsp.lazymodule import lazy_module

ROOT = Path(__file__).resolve().parents[1]


def test_an_imported_module_is_returned_as_is() -> None:
    import json

    assert lazy_module("json", {}, "j") is json


def test_the_first_read_imports_it_once_and_rebinds_the_name(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "slow_mod_25.py").write_text(textwrap.dedent("""
        import time
        RUNS = [1]
        time.sleep(0.2)  # a second thread arrives while this one is still executing the module
        VALUE = 42
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    where: dict[str, Any] = {}
    where["mod"] = lazy_module("slow_mod_25", where, "mod")
    assert "slow_mod_25" not in sys.modules
    seen: list[Any] = []
    threads = [threading.Thread(target=lambda: seen.append(where["mod"].VALUE)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [42] * 4  # no thread saw a module still being executed
    assert where["mod"] is sys.modules["slow_mod_25"] and where["mod"].RUNS == [1]


def test_a_binary_check_never_imports_the_dsl_model_or_the_syntax_tree() -> None:
    probe = textwrap.dedent("""
        import sys
        from graphlsp.cli import main
        main(["check", "--no-cache", "--quiet", sys.argv[1]])
        print(sorted(m for m in ("graphlsp.oplib.model", "graphlsp.syntax.tree", "onnx.reference.ops") if m in sys.modules))
    """)
    model = ROOT / "corpus" / "models" / "torchscript_transformer.onnx"  # a Pow folds: formerly onnx.reference's
    out = subprocess.run([sys.executable, "-c", probe, str(model)], capture_output=True, text=True, check=False)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
