"""Kernel tables per target (`onnxruntime:cpu`, `onnxruntime:cuda`, ...) and onnxruntime's rule for matching a
node to a kernel (onnxruntime/core/framework/kernel_registry.cc):

- version: a kernel registered for [start, end] matches a node whose schema since_version lies in it; one
  registered open-ended (`start+`) matches only since_version == start, since a newer schema may have come
  after the kernel was written;
- types: for each type string of the kernel (a type constraint name, or a formal parameter's name), the first
  argument of the node bound to it that exists (inputs first, then outputs; the first argument of a variadic
  parameter) must have one of the kernel's types for that string. The first kernel that matches is used.

Tables come, for each target, from the installed onnxruntime when it registers that provider (read once per
onnxruntime version and cached in the user's cache folder), else from the tables shipped in
graphlsp/runtime/tables/ (tools/ort_kernel_tables.py makes them). Nothing is read until a check asks.

A target may name a release (`onnxruntime@1.16:cpu`): its load limits (newest IR version and opsets) come from
the releases table (tools/ort_release_table.py); its kernels are looked up only when a kernel table of that very
release is at hand, never guessed from another release's."""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
import zlib
from typing import Any, Literal

from graphlsp.files import cache_dir, read_regular, write_whole

TABLE_DIR = os.path.join(os.path.dirname(__file__), "tables")  # (a str: a check does not import pathlib)
PROVIDER_LABELS = {"cpu": "CPU", "cuda": "CUDA", "dml": "DML", "rocm": "ROCm", "webgpu": "WebGPU", "js": "JS"}
UNKNOWN = "?"  # an argument whose type is not known

# Arguments as onnxruntime spells their types ("float", "seq(tensor(float))"), None where absent.
Args = list[str | None]


class TargetError(ValueError):
    pass


class Target:
    """`onnxruntime:cpu`, `onnxruntime@1.16:cpu`: a runtime, optionally one of its releases (major.minor; none:
    the current one), and one of its execution providers."""

    __slots__ = ("runtime", "provider", "release")

    def __init__(self, runtime: str, provider: str, release: str | None = None) -> None:
        self.runtime = runtime  # "onnxruntime"
        self.provider = provider  # "cpu", "cuda", "dml"
        self.release = release  # "1.16", or None

    @property
    def spec(self) -> str:
        at = f"@{self.release}" if self.release else ""
        return f"{self.runtime}{at}:{self.provider}"


def parse_target(spec: str) -> Target:
    head, _, provider = spec.strip().lower().partition(":")
    runtime, at, release = head.partition("@")
    if runtime != "onnxruntime":
        near = f"onnxruntime{at}{release}:{provider or 'cpu'}"  # ort:cpu, onnx-runtime:cuda
        raise TargetError(f"unknown target '{spec}' (did you mean '{near}'?): targets are "
                          "onnxruntime[@<release>]:<provider> (cpu, cuda, dml)")  # fmt: skip
    provider = provider.removesuffix("executionprovider") or "cpu"
    if not at:
        return Target(runtime, provider)
    short = short_version(release)
    if short not in releases():
        known = list(releases())
        raise TargetError(f"unknown onnxruntime release '{release}' in '{spec}': the releases table knows "
                          f"{known[0]} to {known[-1]}")  # fmt: skip
    return Target(runtime, provider, short)


def short_version(version: str) -> str:
    """`1.16.3` -> `1.16`"""
    return ".".join(version.strip().split(".")[:2])


@functools.cache
def releases() -> dict[str, dict[str, Any]]:
    """onnxruntime releases (major.minor, oldest first) -> {"ir_version": n, "opsets": {domain: n}, "from": ...}."""
    import json  # (2 ms of imports: the installed table is kept as marshal, and most checks read no other)

    data: dict[str, dict[str, Any]] = json.loads(_read_table("onnxruntime-releases.json"))["releases"]
    return data


def known_target(spec: str) -> str:
    """The target's canonical name (`onnxruntime:cpu`) when a table describes it (shipped, or the installed
    onnxruntime's providers by name: none of its tables is read). Raises TargetError."""
    target = parse_target(spec)
    if target.provider in shipped_providers():
        return target.spec
    from graphlsp.runtime.installed import PROVIDER_NAMES

    if target.provider in PROVIDER_NAMES.values() and installed_version() is not None:
        return target.spec  # the installed onnxruntime may register it: table_for says when it does not
    import difflib

    known = ", ".join(f"onnxruntime:{p}" for p in shipped_providers())
    close = difflib.get_close_matches(target.provider, list(shipped_providers()), n=1, cutoff=0.5)
    near = f" (did you mean '{target.runtime}:{close[0]}'?)" if close else ""
    raise TargetError(f"unknown target '{spec}'{near}: known targets are {known}")


