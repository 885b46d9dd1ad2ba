"""A fuzzer of our own: real models, mutated and truncated, through every command; nothing may escape.

Seeds: the examples, some of onnx's node tests (printed by onnx's printer), the real-world binaries in
`../shared/realworld/` (printed by our printer, data summarised) and the corpus binaries. Text mutations work on
tokens and characters (delete, insert, duplicate, truncate, random bytes, line ends turned into a lone `\r` or
`\r\n`); binary mutations flip bits, truncate, insert and delete bytes, and rewrite the length of a
length-delimited field of the protobuf wire format (zero, one more, far more than is left, 2**31, 2**63, 2**64 - 1).

What must hold (`check_text`, `check_binary`):
- `graphlsp check` (the CLI's `main`, in-process) exits 0 or 1, says no "internal error", reports no GL399;
- binaries: `shapes` and `convert` exit 0 or 1, and converted text parses;
- text that parses: `fold`'s output parses and keeps every statement it does not edit; the safe fixes only remove
  node statements (every other statement and every comment kept) and the result parses; `format`'s output is the
  same model with the same comments.

The mutations take their choices from a `Chooser`: hypothesis draws them in the test suite
(`tests/test_fuzz_models.py`, a short budget), a seeded random generator in the long run, `make fuzz`
(`python -m tests.fuzz_models`, for GRAPHLSP_FUZZ_SECONDS seconds, 1800 by default), which prints how many inputs
ran per target and each failure (and saves the failing inputs in GRAPHLSP_FUZZ_OUT, `.fuzz-failures/` by default).

The long run adds the targets of `tests/fuzz_targets.py` (protobuf-field mutations of real binaries, op libraries,
config files, command lines, the server's binary view) and runs every input of every target but the state machine
in a worker process, under a memory cap and an audit hook on `open`: an input that opens a file outside the model's
folder, runs out of memory, hangs or kills its worker is a failure.

The long run has one more target, the language server: a quarter of the time goes to the hypothesis state machine of
`tests/lsp/test_robustness.py` (random edits with lone `\r` among them, requests cancelled at once, malformed
params, documents whose analysis crashes) against one real server over stdio, whose diagnostics for each document
must equal `graphlsp check` on the client's text at the end.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import random
import re
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[1]
REALWORLD = ROOT.parent / "shared" / "realworld"
CORPUS = ROOT / "corpus" / "models"
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[0-9.]+|=>|\S')
_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|#[^\r\n]*')  # a comment ends at \n, \r\n or a lone \r
_PUNCT = b'()[]{}<>=,:."#@?-\n\r 0aZ_\\e9'


class Chooser(Protocol):
    def integer(self, lo: int, hi: int) -> int: ...

    def choice(self, items: Sequence[Any]) -> Any: ...

    def blob(self, max_size: int) -> bytes: ...


class RandomChooser:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.rng.randrange(len(items))]

    def blob(self, max_size: int) -> bytes:
        return bytes(self.rng.randrange(256) for _ in range(self.rng.randint(0, max_size)))


# ---- seeds


@functools.cache
def text_seeds() -> list[str]:
    import onnx.printer

    from graphlsp.binary.read import read_model
    from graphlsp.syntax.printer import print_model
    from tests.conftest import example_texts

    texts = list(example_texts().values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        cases = collect_testcases()
    texts += [onnx.printer.to_text(c.model) for c in cases[:: max(1, len(cases) // 120)]]
    for path in sorted(REALWORLD.glob("*.onnx")) + sorted(CORPUS.glob("*.onnx"))[::6]:
        try:
            model, _ = read_model(str(path))
            texts.append(print_model(model, data="summary"))
        except Exception:  # a model our reader or printer cannot take is no seed
            continue
    return texts


@functools.cache
def binary_seeds() -> list[bytes]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        cases = collect_testcases()
    seeds = [c.model.SerializeToString() for c in cases[:: max(1, len(cases) // 60)]]
    seeds += [p.read_bytes() for p in sorted(CORPUS.glob("*.onnx")) if p.stat().st_size < 400_000][::2]
    seeds += [p.read_bytes() for p in sorted(REALWORLD.glob("*.onnx")) if p.stat().st_size < 3_000_000]
    return seeds


# ---- mutations


def mutate_text(c: Chooser) -> str:
    seeds = text_seeds()
    return mutate_string(c, seeds[c.integer(0, len(seeds) - 1)])


def mutate_string(c: Chooser, text: str) -> str:
    for _ in range(c.integer(1, 4)):
        op = c.choice(["del_tok", "ins_tok", "dup_tok", "del_chr", "ins_chr", "dup_chr", "truncate", "bytes",
                       "line_end"])  # fmt: skip
        toks = [(m.start(), m.end()) for m in _TOKEN.finditer(text)] if op.endswith("_tok") else []
        if toks:
            s, e = toks[c.integer(0, len(toks) - 1)]
            if op == "del_tok":
                text = text[:s] + text[e:]
            elif op == "dup_tok":
                text = text[:e] + " " + text[s:e] + text[e:]
            else:
                s2, e2 = toks[c.integer(0, len(toks) - 1)]
                text = text[:s] + text[s2:e2] + " " + text[s:]
        elif op.endswith("_chr") and text:
            i = c.integer(0, len(text) - 1)
            if op == "del_chr":
                text = text[:i] + text[i + 1 :]
            elif op == "dup_chr":
                text = text[:i] + text[i] + text[i:]
            else:
                text = text[:i] + chr(c.choice(_PUNCT)) + text[i:]
        elif op == "truncate":
            text = text[: c.integer(0, len(text))]
        elif op == "bytes":
            i = c.integer(0, len(text))
            text = text[:i] + c.blob(12).decode("utf-8", errors="replace") + text[i:]
        elif op == "line_end":  # one line end, or every one, as a lone \r or \r\n (LSP's other line ends)
            new = c.choice(["\r", "\r\n"])
            ends = [m.start() for m in re.finditer("\n", text)]
            if ends and c.choice([True, False]):
                i = ends[c.integer(0, len(ends) - 1)]
                text = text[:i] + new + text[i + 1 :]
            else:
                text = text.replace("\n", new)
    return text


def _varint(data: bytes | bytearray, i: int) -> tuple[int, int]:
    """(value, offset after it); raises IndexError or ValueError on a broken varint."""
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def length_fields(data: bytes, limit: int = 4000) -> list[tuple[int, int, int]]:
    """The length-delimited fields of a protobuf message and of the messages inside them (as far as they parse
    as messages): (offset of the length varint, offset after it, the length)."""
    found: list[tuple[int, int, int]] = []
    todo = [(0, len(data), 0)]
    while todo and len(found) < limit:
        start, end, depth = todo.pop()
        i = start
        fields: list[tuple[int, int, int]] = []
        try:
            while i < end:
                tag, i = _varint(data, i)
                wire = tag & 7
                if tag >> 3 == 0:
                    raise ValueError("field 0")
                if wire == 0:
                    _, i = _varint(data, i)
                elif wire == 1:
                    i += 8
                elif wire == 5:
                    i += 4
                elif wire == 2:
                    at = i
                    n, i = _varint(data, i)
                    fields.append((at, i, n))
                    i += n
                else:
                    raise ValueError("wire type")
            if i != end:
                raise ValueError("overrun")
        except (IndexError, ValueError):
            continue  # not a message: its bytes are data
        found += fields
        if depth < 6:
            todo += [(after, after + n, depth + 1) for _, after, n in fields if 0 < n < 65536]
    return found


def mutate_binary(c: Chooser) -> bytes:
    seeds = binary_seeds()
    data = bytearray(seeds[c.integer(0, len(seeds) - 1)])
    for _ in range(c.integer(1, 3)):
        op = c.choice(["length", "length", "flip", "truncate", "insert", "delete"])
        if op == "length":
            fields = length_fields(bytes(data))
            if fields:
                at, after, n = fields[c.integer(0, len(fields) - 1)]
                new = c.choice([0, n + 1, n + c.integer(2, 4096), len(data) * 2, 2**31, 2**32 + 1, 2**63, 2**64 - 1])
                data[at:after] = _encode_varint(new)
        elif op == "flip" and data:
            for _ in range(c.integer(1, 8)):
                i = c.integer(0, len(data) - 1)
                data[i] ^= 1 << c.integer(0, 7)
        elif op == "truncate":
            del data[c.integer(0, len(data)) :]
        elif op == "insert":
            i = c.integer(0, len(data))
            data[i:i] = c.blob(16)
        elif op == "delete" and data:
            i = c.integer(0, len(data) - 1)
            del data[i : i + c.integer(1, 64)]
    return bytes(data)


# ---- what must hold


def run_cli(args: list[str]) -> tuple[int, str, str]:
    from graphlsp.cli import main

    # streams with a .buffer, as the process's own: `check --fix -` writes the fixed bytes there
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace") for _ in range(2))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    out.flush(), err.flush()
    return code, *(s.buffer.getvalue().decode("utf-8", "replace") for s in (out, err))  # type: ignore[attr-defined]


def _cli_ok(code: int, out: str, err: str, what: str) -> None:
    assert code <= 1, f"{what}: exit {code}: {err[-2000:]}"
    assert "internal error" not in err and "Traceback" not in err, f"{what}: {err[-2000:]}"


def _check_json(path: str) -> list[dict[str, Any]]:
    code, out, err = run_cli(["check", "--no-cache", "--format", "json", path])
    _cli_ok(code, out, err, "check")
    diags: list[dict[str, Any]] = json.loads(out) if out.strip() else []
    bad = [d for d in diags if d["code"] == "GL399"]
    assert not bad, f"GL399: {bad[0]['message']}"
    return diags


def _check_graph(path: str) -> None:
    """`graphlsp graph`'s data: written, JSON, a graph or a reason for none."""
    code, out, err = run_cli(["graph", "--format", "json", path])
    _cli_ok(code, out, err, "graph")
    data = json.loads(out)
    assert data["graph"] is not None or data["problems"], "no graph and no reason"


