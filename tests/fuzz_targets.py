"""The fuzzer's newer targets, and the worker processes every non-server input runs in (see fuzz_models.py).

Targets (each `fn(c: Chooser, folder: Path) -> (input bytes, suffix)` makes an input and checks it):
- proto: a real binary mutated field by field through onnx's protobuf classes (dims, data types, raw_data lengths,
  repeated fields, external data paths, nesting in If/Loop bodies, duplicate names, model-local functions), then
  `check`, `shapes`, `convert` as for byte mutations;
- oplib: an op library (the shipped one cut into declarations, and a small one) mutated as text, with long sums,
  deep nesting and huge numbers planted; `check` on the library alone, and on a model of a project that uses it;
- config: a pyproject.toml or graphlsp.toml of random keys, types, nesting and encodings; `check` on a model;
- cli: random command lines (missing folders, folders, symlink loops, NUL, huge numbers, the input as output);
- view: the language server's binary view (`graphlsp.renderView`, open, then every request on the view) of a
  mutated binary, in a server of the worker's own.

Every input runs in a worker process with its address space capped (RLIMIT_AS, GRAPHLSP_FUZZ_MEMORY_MB above what
the worker holds when it starts, 2048 by default) and an audit hook on `open`: a file opened outside the model's
folder (a temporary folder), the Python installation, the repository and the cache is a failure. Planted beside
and above the model's folder: `secret.bin` files that a model's external data may name; inotify on their folders
catches the opens the audit hook cannot see (C code's), also by the view's server.
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
import os
import queue
import resource
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SECRET = b"FUZZ-SECRET-BYTES-" * 8

# ---- the audit hook


def install_open_audit(allowed: list[str], report: Callable[[str], None]) -> None:
    """Report every file opened outside `allowed` (folders; links resolved)."""
    roots = tuple(os.path.realpath(r).rstrip(os.sep) + os.sep for r in allowed)
    # and the system files libraries read on import (onnxruntime reads the OS release when it loads; the kernel
    # tables of the deployment rules import it once per onnxruntime version): never a model's data
    exact = {"/dev/null", "/dev/urandom", "/dev/tty", "/etc/os-release", "/usr/lib/os-release"}
    busy = threading.local()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or getattr(busy, "on", False):
            return
        path = args[0] if args else None
        if path is None or isinstance(path, int):
            return
        busy.on = True
        try:
            p = os.fsdecode(path)
            real = os.path.realpath(p)
            if real not in exact and not (real + os.sep).startswith(roots) and not real.startswith("/proc/"):
                report(p if p == real else f"{p} ({real})")
        except Exception:
            pass
        finally:
            busy.on = False

    sys.addaudithook(hook)


class OpenWatch:
    """inotify on the planted secrets' folders: an open of a file there by the worker or its server, also one the
    audit hook cannot see (a C library's fopen: onnx's external data through numpy.fromfile)."""

    IN_ACCESS, IN_OPEN, IN_ISDIR = 0x1, 0x20, 0x40000000

    def __init__(self, folders: list[Path]) -> None:
        import ctypes

        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        self.names: dict[int, str] = {}
        for folder in folders:
            wd = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), self.IN_OPEN | self.IN_ACCESS)
            if wd >= 0:
                self.names[wd] = str(folder)

    def opened(self) -> list[str]:
        """The files opened in the watched folders since the last call."""
        import struct

        found: list[str] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, OSError):
                return found
            i = 0
            while i + 16 <= len(data):
                wd, mask, _, size = struct.unpack_from("iIII", data, i)
                name = data[i + 16 : i + 16 + size].rstrip(b"\0").decode("utf-8", "replace")
                i += 16 + size
                if not mask & self.IN_ISDIR and name:
                    found.append(os.path.join(self.names.get(wd, "?"), name))


def _allowed(folder: Path, cache: Path) -> list[str]:
    import site

    return [str(folder), str(cache), str(ROOT), sys.prefix, sys.base_prefix, sys.exec_prefix,
            *site.getsitepackages()]  # fmt: skip


def _cap_memory(mb: int) -> None:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[0])
    now = pages * os.sysconf("SC_PAGE_SIZE")
    limit = now + mb * (1 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def layout(base: Path) -> tuple[Path, Path, Path]:
    """(model folder, working directory, cache) under `base`, with secrets beside and above the model's folder and
    a link from inside it to its parent."""
    folder, cwd, cache = base / "model", base / "cwd", base / "cache"
    for d in (folder, cwd, cache):
        d.mkdir(parents=True, exist_ok=True)
    for d in (base, cwd):
        (d / "secret.bin").write_bytes(SECRET)
    link = folder / "up"
    if not link.is_symlink():
        link.symlink_to(base, target_is_directory=True)
    return folder, cwd, cache


# ---- workers


def _worker_main(conn: Any, base: str, mb: int) -> None:
    folder, cwd, cache = layout(Path(base))
    os.environ["XDG_CACHE_HOME"] = str(cache)
    os.chdir(cwd)
    sys.stdin = io.TextIOWrapper(io.BytesIO())
    outside: list[str] = []
    install_open_audit(_allowed(folder, cache), outside.append)
    watch = OpenWatch([Path(base), cwd])
    _cap_memory(mb)
    from tests import fuzz_models as fm

    while True:
        try:
            target, data = conn.recv()
        except EOFError:
            return
        outside.clear()
        watch.opened()
        result: tuple[str, str]
        try:
            fm.TARGETS[target][1](data, folder)
            result = ("ok", "")
        except BaseException as e:  # MemoryError and RecursionError included
            first = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
            result = (first, traceback.format_exc(limit=-8))
        outside += [p for p in watch.opened() if p not in outside]
        if outside:  # first: another failure of the same input must not hide it
            result = (f"opened outside the model's folder: {outside[0]}", "\n".join(outside[:10]) + "\n" + result[1])
        try:
            conn.send(result)
        except (BrokenPipeError, OSError):
            return


class Worker:
    """A forked process running inputs one at a time under the memory cap and the audit hook; restarted when it
    dies or hangs."""

    def __init__(self, base: Path, timeout: float, mb: int) -> None:
        self.base, self.timeout, self.mb = base, timeout, mb
        self.proc: Any = None
        self.conn: Any = None

    def _start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, str(self.base), self.mb))  # not daemonic: check -j forks
        self.proc.start()
        child.close()
        self.conn = parent

    def run(self, target: str, data: bytes) -> tuple[str, str]:
        """("ok", "") or (the failure's first line, its account)."""
        if self.proc is None or not self.proc.is_alive():
            self._start()
        try:
            self.conn.send((target, data))
            if self.conn.poll(self.timeout):
                return self.conn.recv()  # type: ignore[no-any-return]
            self.stop()
            return (f"no answer in {self.timeout:.0f} s (killed)", "")
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            code = None
            if self.proc is not None:
                self.proc.join(5)
                code = self.proc.exitcode
            self.stop()
            return (f"the worker died (exit {code})", "")

    def stop(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(Exception):
                self.proc.kill()
                self.proc.join(5)
            with contextlib.suppress(Exception):
                self.conn.close()
        self.proc = self.conn = None
        _VIEW_SERVER.close()


# ---- proto: field mutations of real binaries


def _tensors(m: Any) -> list[Any]:
    out: list[Any] = []
    for g in _graphs(m):
        out += list(g.initializer)
        for n in g.node:
            out += [a.t for a in n.attribute if a.HasField("t")]
    return out


def _graphs(m: Any) -> list[Any]:
    found = [m.graph]
    todo = [m.graph, *m.functions]
    while todo:
        g = todo.pop()
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    found.append(a.g)
                    todo.append(a.g)
                found += list(a.graphs)
                todo += list(a.graphs)
    return found


def _value_infos(m: Any) -> list[Any]:
    return [v for g in _graphs(m) for v in (*g.input, *g.output, *g.value_info)]


EXTERNAL_LOCATIONS = ["secret.bin", "../secret.bin", "up/secret.bin", "sub/../../secret.bin", "/etc/hostname",
                      "", ".", "up", "w.bin", "a\0b", "../cwd/secret.bin", "/dev/zero"]  # fmt: skip


def mutate_proto(c: Any) -> bytes:
    import onnx
    from onnx import TensorProto, helper

    from tests import fuzz_models as fm

    seeds = fm.binary_seeds()
    m = onnx.ModelProto()
    seed = seeds[c.integer(0, len(seeds) - 1)]
    try:
        m.ParseFromString(seed)
    except Exception:
        return b""
    nodes = [n for g in _graphs(m) for n in g.node] + [n for f in m.functions for n in f.node]
    for _ in range(c.integer(1, 3)):
        op = c.choice(["dims", "dtype", "raw", "repeat", "external", "nest", "dupname", "function", "attr",
                       "opset", "drop"])  # fmt: skip
        ts, vis = _tensors(m), _value_infos(m)
        if op == "dims" and (ts or vis):
            big = c.choice([0, -1, 1, 2**31, 2**62, 2**63 - 1, 7])
            if ts and c.choice([True, False]):
                t = c.choice(ts)
                if t.dims:
                    t.dims[c.integer(0, len(t.dims) - 1)] = big
                else:
                    t.dims.append(big)
            elif vis:
                v = c.choice(vis)
                shape = v.type.tensor_type.shape
                if shape.dim:
                    d = shape.dim[c.integer(0, len(shape.dim) - 1)]
                    d.dim_value = big if big >= 0 else 0
        elif op == "dtype" and (ts or vis):
            dt = c.choice([0, 1, 2, 7, 8, 9, 10, 11, 13, 14, 16, 17, 21, 22, 23, 40, 2**20])
            if ts and c.choice([True, False]):
                c.choice(ts).data_type = dt
            elif vis:
                c.choice(vis).type.tensor_type.elem_type = dt
        elif op == "raw" and ts:
            t = c.choice(ts)
            raw = bytes(t.raw_data)
            t.raw_data = c.choice([raw[: len(raw) // 2], raw + b"\x01" * c.integer(1, 9), b"", raw * 2])
        elif op == "repeat" and nodes:
            n = c.choice(nodes)
            if n.attribute and c.choice([True, False]):
                n.attribute.append(n.attribute[c.integer(0, len(n.attribute) - 1)])
            elif n.input:
                n.input.append(n.input[0])
            else:
                n.output.append(n.output[0] if n.output else "")
            if c.choice([True, False]) and m.graph.initializer:
                m.graph.initializer.append(m.graph.initializer[0])
        elif op == "external" and ts:
            t = c.choice(ts)
            t.data_location = TensorProto.EXTERNAL
            del t.external_data[:]
            for key, value in (("location", c.choice(EXTERNAL_LOCATIONS)),
                               ("offset", str(c.choice([0, 3, 2**40, -1]))),
                               ("length", str(c.choice([16, 0, 2**40, -5])))):  # fmt: skip
                if key == "location" or c.choice([True, False]):
                    t.external_data.append(onnx.StringStringEntryProto(key=key, value=value))
            if c.choice([True, False]):
                t.ClearField("raw_data")
        elif op == "nest" and m.graph.node:
            body = helper.make_graph(list(m.graph.node)[: c.integer(1, 6)], "body", [], list(m.graph.output)[:1])
            for _ in range(c.integer(1, 6)):
                cond = helper.make_node("Constant", [], ["cond"], value=helper.make_tensor("c", 9, [], [True]))
                node = helper.make_node("If", ["cond"], list(m.graph.output)[:1] and [m.graph.output[0].name],
                                        then_branch=body, else_branch=body)  # fmt: skip
                body = helper.make_graph([cond, node], "nested", [], list(m.graph.output)[:1])
            m.graph.node.append(body.node[-1])
            m.graph.node.insert(0, body.node[0])
        elif op == "dupname" and nodes:
            a, b = c.choice(nodes), c.choice(nodes)
            if a.output and b.output:
                a.output[0] = b.output[c.integer(0, len(b.output) - 1)]
            elif a.input and b.output:
                a.input[0] = b.output[0]
        elif op == "function":
            calls = c.integer(1, 40)
            fns = []
            for i in range(calls):
                callee = helper.make_node(f"f{i + 1}" if i + 1 < calls else "Identity", ["x"], ["y"],
                                          domain="local" if i + 1 < calls else "")  # fmt: skip
                fns.append(helper.make_function("local", f"f{i}", ["x"], ["y"], [callee],
                                                [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]))
            if c.choice([True, False]) and fns:  # recursion
                fns[-1].node[0].op_type, fns[-1].node[0].domain = "f0", "local"
            m.functions.extend(fns)
            m.opset_import.append(helper.make_opsetid("local", 1))
            if m.graph.input:
                m.graph.node.append(helper.make_node("f0", [m.graph.input[0].name], ["fuzz_out"], domain="local"))
        elif op == "attr" and nodes:
            n = c.choice(nodes)
            value = c.choice([helper.make_attribute("perm", [1.5, 0.0]), helper.make_attribute("axis", 2**62),
                              helper.make_attribute("value", helper.make_tensor("v", 1, [1], [float("inf")])),
                              helper.make_attribute("to", 999), helper.make_attribute("axes", [-(2**62)]),
                              helper.make_attribute("mode", b"\xff\xfe")])  # fmt: skip
            n.attribute.append(value)
        elif op == "opset":
            if m.opset_import and c.choice([True, False]):
                m.opset_import[0].version = c.choice([0, 1, 999, -1, 2**62])
            else:
                del m.opset_import[:]
        elif op == "drop" and nodes:
            n = c.choice(nodes)
            for field in ("input", "output", "attribute"):
                if c.choice([True, False]):
                    n.ClearField(field)
    try:
        data = m.SerializeToString()
    except Exception:
        return b""
    # nesting copies bodies: a mutant far larger than its seed measures the memory cap, not graphlsp
    return data if len(data) <= 4 * len(seed) + (1 << 20) else b""


def check_proto(data: bytes, folder: Path) -> None:
    from tests import fuzz_models as fm

    fm.check_binary(data, folder)


# ---- op libraries


def _library_seeds() -> list[str]:
    shipped = (ROOT / "graphlsp" / "oplib" / "libraries" / "onnxruntime.onnxop").read_text()
    head, *ops = shipped.split("\nop ")
    chunks = [head + "\n" + "\n".join("op " + o for o in ops[i : i + 4]) for i in range(0, len(ops), 37)]
    small = """library acme
domain com.acme

op ScaledMatMul since 1 {
  input  A: T[*batch, M, K]
  input  B: T[K, N]
  output Y: T[*batch, M, N]
  attr   scale: float = 1.0
  type   T: float, float16
  let    W = N * 2
  require has(B) and W > 0 else "no"
}
"""
    return [small, *chunks]


LIB_MODEL = """<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1]>
g (float[2, 4, 8] x, float[8, 16] w) => (float[2, 4, 16] y) {
  y = com.acme.ScaledMatMul <scale = 0.5> (x, w)
}
"""


def mutate_library(c: Any) -> str:
    from tests import fuzz_models as fm

    seeds = _library_seeds()
    text = seeds[c.integer(0, len(seeds) - 1)]
    for _ in range(c.integer(1, 3)):
        op = c.choice(["text", "text", "sum", "nest", "number", "type"])
        if op == "text":
            text = fm.mutate_string(c, text)
        else:
            at = text.find("output", c.integer(0, max(0, len(text) - 1)))
            at = at if at >= 0 else text.find("output")
            close = text.find("]", at)
            planted = {
                "sum": " + ".join(["M"] * c.choice([50, 99, 330, 3000])),
                "nest": "(" * c.choice([50, 200, 1000]) + "M" + ")" * c.choice([50, 200, 1000]),
                "number": c.choice(["1" + "0" * 400, "9" * 5000, "1e999", "-9223372036854775809", "0x10"]),
                "type": "T(" * 300 + "float" + ")" * 300,
            }[op]
            if at >= 0 and close > at:
                text = text[:close] + ", " + planted + text[close:]
            else:
                text += f"\nop X since 1 {{\n  input a: T[N]\n  output b: T[{planted}]\n  type T: float\n}}\n"
    return text


def check_library(data: bytes, folder: Path) -> None:
    from tests import fuzz_models as fm

    lib = folder / "ops.onnxop"
    lib.write_bytes(data)
    code, out, err = fm.run_cli(["check", "--no-cache", "--format", "json", str(lib)])
    fm._cli_ok(code, out, err, "check library")
    project = folder / "project"
    project.mkdir(exist_ok=True)
    (project / "ops.onnxop").write_bytes(data)
    (project / "graphlsp.toml").write_text('op-libraries = ["ops.onnxop"]\n')
    (project / "m.onnxtxt").write_text(LIB_MODEL)
    code, out, err = fm.run_cli(["check", "--no-cache", str(project / "m.onnxtxt")])
    _usage_ok(code, err, "check with the library", str(project / "graphlsp.toml"))


def _usage_ok(code: int, err: str, what: str, config: str | None = None) -> None:
    """Exit 0 or 1, or 2 with a message of graphlsp's own (a config error naming the file); never an internal
    error."""
    assert "internal error" not in err and "Traceback" not in err, f"{what}: {err[-2000:]}"
    if code == 2 and config is not None:
        assert f"graphlsp: error: {config}" in err, f"{what}: exit 2: {err[-2000:]}"
    assert code <= 2, f"{what}: exit {code}: {err[-2000:]}"


# ---- config files


def _toml_value(c: Any, depth: int = 0) -> str:
    kind = c.choice(["int", "str", "list", "table", "bool", "float", "deep", "codes"] if depth < 3 else ["int", "str"])
    if kind == "int":
        return str(c.choice([0, -1, 5, 2**63 - 1, 301]))
    if kind == "str":
        return json.dumps(c.choice(["GL3", "GL301", "unused-value", "*.onnxtxt", "/abs/*.onnxop", "../x", "", "é", "[",
                                    "error", "warning", "ops/*.onnxop", "GL9999"]))  # fmt: skip
    if kind == "list":
        return "[" + ", ".join(_toml_value(c, depth + 1) for _ in range(c.integer(0, 3))) + "]"
    if kind == "table":
        return "{ " + ", ".join(f'"{c.choice(["GL301", "*", "a.onnxtxt", "x"])}{i}" = {_toml_value(c, depth + 1)}'
                                for i in range(c.integer(0, 2))) + " }"  # fmt: skip
    if kind == "bool":
        return c.choice(["true", "false"])
    if kind == "float":
        return c.choice(["1.5", "inf", "nan", "1e400"])
    if kind == "deep":
        n = c.choice([10, 500, 5000])
        return "[" * n + "]" * n
    return "[" + ", ".join(str(c.integer(0, 999)) for _ in range(c.integer(1, 3))) + "]"


CONFIG_KEYS = ["select", "ignore", "severity", "per-file-ignores", "fold-size-cap", "inlay-hints", "op-libraries",
               "unknown-key"]  # fmt: skip


def make_config(c: Any) -> tuple[str, bytes]:
    body = "\n".join(f"{c.choice(CONFIG_KEYS)} = {_toml_value(c)}" for _ in range(c.integer(0, 4)))
    name = c.choice(["pyproject.toml", "graphlsp.toml"])
    if name == "pyproject.toml":
        body = c.choice(["[tool.graphlsp]\n" + body, "tool = 5\n", "[tool]\ngraphlsp = 3\n",
                         "[tool.graphlsp]\n" + body + "\n[tool.graphlsp]\nx = 1"])  # fmt: skip
    data = c.choice([body.encode(), body.encode("utf-16"), body.encode("latin-1", "replace") + b"\xe9",
                     b"\xef\xbb\xbf" + body.encode(), body.encode()[: c.integer(0, len(body))]])  # fmt: skip
    return name, data


def check_config(data: bytes, folder: Path) -> None:
    from tests import fuzz_models as fm

    name, _, body = data.partition(b"\n--\n")
    project = folder / "cfg"
    project.mkdir(exist_ok=True)
    for old in ("pyproject.toml", "graphlsp.toml"):
        with contextlib.suppress(FileNotFoundError):
            (project / old).unlink()
    (project / name.decode()).write_bytes(body)
    (project / "m.onnxtxt").write_text((ROOT / "examples" / "broken.onnxtxt").read_text())
    code, _, err = fm.run_cli(["check", "--no-cache", str(project / "m.onnxtxt")])
    _usage_ok(code, err, "check", str(project / name.decode()))


# ---- command lines


def make_argv(c: Any) -> list[str]:
    paths = ["m.onnxtxt", "b.onnx", "nodir/x.onnxtxt", ".", "sub", "loop.onnxtxt", "a\0b.onnxtxt", "m.onnxtxt",
             "-", "x" * 300 + ".onnxtxt", "sub/", "dir.onnx", "m.onnxop", ""]  # fmt: skip
    numbers = ["0", "-1", "99999999999999999999", "1", "x", "1e3", ""]
    command = c.choice(["check", "check", "shapes", "fold", "convert", "rule", "rules", "serve"])
    argv = [command]
    if command == "check":
        argv += [c.choice(paths) for _ in range(c.integer(0, 3))]
        for _ in range(c.integer(0, 3)):
            opt = c.choice(["-j", "--format", "--select", "--ignore", "--config", "--stdin-filename", "--fix",
                            "--diff", "--no-cache", "--strict", "--unsafe-fixes"])  # fmt: skip
            argv.append(opt)
            if opt == "-j":
                argv.append(c.choice(numbers))
            elif opt == "--format":
                argv.append(c.choice(["json", "sarif", "github", "x", "concise"]))
            elif opt in ("--select", "--ignore"):
                argv.append(c.choice(["GL3", "", ",", "GL999", "x,y"]))
            elif opt in ("--config", "--stdin-filename"):
                argv.append(c.choice(paths))
    elif command in ("shapes", "rule"):
        argv.append(c.choice(paths + ["GL301", "broadcast-incompatible"]))
    elif command == "fold":
        argv.append(c.choice(paths))
        if c.choice([True, False]):
            argv += ["-o", c.choice(paths + ["out.onnxtxt", "out.onnx"])]
        if c.choice([True, False]):
            argv += ["--size-cap", c.choice(numbers)]
    elif command == "convert":
        argv += [c.choice(paths), c.choice(paths + ["out.onnxtxt", "out.onnx", "m.onnxtxt"])]
    elif command == "serve":  # only addresses that cannot be listened on: a server never ends
        argv += ["--tcp", c.choice(["junk", ":99999", "a:b", "1.2.3.4.5:1", "host:-1", ":x"])]
    return argv


def check_argv(data: bytes, folder: Path) -> None:
    from tests import fuzz_models as fm

    argv = json.loads(data)
    work = folder / "cli"
    work.mkdir(exist_ok=True)
    (work / "m.onnxtxt").write_text((ROOT / "examples" / "mlp.onnxtxt").read_text())
    (work / "m.onnxop").write_text(_library_seeds()[0])
    (work / "sub").mkdir(exist_ok=True)
    (work / "dir.onnx").mkdir(exist_ok=True)
    seeds = fm.binary_seeds()
    (work / "b.onnx").write_bytes(seeds[len(seeds) // 2])
    loop = work / "loop.onnxtxt"
    if not loop.is_symlink():
        loop.symlink_to(work / "loop2.onnxtxt")
        (work / "loop2.onnxtxt").symlink_to(loop)
    before = (work / "m.onnxtxt").read_bytes()
    cwd = os.getcwd()
    os.chdir(work)
    try:
        try:
            code, _, err = fm.run_cli(argv)
        except SystemExit as e:  # argparse's usage errors
            code, err = int(e.code or 0), ""
    finally:
        os.chdir(cwd)
    _usage_ok(code, err, " ".join(argv))
    if argv[0] == "convert" and len(argv) == 3 and argv[1] == "m.onnxtxt" and argv[2] == "m.onnxtxt":
        assert (work / "m.onnxtxt").read_bytes() == before, "convert wrote over its input"
    (work / "m.onnxtxt").write_bytes(before)


# ---- the server's binary view


class _ViewServer:
    """A server of the worker's own (it inherits the memory cap; the audit hook is installed in it too and reports
    on its standard error), restarted when it dies."""

    def __init__(self) -> None:
        self.proc: Any = None
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr: list[str] = []
        self.ids = 0

    def start(self, folder: Path) -> None:
        import subprocess

        code = ("import sys; from tests.fuzz_targets import audited_server; audited_server(sys.argv[1], sys.argv[2])")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen([sys.executable, "-c", code, str(folder), os.environ.get("XDG_CACHE_HOME", "")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env)  # fmt: skip
        self.replies = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read, args=(self.proc.stdout, self.replies), daemon=True).start()
        threading.Thread(target=lambda f, out: out.extend(line.decode("utf-8", "replace") for line in f),
                         args=(self.proc.stderr, self.stderr), daemon=True).start()  # fmt: skip
        self.request("initialize", {"processId": None, "rootUri": None, "capabilities": {
            "general": {"positionEncodings": ["utf-16"]}, "textDocument": {"diagnostic": {}}}})  # fmt: skip
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    @staticmethod
    def _read(out: Any, replies: queue.Queue[dict[str, Any]]) -> None:
        from tests.lsp.rawclient import read_messages

        read_messages(out, lambda m: replies.put(m) if "id" in m and "method" not in m else None)

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any, timeout: float = 60) -> dict[str, Any]:
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise AssertionError(f"{method}: no answer (server {'exited' if self.proc.poll() is not None else 'busy'}"
                                     f"); stderr: {''.join(self.stderr)[-1500:]}")  # fmt: skip
            try:
                reply = self.replies.get(timeout=min(left, 1))
            except queue.Empty:
                continue
            if reply.get("id") == self.ids:
                return reply

    def close(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(Exception):
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None


_VIEW_SERVER = _ViewServer()
VIEW_METHODS = ["textDocument/hover", "textDocument/definition", "textDocument/references",
                "textDocument/documentHighlight", "textDocument/documentSymbol", "textDocument/semanticTokens/full",
                "textDocument/foldingRange", "textDocument/inlayHint", "textDocument/signatureHelp",
                "textDocument/codeAction", "textDocument/completion", "textDocument/formatting",
                "textDocument/rename", "textDocument/diagnostic", "workspace/symbol"]  # fmt: skip


def audited_server(folder: str, cache: str) -> None:
    """`graphlsp serve`, reporting on stderr each file opened outside the model's folder."""
    def report(path: str) -> None:
        sys.stderr.write(f"FUZZ-OPENED-OUTSIDE {path}\n")
        sys.stderr.flush()

    install_open_audit(_allowed(Path(folder), Path(cache or folder)), report)
    from graphlsp.cli import main

    main(["serve"])


def check_view(data: bytes, folder: Path) -> None:
    server = _VIEW_SERVER
    if server.proc is None or server.proc.poll() is not None:
        server.start(folder)
    server.stderr.clear()
    path = folder / f"view{server.ids}.onnx"
    path.write_bytes(data)
    uri = path.as_uri()
    try:
        rendered = server.request("workspace/executeCommand", {"command": "graphlsp.renderView",
                                                               "arguments": [{"uri": uri}]})  # fmt: skip
        assert "result" in rendered and isinstance(rendered["result"], dict), f"renderView: {rendered}"
        text = rendered["result"].get("text", "")
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "onnxtxt", "version": 1, "text": text}}})  # fmt: skip
        lines = text.split("\n")
        doc = {"uri": uri}
        spots = [(0, 0), (len(lines) // 2, 4), (len(lines) - 1, 0), (len(lines) + 5, 3)]
        for line, col in spots:
            pos = {"line": line, "character": col}
            rng = {"start": pos, "end": {"line": line + 1, "character": 0}}
            for method in VIEW_METHODS:
                params: dict[str, Any] = {"textDocument": doc, "position": pos}
                if method == "textDocument/references":
                    params["context"] = {"includeDeclaration": True}
                elif method in ("textDocument/inlayHint", "textDocument/codeAction"):
                    params = {"textDocument": doc, "range": rng, "context": {"diagnostics": []}}
                elif method == "textDocument/formatting":
                    params = {"textDocument": doc, "options": {"tabSize": 2, "insertSpaces": True}}
                elif method == "textDocument/rename":
                    params["newName"] = "renamed"
                elif method in ("textDocument/documentSymbol", "textDocument/semanticTokens/full",
                                "textDocument/foldingRange", "textDocument/diagnostic"):
                    params = {"textDocument": doc}
                elif method == "workspace/symbol":
                    params = {"query": "a"}
                reply = server.request(method, params)
                error = reply.get("error")
                assert error is None or error.get("code") not in (-32603, -32700), f"{method}: {error}"
        for method in ("graphlsp.saveViewAsText", "graphlsp.foldBinary"):
            reply = server.request("workspace/executeCommand", {"command": method, "arguments": [
                {"uri": uri, "output": str(folder / f"out{server.ids}{'.onnxtxt' if 'Text' in method else '.onnx'}"),
                 "overwrite": True}]})  # fmt: skip
            error = reply.get("error")
            assert error is None or error.get("code") != -32603, f"{method}: {error}"
        server.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": doc}})
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
    outside = [line for line in server.stderr if line.startswith("FUZZ-OPENED-OUTSIDE")]
    assert not outside, f"the server opened outside the model's folder: {outside[0].split(' ', 1)[1].strip()}"


# ---- repositories: a cloned repository is untrusted input (docs/security.md)

OUTER_SECRET = "FUZZ-OUTER-SECRET-5e1d"
INREPO_SECRET = "FUZZ-INREPO-SECRET-a7c2"
_REPO_AUDIT: dict[str, Any] = {"on": False, "events": []}


def _repo_hook(event: str, args: tuple[Any, ...]) -> None:
    """Reads and writes while a repository input runs: (kind, resolved path, whether the path was a link)."""
    if not _REPO_AUDIT["on"] or _REPO_AUDIT.get("busy"):
        return
    _REPO_AUDIT["busy"] = True
    try:
        if event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            if path is None or isinstance(path, int):
                return
            p = os.fsdecode(path)
            writing = (isinstance(mode, str) and any(ch in mode for ch in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
            nofollow = isinstance(flags, int) and bool(flags & getattr(os, "O_NOFOLLOW", 0))
            link = os.path.islink(p) and not nofollow
            # O_NOFOLLOW: a link at the name itself is refused, not followed (its folder's links still are)
            real = (os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(p))), os.path.basename(p))
                    if nofollow else os.path.realpath(p))  # fmt: skip
            _REPO_AUDIT["events"].append(("write" if writing else "read", real, link, p))
        elif event in ("os.rename", "os.remove", "os.mkdir", "os.symlink", "os.chmod", "os.truncate"):
            path, fd = args[0], None
            if event == "os.rename":
                path, fd = args[1], args[3] if len(args) > 3 else None
            elif event in ("os.remove", "os.mkdir", "os.symlink", "os.chmod"):
                fd = args[-1] if isinstance(args[-1], int) else None
            if isinstance(path, int):
                return
            p = os.fsdecode(path)
            if fd is not None and fd >= 0 and not os.path.isabs(p):
                with contextlib.suppress(OSError):
                    p = os.path.join(os.readlink(f"/proc/self/fd/{fd}"), p)
            parent = os.path.realpath(os.path.dirname(os.path.abspath(p)) or ".")
            _REPO_AUDIT["events"].append(("write", os.path.join(parent, os.path.basename(p)), False, p))
    except Exception:
        pass
    finally:
        _REPO_AUDIT["busy"] = False


def _random_path(c: Any, folders: list[str]) -> str:
    return c.choice(folders) + "/" + c.choice(["m", "bert", "env", "x", "lib", "notes", "a b", ".hidden"]) + c.choice(
        [".onnxtxt", ".onnx", ".onnxop", ".onnxtext", ".txt"])


def make_repo(c: Any) -> bytes:
    """A repository as JSON: folders, files (models, op libraries, files that are no models, with secrets), links
    in and out (secrets, /proc/self/environ, /dev/zero, folders above), FIFOs, a config whose paths lead anywhere,
    planted cache folders and output names; and the commands CI and a user run on it."""
    folders = ["."]
    for _ in range(c.integer(0, 4)):
        folders.append(c.choice(folders) + "/" + c.choice(["models", "d", "sub", ".git", "n"]))
    if c.integer(0, 5) == 0:  # a deep tree for globs
        folders.append("deep/" + "/".join(f"n{i}" for i in range(c.integer(10, 45))))
    entries: list[dict[str, str]] = []
    out_targets = ["@outer/secret.env", "@outer/passwd", "@outer/victim", "@outer", "/proc/self/environ", "/dev/zero",
                   "@base/secret.bin", "/etc/passwd", "@outer/model.onnxtxt", "/sys/kernel/mm"]  # fmt: skip
    for _ in range(c.integer(1, 10)):
        path = _random_path(c, folders)
        kind = c.choice(["model", "model", "binary", "library", "notmodel", "link-out", "link-out", "link-in", "fifo",
                         "dir-link-out", "dangling"])  # fmt: skip
        target = ""
        if kind in ("link-out", "dir-link-out"):
            target = c.choice(out_targets)
        elif kind == "link-in":  # to a file that may be named (a chain to /etc/passwd would be read as named)
            target = c.choice([e["path"] for e in entries if e["target"] not in ("@base/secret.bin", "/etc/passwd")
                               and e["kind"] != "link-in"] or ["./x"])  # fmt: skip
        if all(e["path"] != path for e in entries):  # the first of a name is the one built
            entries.append({"path": path, "kind": kind, "target": target})
    config = ""
    if c.choice([True, True, False]):
        libs = [c.choice(["@outer/secret.env", "/proc/self/environ", "/etc/pass*", "../outer.onnxop", "up/secret.env",
                          "d/**/**/**/**/**/**/**/**/*.onnxop", "/**/*.x", "**/*.onnxop", "deep/**/*.onnxop",
                          "lib.onnxop", "notes.txt", entries[0]["path"] if entries else "x", "models/../../x.onnxop", "~/x",
                          "*.onnxop", "[", "a**b/*.onnxop"]) for _ in range(c.integer(0, 3))]  # fmt: skip
        pfi = c.choice(["", 'per-file-ignores = { "../*" = ["GL2"] }\n', 'per-file-ignores = { "/etc/*" = ["GL2"] }\n',
                        'per-file-ignores = { "models/*" = ["GL2"] }\n'])  # fmt: skip
        config = f"op-libraries = {json.dumps(libs)}\n{pfi}"
    cache = c.choice(["none", "none", "link-out", "gitignore-link", "file", "planted-entries"])
    # named files are read as asked, wherever they lead (pre-commit names them): never the ones outside the worker's
    # folder (its audit hook reports those), except /proc, /sys and /dev, which must be refused unopened
    nameable = [e for e in entries if e["target"] not in ("@base/secret.bin", "/etc/passwd")]
    models = [e["path"] for e in nameable if e["kind"] in ("model", "binary", "link-out", "link-in", "fifo")]
    commands: list[list[str]] = []
    for _ in range(c.integer(1, 3)):
        which = c.choice(["check-dot", "check-dot", "check-named", "graph", "fold", "convert", "fix"])
        model = c.choice(models or ["./absent.onnxtxt"])
        planted = c.choice(["out.onnx", "out.onnxtxt", "m.graph.html", "m.folded.onnx", "m.onnxtxt.tmp"])
        if which == "check-dot":
            commands.append(["check", "-j", "1", *c.choice([[], ["--no-cache"]]), "--format",
                             c.choice(["text", "json", "sarif", "github", "concise"]), "."])  # fmt: skip
        elif which == "check-named":
            named = [e["path"] for e in nameable][: c.integer(1, 4)] or ["./absent.onnxtxt"]
            commands.append(["check", "-j", "1", "--no-cache", *named])
        elif which == "graph":
            commands.append(["graph", model])
        elif which == "fold":
            out = planted if planted.endswith(".onnx") == model.endswith(".onnx") else (
                "m.folded.onnx" if model.endswith(".onnx") else "out.onnxtxt")
            commands.append(["fold", model, "-o", out])
        elif which == "convert":
            commands.append(["convert", model, c.choice(["out.onnx", "out.onnxtxt"])])
        else:
            commands.append(["check", "-j", "1", "--no-cache", "--fix", model])
    return json.dumps({"folders": folders, "entries": entries, "config": config,
                       "config_name": c.choice(["pyproject.toml", "graphlsp.toml"]), "cache": cache,
                       "planted": c.choice([[], ["m.graph.html", "out.onnx", "out.onnxtxt", "m.folded.onnx"]]),
                       "commands": commands}).encode()  # fmt: skip


def _build_repo(spec: dict[str, Any], outer: Path, base: Path) -> Path:
    import subprocess

    from tests import fuzz_models as fm

    if outer.exists():  # rm, not shutil.rmtree: its opens relative to folder descriptors look like opens elsewhere
        subprocess.run(["rm", "-rf", str(outer)], check=True)
    repo = outer / "work" / "repo"
    repo.mkdir(parents=True)
    (outer / "secret.env").write_text(f"DB_PASSWORD={OUTER_SECRET}\n")
    (outer / "passwd").write_text(f"root:x:0:0:{OUTER_SECRET}:/root:/bin/bash\n")
    (outer / "victim").write_text("precious\n")
    (outer / "outer.onnxop").write_text("library outer\nop Outer {\n  input x: T[N]\n  output y: T[N]\n}\n")
    (outer / "model.onnxtxt").write_text((ROOT / "examples" / "mlp.onnxtxt").read_text())
    (repo / "up").symlink_to(outer, target_is_directory=True)
    for f in spec["folders"]:
        (repo / f).mkdir(parents=True, exist_ok=True)
    text_model = (ROOT / "examples" / "mlp.onnxtxt").read_text()
    seeds = fm.binary_seeds()
    for e in spec["entries"]:
        p = repo / e["path"]
        if os.path.lexists(p):
            continue
        kind, target = e["kind"], e["target"].replace("@outer", str(outer)).replace("@base", str(base))
        if kind == "model":
            p.write_text(text_model)
        elif kind == "binary":
            p.write_bytes(seeds[len(e["path"]) % len(seeds)])
        elif kind == "library":
            p.write_text(_library_seeds()[0])
        elif kind == "notmodel":
            p.write_text(f"TOKEN={INREPO_SECRET}\npassword = {INREPO_SECRET}\n")
        elif kind in ("link-out", "dir-link-out", "link-in"):
            p.symlink_to(target if kind != "link-in" else repo / target)
        elif kind == "fifo":
            os.mkfifo(p)
        else:
            p.symlink_to(repo / "nowhere")
    if spec["config"]:
        body = spec["config"].replace("@outer", str(outer))
        if spec["config_name"] == "pyproject.toml":
            body = "[tool.graphlsp]\n" + body
        (repo / spec["config_name"]).write_text(body)
    for name, text in (("lib.onnxop", _library_seeds()[0]), ("notes.txt", f"key={INREPO_SECRET}\n")):
        if not os.path.lexists(repo / name):
            (repo / name).write_text(text)
    cache = repo / ".graphlsp_cache"
    if spec["cache"] == "link-out":
        cache.symlink_to(outer, target_is_directory=True)
    elif spec["cache"] == "gitignore-link":
        cache.mkdir()
        (cache / ".gitignore").symlink_to(outer / "victim")
    elif spec["cache"] == "file":
        cache.write_text("not a folder")
    elif spec["cache"] == "planted-entries":
        cache.mkdir()
        for i in range(3):
            (cache / f"{i:064x}.json").symlink_to(outer / "secret.env")
    for name in spec["planted"]:
        if not os.path.lexists(repo / name):
            (repo / name).symlink_to(outer / "victim")
    for name in ("m.onnxtxt.tmp", "m.folded.onnx.tmp", "out.onnx.tmp"):
        if not os.path.lexists(repo / name):
            (repo / name).symlink_to(outer / "victim")
    return repo


def _outside_files(outer: Path, repo: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, names in os.walk(outer):
        if Path(dirpath) == repo.parent:
            dirnames[:] = [d for d in dirnames if d != repo.name]
        for name in names + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(dirpath, name)
            out[p] = os.readlink(p) if os.path.islink(p) else Path(p).read_bytes()
    return out


def _environ_secrets() -> list[str]:
    """Entries of this process's own /proc/self/environ long enough to be recognised in an output."""
    try:
        with open("/proc/self/environ", "rb") as f:
            data = f.read()
    except OSError:
        return []
    return [e for e in data.decode("utf-8", "replace").split("\0") if len(e) >= 24 and "=" in e][:40]


def check_repo(data: bytes, folder: Path) -> None:
    """The rule of docs/security.md on a random repository: nothing outside it read through a walk or a config,
    no file of /proc, /sys, /dev read, no secret printed, nothing outside written (nor through a link), every
    command ends with graphlsp's own answer."""
    from tests import fuzz_models as fm

    spec = json.loads(data)
    outer = folder / "repo-fuzz"
    base = folder.parent
    repo = _build_repo(spec, outer, base)
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if not _REPO_AUDIT.get("installed"):
        sys.addaudithook(_repo_hook)
        _REPO_AUDIT["installed"] = True
    secrets = [OUTER_SECRET, INREPO_SECRET, "root:x:0:0:root", *_environ_secrets()]
    before = _outside_files(outer, repo)
    repo_real = os.path.realpath(repo) + os.sep
    outer_real = os.path.realpath(outer) + os.sep
    cwd = os.getcwd()
    for argv in spec["commands"]:
        named = tuple(os.path.realpath(repo / a) for a in argv[1:] if not a.startswith("-"))
        _REPO_AUDIT["events"] = []
        os.chdir(repo)
        _REPO_AUDIT["on"] = True
        try:
            code, out, err = fm.run_cli(argv)
        finally:
            _REPO_AUDIT["on"] = False
            os.chdir(cwd)
        what = " ".join(argv)
        assert "internal error" not in err and "Traceback" not in err, f"{what}: {err[-2000:]}"
        assert code <= 2, f"{what}: exit {code}"
        for s in secrets:
            assert s not in out and s not in err, f"{what}: printed a secret ({s[:30]}...): {(out + err)[-1500:]}"
        for kind, real, link, raw in _REPO_AUDIT["events"]:
            special = real.startswith(("/sys/", "/dev/zero")) or (real.startswith("/proc/") and real.endswith("/environ"))
            assert not special, f"{what}: opened {raw} ({real})"
            if kind == "read":
                outside = (real + os.sep).startswith(outer_real) and not (real + os.sep).startswith(repo_real)
                asked = any(real == n or real.startswith(n + os.sep) for n in named)  # a named file, a named folder
                assert not outside or asked, f"{what}: read {raw} ({real}), outside the repository"
            else:
                inside = (real + os.sep).startswith(repo_real) or (cache and real.startswith(os.path.realpath(cache)))
                assert inside, f"{what}: wrote {raw} ({real}), outside the repository"
                assert not link, f"{what}: wrote through the link {raw}"
        assert _outside_files(outer, repo) == before, f"{what}: changed a file outside the repository"