class Lookup:
    """The outcome of looking a node up: `status` is "ok", "missing" (no kernel matches), "unknown" (a type
    the match needs is not known) or "no-op" (the provider registers no kernel for the op at all). `kernels` are
    the kernels whose versions match (for the message); `failed` names a type string and the type that missed.
    (Plain classes here: a dataclass costs a millisecond to define, and this module loads on every check.)"""

    __slots__ = ("status", "since", "kernels", "failed")

    def __init__(self, status: str, since: int | None = None, kernels: list[list[Any]] | None = None,
                 failed: tuple[str, str] | None = None) -> None:  # fmt: skip
        self.status, self.since, self.kernels, self.failed = status, since, kernels, failed

    def __repr__(self) -> str:
        return f"Lookup({self.status!r}, {self.since}, failed={self.failed})"


class KernelTable:
    def __init__(self, data: dict[str, Any], provider: str, kernels: dict[str, Any]) -> None:
        self.runtime = data.get("runtime", "onnxruntime")
        self.version: str = data["version"]
        self.provider = provider
        self.source: str = data.get("source", "")
        self.kernels: dict[str, dict[str, list[list[Any]]]] = kernels
        self.schemas: dict[str, dict[str, dict[str, dict[str, list[list[Any]]]]]] = data["schemas"]
        self.limits: dict[str, Any] = data.get("limits", {})
        # the release the limits are those of (the current one, for a target without a release)
        self.release = short_version(data.get("limits_version", self.version))
        self.checks_kernels = True  # False: a target release no kernel table describes (only its limits apply)
        self._since: dict[tuple[str, str], list[int]] = {}

    @property
    def label(self) -> str:
        """`onnxruntime 1.32 CPU`"""
        return f"{self.runtime} {short_version(self.version)} {PROVIDER_LABELS.get(self.provider, self.provider)}"

    @property
    def release_label(self) -> str:
        """`onnxruntime 1.16`: the release whose limits apply."""
        return f"{self.runtime} {self.release}"

    def for_release(self, release: str) -> KernelTable:
        """This table for a target naming a release: that release's limits; kernels only if they are its own."""
        out = KernelTable.__new__(KernelTable)
        out.__dict__.update(self.__dict__)
        out.release = release
        out.limits = {k: v for k, v in releases()[release].items() if k != "from"}
        out.checks_kernels = short_version(self.version) == release
        return out

    def knows(self, domain: str) -> bool:
        return domain in self.schemas or domain in self.kernels

    def since_version(self, domain: str, op: str, imported: int) -> int | None:
        """The since_version of the op's schema onnxruntime resolves at the imported opset version."""
        key = (domain, op)
        versions = self._since.get(key)
        if versions is None:
            versions = self._since[key] = sorted(int(v) for v in self.schemas.get(domain, {}).get(op, {}))
        best = None
        for v in versions:
            if v <= imported:
                best = v
        return best

    def has_op(self, domain: str, op: str) -> bool:
        return op in self.kernels.get(domain, {})

    def lookup(self, domain: str, op: str, since: int, inputs: Args, outputs: Args) -> Lookup:
        entries = self.kernels.get(domain, {}).get(op)
        if not entries:
            return Lookup("no-op", since)
        args = self.schemas.get(domain, {}).get(op, {}).get(str(since), {})
        in_range = [e for e in entries if _version_ok(since, e[0], e[1])]
        unknown = False
        failed: tuple[str, str] | None = None
        for _start, _end, cons in in_range:
            got = _types_ok(cons, args, inputs, outputs)
            if got is True:
                return Lookup("ok", since, in_range)
            if got is None:
                unknown = True
            elif failed is None:
                failed = got
        if unknown:
            return Lookup("unknown", since, in_range)
        return Lookup("missing", since, in_range, failed)


def _version_ok(since: int, start: int, end: int | None) -> bool:
    return start == since or (end is not None and start <= since <= end)