def _statements(text: str) -> list[str]:
    from graphlsp.syntax.document import SyntaxDocument

    doc = SyntaxDocument(text)
    return [text[p.abs_start : p.abs_end] for p in doc.pieces]


def _deleted_only(before: str, after: str) -> bool:
    """Whether `after` is `before` with some of its characters deleted (and nothing else changed)."""
    it = iter(before)
    return all(ch in it for ch in after)


def _comments(text: str) -> list[str]:
    return [m.group().rstrip() for m in _COMMENT.finditer(text) if m.group().startswith("#")]


def check_text(text: str, folder: Path) -> None:
    from graphlsp.lint.config import Settings
    from graphlsp.lint.fold import fold_text
    from graphlsp.lint.runner import _fix
    from graphlsp.syntax.document import SyntaxDocument
    from graphlsp.syntax.format import format_text
    from graphlsp.syntax.to_proto import ConversionError, model_to_proto

    path = folder / "fuzz.onnxtxt"
    path.write_text(text, encoding="utf-8", newline="")
    _check_json(str(path))
    _check_graph(str(path))
    doc = SyntaxDocument(text)
    if doc.problems or not doc.pieces:
        return
    # fold: the output parses, and every statement no edit touches is kept as it was
    run = fold_text(doc)
    folded = SyntaxDocument(run.text)
    assert not folded.problems, f"fold output does not parse: {folded.problems[0].message}"
    edited = [(s, e) for s, e, _ in run.result.edits]
    kept = Counter(run.text[p.abs_start : p.abs_end] for p in folded.pieces)
    for p in doc.pieces:
        if not any(s < p.abs_end and e > p.abs_start for s, e in edited):
            stmt = text[p.abs_start : p.abs_end]
            assert kept[stmt] > 0, f"fold changed a statement it does not edit: {stmt[:200]!r}"
            kept[stmt] -= 1
    # the safe fixes: text only deleted (unused nodes), never a comment, no statement but a node's touched; the
    # result parses
    fixed, _, _ = _fix(text, "fuzz.onnxtxt", Settings())
    if fixed != text:
        after = SyntaxDocument(fixed)
        assert not after.problems, f"fixed text does not parse: {after.problems[0].message}"
        assert _deleted_only(text, fixed), "a safe fix wrote text of its own"
        assert _comments(fixed) == _comments(text), "a safe fix lost a comment"
        remaining = Counter(_statements(fixed))
        for p in doc.pieces:
            stmt = text[p.abs_start : p.abs_end]
            if remaining[stmt] > 0:
                remaining[stmt] -= 1
            else:  # removed, or a node whose subgraph lost a node
                assert p.kind == "node", f"a safe fix changed a {p.kind}: {stmt[:200]!r}"
    # format: the same model, the same comments
    formatted = format_text(text)
    if formatted is not None:
        again = SyntaxDocument(formatted)
        assert not again.problems, f"formatted text does not parse: {again.problems[0].message}"
        assert _comments(formatted) == _comments(text), "format lost a comment"
        try:
            before = model_to_proto(doc.model)
        except ConversionError:
            return
        assert model_to_proto(again.model) == before, "format changed the model"


