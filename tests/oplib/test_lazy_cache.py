"""The op-library cache (graphlsp/oplib/lazy.py): a cached library reads back as the library the parser and checker
make, each declaration unpickled only when a model's op asks for it, and the catalog resolves from it what it
resolves from the parsed file."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from graphlsp.oplib import catalog, lazy
from graphlsp.oplib.checker import check_library
from graphlsp.oplib.parser import parse_file

ROOT = Path(__file__).resolve().parents[2]
ONNXRUNTIME = next(p for p in catalog.builtin_paths() if p.stem == "onnxruntime")


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def test_a_cached_library_reads_back_as_parsed_and_checked(cache_home: Path) -> None:
    parsed = check_library(parse_file(ONNXRUNTIME))
    first = catalog.load(ONNXRUNTIME)  # parsed, checked, written to the cache
    assert list(cache_home.glob("graphlsp/oplib-*.pickle"))
    again = catalog.load(ONNXRUNTIME)  # from the cache
    assert isinstance(again.ops, lazy.LazyOps) and not again.ops.full
    assert len(again.ops) == len(parsed.ops) > 100 and not again.ops.full  # counted without unpickling
    assert (again.name, again.path, again.version, again.problems) == (parsed.name, parsed.path, parsed.version,
                                                                      parsed.problems)  # fmt: skip
    assert again.ops.keys == [(op.domain, op.name, op.since) for op in parsed.ops]
    assert again.ops.loaded() == []
    one = again.ops.decl(3)
    assert one == parsed.ops[3] and again.ops.decl(3) is one  # unpickled once
    assert again.ops.loaded() == [one] and not again.ops.full
    assert list(again.ops) == parsed.ops == first.ops and again.ops.full
    assert again.ops[3] is one and again.ops[-1] == parsed.ops[-1] and again.ops == parsed.ops


def test_a_lazy_list_is_an_ordinary_list_to_its_readers_and_writers(cache_home: Path) -> None:
    catalog.load(ONNXRUNTIME)
    ops = catalog.load(ONNXRUNTIME).ops
    assert isinstance(ops, lazy.LazyOps)
    first = ops.decl(0)
    assert first in ops and ops.index(first) == 0 and ops.count(first) == 1
    plain = pickle.loads(pickle.dumps(ops))
    assert type(plain) is list and plain == ops
    n = len(ops)
    ops.append(first)
    assert len(ops) == n + 1 and ops[-1] is first
    del ops[-1]
    assert len(ops) == n and sorted(ops, key=lambda o: o.name)[0].name == min(o.name for o in ops)


def test_the_catalog_resolves_from_the_cache_what_it_resolves_from_the_file(cache_home: Path) -> None:
    parsed = check_library(parse_file(ONNXRUNTIME))
    catalog.load(ONNXRUNTIME)
    cat = catalog.Catalog()
    for op in parsed.ops[::7]:
        got = cat.lookup(op.domain, op.name, op.since)
        assert got == op, op.qualified
        assert [d.since for d in cat.versions(op.domain, op.name)] == sorted(
            o.since for o in parsed.ops if (o.domain, o.name) == (op.domain, op.name))
    assert cat.domains() == {op.domain for op in parsed.ops}
    assert cat.lookup("com.microsoft", "NoSuchOp", 1) is None


def test_a_check_reads_the_cache_without_the_parser_or_lark(cache_home: Path) -> None:
    """A model with contrib ops, checked with the library cached: no lark, no DSL parser, few unpickled ops."""
    model = ROOT / "corpus" / "models" / "ortopt_bert.onnx"
    probe = (
        "import sys\nfrom graphlsp.cli import main\nmain(['check', '--no-cache', '--quiet', sys.argv[1]])\n"
        "from graphlsp.oplib.catalog import CATALOG\n"
        "lib = next(l for l in CATALOG.builtin() if l.name == 'onnxruntime')\n"
        "decls = getattr(lib.ops, '_decls', lib.ops)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('lark', 'graphlsp.oplib.parser', 'multiprocessing'))),"
        " sum(d is not None for d in decls), len(lib.ops))\n"
    )
    env = {"XDG_CACHE_HOME": str(cache_home), "PATH": "/usr/bin:/bin"}
    runs = [subprocess.run([sys.executable, "-c", probe, str(model)], capture_output=True, text=True, env=env)
            for _ in range(2)]  # fmt: skip
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[1].returncode == 0, runs[1].stderr
    assert "lark" in runs[0].stdout  # the first run parsed the library (and cached it)
    last = runs[1].stdout.strip().splitlines()[-1]  # after what check prints (the position table's condition)
    modules, used, total = last.rsplit("]", 1)[0] + "]", *map(int, last.rsplit("]", 1)[1].split())
    assert modules == "[]"
    assert 0 < used < 20 < total