def _types_ok(cons: dict[str, list[str]], args: dict[str, list[list[Any]]], inputs: Args,
              outputs: Args) -> Literal[True] | tuple[str, str] | None:  # fmt: skip
    """True when every type string's first existing argument has an allowed type; else the (type string, type)
    that failed; None when a type that decides is unknown."""
    for name, types in cons.items():
        refs = args.get(name)
        if refs is None:
            return None  # onnxruntime cannot resolve the type string (it fails otherwise than NOT_IMPLEMENTED)
        for kind, index in refs:
            seq = inputs if kind == "i" else outputs
            t = seq[index] if index < len(seq) else None
            if t is None:
                continue
            if t == UNKNOWN:
                return None
            if t not in types:
                return (name, t)
            break
    return True


# ---- loading
def installed_version() -> tuple[str, str] | None:
    """The installed onnxruntime distribution and its version, from its .dist-info folder's name (neither an
    import nor importlib.metadata, which scans every path entry: this runs on every check)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("onnxruntime")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    site = os.path.dirname(os.path.normpath(next(iter(spec.submodule_search_locations))))
    try:
        names = os.listdir(site)  # (not Path.glob: a third of a millisecond more)
    except OSError:
        return None
    for name in sorted(n for n in names if n.startswith("onnxruntime") and n.endswith(".dist-info")):
        dist, _, version = name.removesuffix(".dist-info").partition("-")
        if version:
            return dist.replace("_", "-"), version
    return None


@functools.cache
def installed_table() -> dict[str, Any] | None:
    """The installed onnxruntime's registry: from the cache when this version was read before, else read (and
    cached). None without onnxruntime, or with GRAPHLSP_ORT_TABLES=shipped."""
    if os.environ.get("GRAPHLSP_ORT_TABLES") == "shipped":
        return None
    found = installed_version()
    if found is None:
        return None
    dist, version = found
    folder = cache_dir()
    cache = os.path.join(folder, f"{dist}-{version}.kernels.marshal") if folder is not None else None
    if cache is not None:
        with contextlib.suppress(OSError):
            kept = unpack_table(read_regular(cache))
            if kept is not None:
                return kept
    import json

    from graphlsp.runtime.installed import read_installed

    got = read_installed()
    if got is None:
        return None
    # the form the table always had (it was kept as JSON): lists, and string keys for the schema versions
    packed = pack_table({**json.loads(json.dumps(got)), "format": FORMAT})
    if cache is not None:
        write_whole(cache, packed)
    return unpack_table(packed)


FORMAT = 2  # of the cached and shipped tables (2: the limits probe accepts a missing Identity kernel)
KEPT = b"graphlsp-kernels-1\0"  # the kept table's header: what follows is laid out as pack_table writes it


class Packed(dict[str, Any]):
    """op -> its entry, each kept as marshal bytes until it is first read: a check looks up the few dozen ops a
    model uses, of the installed registry's ~500 (decoding them all took 5 ms of every check)."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        if type(value) is bytes:
            value = marshal.loads(value)
            dict.__setitem__(self, key, value)
        return value

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        if key not in self:
            return default
        return self[key]

    def decoded(self) -> dict[str, Any]:
        """Every entry decoded, as a plain dict."""
        return {k: self[k] for k in self}

    def values(self) -> Any:
        return self.decoded().values()

    def items(self) -> Any:
        return self.decoded().items()

    def __eq__(self, other: object) -> bool:
        return self.decoded() == (other.decoded() if isinstance(other, Packed) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Packed({self.decoded()!r})"


def pack_table(table: dict[str, Any]) -> bytes:
    """A kernel table as kept in the cache folder: a header, the CRC-32 of the rest, and a marshal of the table
    whose per-op entries (kernels per provider and domain, schemas per domain) are marshal bytes of their own."""
    out = {**table,
           "providers": {p: {d: {op: marshal.dumps(e) for op, e in ops.items()} for d, ops in domains.items()}
                         for p, domains in table["providers"].items()},
           "schemas": {d: {op: marshal.dumps(e) for op, e in ops.items()} for d, ops in table["schemas"].items()}}
    body = marshal.dumps(out)
    return KEPT + zlib.crc32(body).to_bytes(4, "little") + body


def unpack_table(data: bytes) -> dict[str, Any] | None:
    """A table `pack_table` wrote, its entries decoded when first read; None for anything else (another
    layout, another format, a truncated or damaged file)."""
    head = len(KEPT)
    body = memoryview(data)[head + 4:]
    if data[:head] != KEPT or int.from_bytes(data[head:head + 4], "little") != zlib.crc32(body):
        return None
    try:
        table = marshal.loads(body)
        if not isinstance(table, dict) or table.get("format") != FORMAT:
            return None
        table["providers"] = {p: {d: Packed(ops) for d, ops in domains.items()}
                              for p, domains in table["providers"].items()}  # fmt: skip
        table["schemas"] = {d: Packed(ops) for d, ops in table["schemas"].items()}
    except (ValueError, EOFError, TypeError, KeyError, AttributeError):
        return None
    return table


@functools.cache
def shipped_common() -> dict[str, Any]:
    import json

    data: dict[str, Any] = json.loads(_read_table("onnxruntime.json"))
    return data


def shipped_providers() -> list[str]:
    return sorted(n.removeprefix("onnxruntime-").removesuffix(".json") for n in os.listdir(TABLE_DIR)
                  if n.startswith("onnxruntime-") and n.endswith(".json") and n != "onnxruntime-releases.json")


@functools.cache
def table_for(spec: str) -> KernelTable:
    """The kernel table of a target (`onnxruntime:cpu`, `onnxruntime@1.16:cpu`). Raises TargetError for a target
    nothing describes. For a target naming a release: the installed or shipped table of that release if there is
    one, else a table that checks only the release's limits (`checks_kernels` False)."""
    target = parse_target(spec)
    installed = installed_table()
    if installed is not None and target.provider in installed["providers"]:
        table = KernelTable(installed, target.provider, installed["providers"][target.provider])
        if target.release is None or short_version(table.version) == target.release:
            return table if target.release is None else table.for_release(target.release)
    shipped = _shipped_table(target.provider)
    if shipped is None:
        known = ", ".join(f"onnxruntime:{p}" for p in shipped_providers())
        raise TargetError(f"unknown target '{spec}': known targets are {known}")
    return shipped if target.release is None else shipped.for_release(target.release)


def _shipped_table(provider: str) -> KernelTable | None:
    name = f"onnxruntime-{provider}.json"
    if provider == "releases" or not os.path.isfile(os.path.join(TABLE_DIR, name)):
        return None
    import json

    common = shipped_common()
    data = json.loads(_read_table(name))
    merged = {**common, "version": data.get("version", common["version"]), "source": data.get("source", ""),
              "limits_version": common["version"]}  # fmt: skip
    return KernelTable(merged, provider, data["kernels"])


def _read_table(name: str) -> str:
    with open(os.path.join(TABLE_DIR, name), encoding="utf-8") as f:
        return f.read()


def __getattr__(name: str) -> Any:
    if name == "TABLES":  # the tables' folder as a Path, for the tools and tests
        from pathlib import Path

        return Path(TABLE_DIR)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cpu_table_for(spec: str) -> KernelTable | None:
    """The CPU table of the same runtime (for a GPU target: where a node without a kernel falls back to)."""
    target = parse_target(spec)
    if target.provider == "cpu":
        return None
    return table_for(f"{target.runtime}:cpu")


# ---- messages
_ORDER = ["float", "double", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "bool", "string"]  # fmt: skip
_RUNS = [["int8", "int16", "int32", "int64"], ["uint8", "uint16", "uint32", "uint64"]]


def describe_types(types: list[str]) -> str:
    """`float, double, int8...int64, uint8...uint64`"""
    have = sorted(set(types), key=lambda t: (_ORDER.index(t) if t in _ORDER else len(_ORDER), t))
    out: list[str] = []
    skip: set[str] = set()
    for t in have:
        if t in skip:
            continue
        run = next((r for r in _RUNS if r[0] == t and all(x in have for x in r)), None)
        if run is not None:
            out.append(f"{run[0]}...{run[-1]}")
            skip.update(run)
        else:
            out.append(t)
    return ", ".join(out)


def describe_kernels(kernels: list[list[Any]], name: str | None = None) -> str:
    """What the kernels of one version accept: the union per type string (`T: float, double`), or for `name`
    only (`float, double`)."""
    union: dict[str, set[str]] = {}
    for _, _, cons in kernels:
        for k, types in cons.items():
            union.setdefault(k, set()).update(types)
    if name is not None:
        return describe_types(sorted(union.get(name, set())))
    if len(union) == 1:
        return describe_types(sorted(next(iter(union.values()))))
    return "; ".join(f"{k}: {describe_types(sorted(v))}" for k, v in sorted(union.items()))