def check_binary(data: bytes, folder: Path) -> None:
    from graphlsp.syntax.document import SyntaxDocument

    path = folder / "fuzz.onnx"
    path.write_bytes(data)
    _check_json(str(path))
    _check_graph(str(path))
    code, out, err = run_cli(["shapes", str(path)])
    _cli_ok(code, out, err, "shapes")
    code, out, err = run_cli(["convert", str(path), "-"])
    _cli_ok(code, out, err, "convert")
    if code == 0:
        doc = SyntaxDocument(out)
        syntax = [p for p in doc.problems if p.code in ("GL101", "GL104", "GL105")]
        assert not syntax, f"converted text does not parse: {syntax[0].message}"


# ---- the targets of the long run, each input in a worker process (tests/fuzz_targets.py)


def _make_config(c: Chooser) -> bytes:
    from tests.fuzz_targets import make_config

    name, data = make_config(c)
    return name.encode() + b"\n--\n" + data


def _targets() -> dict[str, tuple[Any, Any, float]]:
    """name -> (make an input from a Chooser, check it in a folder, share of the inputs)."""
    from tests import fuzz_targets as ft

    return {
        "text": (lambda c: mutate_text(c).encode("utf-8"), lambda d, f: check_text(d.decode("utf-8"), f), 0.25),
        "binary": (mutate_binary, check_binary, 0.15),
        "proto": (ft.mutate_proto, ft.check_proto, 0.2),
        "oplib": (lambda c: ft.mutate_library(c).encode("utf-8"), ft.check_library, 0.1),
        "config": (_make_config, ft.check_config, 0.08),
        "cli": (lambda c: json.dumps(ft.make_argv(c)).encode(), ft.check_argv, 0.08),
        "view": (mutate_view, ft.check_view, 0.14),
        "repo": (ft.make_repo, ft.check_repo, 0.1),
    }


def mutate_view(c: Chooser) -> bytes:
    from tests import fuzz_targets as ft

    return ft.mutate_proto(c) if c.choice([True, False]) else mutate_binary(c)


class _Targets(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> Any:
        self.update({k: (v[0], v[1]) for k, v in _targets().items()})
        return self[key]


TARGETS: dict[str, tuple[Any, Any]] = _Targets()


# ---- the language server: the state machine of tests/lsp/test_robustness.py, on a budget


class LspTarget:
    """One real server over stdio for the whole run; rounds of the state machine, each with a seed of its own.
    `documents` counts the documents the machine opened, edited, queried and finally found equal to `check`,
    `steps` the machine's steps (opening a document, an edit, a request or a few of them)."""

    def __init__(self) -> None:
        self.session: Any = None
        self.documents = self.steps = 0
        self.log = ""
        self.stderr: deque[str] = deque()

    def _start(self) -> None:
        from tests.lsp import test_robustness as rob

        self.session = rob._Session()
        rob.SESSION = self.session
        self.stderr = self.session.stderr  # the session drains the server's stderr (see _Session)

    def round(self, seed: int, examples: int = 2, steps: int = 25) -> None:
        """`examples` documents through the machine; raises what the machine raised (after restarting the server,
        which may be what failed), with hypothesis's account of the steps and of the first error in `self.log`
        (a failure that does not happen again when hypothesis replays it is reported as flaky, without it)."""
        import hypothesis.core
        from hypothesis import HealthCheck, Phase, Verbosity, settings
        from hypothesis.stateful import invariant, run_state_machine_as_test

        from tests.lsp import test_robustness as rob

        if self.session is None:
            self._start()
        target = self

        class Counted(rob.ServerMachine):  # type: ignore[misc, valid-type]
            @invariant()
            def count_step(self) -> None:  # after the opening and after each step
                target.steps += 1

            def teardown(self) -> None:
                super().teardown()  # the server's diagnostics equal check's
                if self.uri:
                    target.documents += 1

        forced = hypothesis.core.global_force_seed
        hypothesis.core.global_force_seed = seed
        log = io.StringIO()
        try:
            with contextlib.redirect_stdout(log):  # hypothesis's verbose report: each step, each error's traceback
                run_state_machine_as_test(Counted, settings=settings(
                    max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), phases=[Phase.generate], verbosity=Verbosity.verbose))  # fmt: skip
        except BaseException:
            self.log = log.getvalue() + "\n== the server's stderr, last lines\n" + "".join(self.stderr)
            self.close()  # a fresh server for the next round
            raise
        finally:
            hypothesis.core.global_force_seed = forced

    def close(self) -> None:
        from tests.lsp import test_robustness as rob

        if self.session is not None:
            with contextlib.suppress(Exception):
                self.session.close()
        self.session = rob.SESSION = None


# ---- the long run (`make fuzz`)


def long_run(seconds: float, out: Path, seed: int, lsp_share: float = 0.25) -> int:
    """Mutated texts and binaries, and (for `lsp_share` of the time) the server's state machine, until `seconds`
    have passed; prints the inputs per target and each distinct failure. 1 when anything failed."""
    from tests.fuzz_targets import Worker

    rng = random.Random(seed)
    chooser = RandomChooser(rng)
    targets = _targets()
    chosen = [t for t in os.environ.get("GRAPHLSP_FUZZ_TARGETS", "").split(",") if t in targets] or list(targets)
    weights = [targets[t][2] for t in chosen]
    counts = Counter({t: 0 for t in chosen})
    failures: dict[str, tuple[str, bytes, str]] = {}
    text_seeds(), binary_seeds()
    t0 = time.monotonic()
    t_end = t0 + seconds
    lsp = LspTarget() if lsp_share > 0 else None
    lsp_time = 0.0
    mb = int(os.environ.get("GRAPHLSP_FUZZ_MEMORY_MB", "2048"))
    per_input = float(os.environ.get("GRAPHLSP_FUZZ_INPUT_SECONDS", "60"))

    def failed(kind: str, e: BaseException | str, data: bytes, trace: str = "") -> None:
        if isinstance(e, BaseException):
            first = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]
            trace = traceback.format_exc(limit=-6)
        else:
            first = e[:160]
        key = f"{kind}: " + re.sub(r"\d+", "N", first)
        if key not in failures:
            failures[key] = (trace, data, kind)
            print(f"[{sum(counts.values())}] {kind}: {first}", flush=True)

    def progress() -> str:
        lsp_part = f", lsp {lsp.documents} documents ({lsp.steps} steps)" if lsp is not None else ""
        return ", ".join(f"{t} {counts[t]}" for t in chosen) + f" inputs{lsp_part}"

    with tempfile.TemporaryDirectory(prefix="gl-fuzz-") as tmp:
        worker = Worker(Path(tmp) / "worker", per_input, mb)
        while (now := time.monotonic()) < t_end:
            if lsp is not None and lsp_time < lsp_share * (now - t0):  # the server's turn
                round_seed = rng.getrandbits(64)
                started = time.monotonic()
                try:
                    lsp.round(round_seed)
                except Exception as e:
                    failed("lsp", e, f"hypothesis seed {round_seed}\n{e}\n\n{lsp.log}".encode())
                lsp_time += time.monotonic() - started
                continue
            kind = rng.choices(chosen, weights)[0]
            try:
                data = targets[kind][0](chooser)
            except Exception as e:
                failed(kind, e, b"(making the input failed)")
                continue
            counts[kind] += 1
            status, trace = worker.run(kind, data)
            if status != "ok":
                failed(kind, status, data, trace)
            if sum(counts.values()) % 200 == 0:
                print(f"... {progress()}, {len(failures)} distinct failures", flush=True)
        worker.stop()
    if lsp is not None:
        lsp.close()
    total = sum(counts.values()) + (lsp.documents if lsp is not None else 0)
    print(f"{total} inputs in {seconds:.0f} s ({progress()}), {len(failures)} distinct failures")
    if failures:
        out.mkdir(parents=True, exist_ok=True)
        for i, (key, (trace, data, kind)) in enumerate(failures.items()):
            suffix = {"binary": "onnx", "proto": "onnx", "view": "onnx", "text": "onnxtxt", "oplib": "onnxop",
                      "cli": "json", "config": "toml", "repo": "json"}.get(kind, "txt")  # lsp: the round's seed and error
            name = f"failure-{i}.{suffix}"
            (out / name).write_bytes(data)
            print(f"\n== {key}\n   input: {out / name}\n{trace}")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    seconds = float(os.environ.get("GRAPHLSP_FUZZ_SECONDS", "1800"))
    out = Path(os.environ.get("GRAPHLSP_FUZZ_OUT", ".fuzz-failures"))
    seed = int(os.environ.get("GRAPHLSP_FUZZ_SEED", str(int(time.time()))))
    print(f"fuzzing for {seconds:.0f} s (seed {seed}); {len(text_seeds())} text and {len(binary_seeds())} binary seeds",
          flush=True)  # fmt: skip
    return long_run(seconds, out, seed, float(os.environ.get("GRAPHLSP_FUZZ_LSP_SHARE", "0.25")))


if __name__ == "__main__":
    # the workers import `tests.fuzz_models`: let that be this module, whose seeds are read already (a fresh import
    # would read them again inside a worker, outside the model's folder)
    sys.modules.setdefault("tests.fuzz_models", sys.modules[__name__])
    sys.exit(main(sys.argv[1:]))
