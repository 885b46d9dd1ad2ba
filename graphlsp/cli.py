"""The `graphlsp` command: check, rules, rule, shapes, fold, graph, convert, serve."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphlsp import __version__

if TYPE_CHECKING:
    from graphlsp.infer.sizes import InputSizes
    from graphlsp.lint.config import Settings
    from graphlsp.lint.diagnostics import Diagnostic

EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, whose width is the terminal's as shutil.get_terminal_size gives it, found here: argparse
    makes a formatter for every argument it is given, and importing shutil (with bz2 and lzma) is 2.5 ms of start-up."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None,
                 **more: Any) -> None:  # fmt: skip
        width = width if width is not None else _columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width, **more)


def _columns() -> int:
    """shutil.get_terminal_size().columns"""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


class _ArgumentParser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"graphlsp: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _sizes(args: argparse.Namespace) -> InputSizes:
    """`--dim NAME=SIZE` and `--input-shape NAME=AxBxC`; raises ValueError."""
    from graphlsp.infer.sizes import InputSizes, parse_dim, parse_input_shape

    return InputSizes(tuple(parse_dim(x) for x in args.dim or ()),
                      tuple(parse_input_shape(x) for x in args.input_shape or ()))  # fmt: skip


def _size_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dim", action="append", metavar="NAME=SIZE",
                        help="check at this size of an input dim (a dim_param such as batch=8); repeatable")
    parser.add_argument("--input-shape", action="append", metavar="INPUT=D1xD2x...",
                        help="check with this shape of a graph input (images=1x3x640x640); repeatable")


def _check(args: argparse.Namespace) -> int:
    from graphlsp.lint.config import ConfigError, load_settings
    from graphlsp.lint.output import format_full, format_github, format_json, format_sarif, format_text, summary
    from graphlsp.lint.runner import FileResult, check_files, check_stdin
    from graphlsp.source import find_model_files

    paths = args.paths or ["."]
    # `check -` (or `--stdin-filename` without paths, as ruff has it) reads one model from standard input
    stdin = "-" in args.paths or (not args.paths and args.stdin_filename is not None)
    if stdin and len(args.paths) > 1:
        print("graphlsp: error: `-` (standard input) cannot be checked together with other paths", file=sys.stderr)
        return EXIT_USAGE
    name = args.stdin_filename or "-"
    try:
        settings = load_settings(args.config or ((args.stdin_filename or ".") if stdin else paths[0]))
    except ConfigError as e:
        print(f"graphlsp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    from graphlsp.lint.config import check_rules, validate_targets

    try:
        if args.select:
            settings.select = [c for c in args.select.split(",") if c]
            check_rules(settings.select, "--select")
        if args.ignore:
            ignore = [c for c in args.ignore.split(",") if c]
            check_rules(ignore, "--ignore")
            settings.ignore += ignore
        settings.sizes = settings.sizes.merged(_sizes(args))
        if args.target:
            settings.targets = validate_targets([t for x in args.target for t in x.split(",") if t], "--target")
    except (ConfigError, ValueError) as e:
        print(f"graphlsp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    status = EXIT_CLEAN
    missing: list[str] = []
    fix = args.fix or args.diff
    data = b""
    if stdin:  # one model, never cached; with --fix its fixed text goes to stdout and the report to stderr
        from graphlsp import files as input_files

        files = [name]
        limit = input_files.MAX_BYTES
        data = sys.stdin.buffer.read(limit + 1)  # `check - < /dev/zero` must end too
        if len(data) > limit:
            print(f"graphlsp: error: standard input is larger than {limit} bytes", file=sys.stderr)
            return EXIT_USAGE
        results: list[FileResult] = [check_stdin(data, name, settings, fix=fix, unsafe=args.unsafe_fixes)]
    else:
        files, missing = find_model_files(paths)
        for m in missing:
            print(f"graphlsp: error: {m}: {_unreadable(m)}", file=sys.stderr)
            status = EXIT_USAGE
        tty = sys.stderr.isatty()
        results = check_files(files, settings, fix=fix, jobs=args.jobs, cache=not args.no_cache,
                              progress=tty and len(files) > 20, unsafe=args.unsafe_fixes)  # fmt: skip
    echo = stdin and args.fix and not args.diff
    report = sys.stderr if echo else sys.stdout
    diagnostics = []
    changed = 0
    for r in results:
        if r.error:
            print(f"graphlsp: error: {r.path}: {r.error}", file=sys.stderr)
            status = EXIT_USAGE
            continue
        diagnostics += r.diagnostics
        if echo:  # the model as fixed (a binary one unchanged: nothing fixes binaries)
            if r.binary:
                sys.stdout.flush()
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
            else:
                sys.stdout.write(r.fixed_text if r.fixed_text is not None else r.text)
            if r.fixes:
                print(f"{r.path}: fixed {r.fixes} issue{'s' if r.fixes != 1 else ''}", file=sys.stderr)
            continue
        if r.fixed_bytes is not None:  # a binary: only what the safe fixes name changed, written as a binary
            changed += 1
            if args.diff:
                print(f"{r.path}: --fix would remove {r.fixes} unused initializer{'s' if r.fixes != 1 else ''}")
            elif not _replace(r.path, r.fixed_bytes):
                status = EXIT_USAGE
            else:
                print(f"{r.path}: fixed {r.fixes} issue{'s' if r.fixes != 1 else ''}", file=sys.stderr)
        if r.fixed_text is not None:
            changed += 1
            if args.diff:
                import difflib

                before, after = r.text.splitlines(keepends=True), r.fixed_text.splitlines(keepends=True)
                sys.stdout.writelines(difflib.unified_diff(before, after, r.path, r.path))
            elif not _replace(r.path, r.fixed_text.encode("utf-8")):
                status = EXIT_USAGE
            else:
                print(f"{r.path}: fixed {r.fixes} issue{'s' if r.fixes != 1 else ''}", file=sys.stderr)
    if args.diff:
        return EXIT_USAGE if status == EXIT_USAGE else (EXIT_ERRORS if changed else EXIT_CLEAN)
    diagnostics, hidden_hints = _without_hints(diagnostics, settings, args)
    fmt = args.format
    if fmt == "json":
        report.write(format_json(diagnostics))
    elif fmt == "sarif":
        report.write(format_sarif(diagnostics))
    elif fmt == "github":
        report.write(format_github(diagnostics))
    elif fmt == "concise":
        report.write(format_text(diagnostics))
    else:
        sources = {r.path: r.text for r in results}
        report.write(format_full(diagnostics, sources, colour=report.isatty() and not args.no_color))
    if fmt in ("text", "concise") and not args.quiet:
        failed = sum(1 for r in results if r.error)
        if failed:  # never "All checks passed" when a file was not checked at all
            checked = f"; found {len(diagnostics)} problem{'s' if len(diagnostics) != 1 else ''} in the others"
            print(f"{failed} of {len(files)} file{'s' if len(files) != 1 else ''} could not be checked{checked}.",
                  file=report)  # fmt: skip
        elif missing and not files:
            pass  # nothing was checked: the error above is the whole story
        elif missing:
            print(summary(diagnostics, len(files)).replace("All checks passed", "No problems found")
                  + f" {len(missing)} path{'s' if len(missing) != 1 else ''} not found.", file=report)  # fmt: skip
        else:
            print(summary(diagnostics, len(files)), file=report)
        if hidden_hints:
            print(f"{hidden_hints} hint{'s' if hidden_hints != 1 else ''} not shown: `--show-hints` shows "
                  f"{'them' if hidden_hints != 1 else 'it'}.", file=report)  # fmt: skip
        hidden = sum(r.hidden_fixes for r in results)
        if hidden:
            print(f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option.",
                  file=report)  # fmt: skip
    if status == EXIT_USAGE:
        return status
    failing = {"error", "warning"} if args.strict else {"error"}
    return EXIT_ERRORS if any(d.severity in failing for d in diagnostics) else EXIT_CLEAN


def _without_hints(
    diagnostics: list[Diagnostic], settings: Settings, args: argparse.Namespace
) -> tuple[list[Diagnostic], int]:
    """Hints are for the editor: the CLI reports them only when asked, with `--show-hints` or a `select` that
    names the rule (its code, its name, or a prefix of its code more than `GL`). Returns the findings kept and
    how many hints were left out."""
    if args.show_hints:
        return diagnostics, 0
    from graphlsp.lint.rules import RULES

    selected = [s for s in settings.select if s != "GL"]

    def asked(code: str) -> bool:
        name = RULES[code].name if code in RULES else ""
        return any(code.startswith(s) or s == name for s in selected)

    kept = [d for d in diagnostics if d.severity != "hint" or asked(d.code)]
    return kept, len(diagnostics) - len(kept)


def _replace(path: str, data: bytes) -> bool:
    """Write a file atomically: a temporary file in the same folder, then renamed over it (an interrupted
    `--fix` leaves the old file or the new one, never half of one). The file keeps its permission bits.
    False (and the error said) when it cannot be written."""
    import contextlib
    import stat
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    tmp = ""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if not isinstance(e, OSError):
            raise
        print(f"graphlsp: error: {path}: cannot write the fixed model: {e.strerror or e}", file=sys.stderr)
        return False
    return True


def _unreadable(path: str) -> str:
    """Why a path given on the command line is neither a file nor a folder."""
    try:
        os.stat(path)
    except OSError as e:
        return (e.strerror or str(e)).lower()
    except ValueError as e:  # a NUL in the path
        return str(e)
    return "neither a file nor a folder"


def _count(text: str) -> int:
    """argparse's type for -j: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value}: must be 0 (one per core) or more")
    return value


def _output_problem(output: str, inputs: str) -> str | None:
    """Why `output` cannot be written (before any work is done): a folder, a folder that does not exist, or the
    input itself."""
    if output == "-":
        return None
    try:
        if os.path.isdir(output):
            return "is a folder; name the file to write"
        folder = os.path.dirname(output) or "."
        if not os.path.isdir(folder):
            return f"cannot be written: there is no folder {folder}"
        if os.path.exists(output) and os.path.exists(inputs) and os.path.samefile(output, inputs):
            return f"is the input {inputs}; write the output to another file"
    except (OSError, ValueError) as e:
        return f"cannot be written: {e}"
    return None


def _write_output(output: str, data: bytes) -> str | None:
    """Write a command's output file; why it could not be written, or None."""
    try:
        with open(output, "wb") as f:
            f.write(data)
    except (OSError, ValueError) as e:
        return f"cannot be written: {getattr(e, 'strerror', None) or e}"
    return None


def _rules(args: argparse.Namespace) -> int:
    from graphlsp.lint.rules import RULES

    for r in RULES.values():
        print(f"{r.code}  {r.name:<28} {r.severity:<8} {r.summary}")
    return EXIT_CLEAN


def _rule(args: argparse.Namespace) -> int:
    from graphlsp.lint.docs import DOCS
    from graphlsp.lint.rules import RULES

    wanted = args.code
    found = RULES.get(wanted.upper()) or next((r for r in RULES.values() if r.name == wanted), None)
    if found is None:
        print(f"graphlsp: error: no rule {wanted!r}; `graphlsp rules` lists them", file=sys.stderr)
        return EXIT_USAGE
    doc = DOCS.get(found.code)
    print(f"# {found.code} {found.name} ({found.severity})\n\n{found.summary}")
    if doc is not None:
        print(f"\n## Why\n\n{doc.why}")
        if doc.example:
            print(f"\n## Example\n\n```\n{doc.example.rstrip()}\n```")
        print(f"\n## Fix\n\n{doc.fix}")
    return EXIT_CLEAN


def _finding(code: str, message: str) -> str:
    """`error: GL106 message`: a finding as `check` words it, severity first."""
    from graphlsp.lint.rules import RULES

    severity = RULES[code].severity if code in RULES else "error"
    return f"{severity}: {code} {message}"


def _convert(args: argparse.Namespace) -> int:
    """Binary .onnx -> ONNX text (our printer: every tensor element, text both parsers read back); text -> .onnx
    (the protobuf onnx's parser builds) or text -> text (onnx's printer, as before). Text never goes to a .onnx
    path nor protobuf to a text path."""
    from pathlib import Path

    from graphlsp.source import TEXT_SUFFIXES

    src, dst = args.input, args.output
    from_binary = Path(src).suffix == ".onnx"
    to_binary = dst != "-" and Path(dst).suffix == ".onnx"
    if dst != "-" and not to_binary and Path(dst).suffix not in TEXT_SUFFIXES:
        print(f"graphlsp: error: {dst}: output must end in .onnx, .onnxtxt or .onnxtext (or be -)", file=sys.stderr)
        return EXIT_USAGE
    problem = _output_problem(dst, src)
    if problem is not None:
        print(f"graphlsp: error: {dst}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if from_binary and to_binary:
        print(f"graphlsp: error: {src} and {dst} are both binary: a .onnx converts to text (.onnxtxt, .onnxtext or "
              "-), and text to .onnx", file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    if from_binary:
        from graphlsp.binary.read import read_model
        from graphlsp.syntax.printer import PrintError, print_model

        try:
            model, _ = read_model(src)
        except OSError as e:
            print(f"graphlsp: error: {src}: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        except Exception as e:  # protobuf's DecodeError and friends
            print(f"{src}:1:1: {_finding('GL106', f'cannot load binary ONNX model: {e}')}", file=sys.stderr)
            return EXIT_ERRORS
        try:
            text = print_model(model)
        except PrintError as e:
            print(f"graphlsp: error: {src}: {e}", file=sys.stderr)
            return EXIT_ERRORS
    else:
        import onnx

        from graphlsp.lint.diagnostics import collect
        from graphlsp.lint.output import format_text
        from graphlsp.source import read_source
        from graphlsp.syntax.document import SyntaxDocument
        from graphlsp.syntax.to_proto import ConversionError, model_to_proto

        try:
            source = read_source(src)
        except OSError as e:
            print(f"graphlsp: error: {src}: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        if source.error:
            print(f"{src}:1:1: {_finding(*source.error[:2])}", file=sys.stderr)
            return EXIT_ERRORS
        doc = SyntaxDocument(source.text)
        if doc.problems:
            sys.stderr.write(format_text(d for d in collect(doc, src) if d.code.startswith("GL1")))
            return EXIT_ERRORS
        try:
            proto = model_to_proto(doc.model)
        except ConversionError as e:  # what onnx's parser rejects and the document does not (no graph at all)
            line, col = doc.lines.position(max(0, min(e.start, len(doc.text))))
            print(f"{src}:{line + 1}:{col + 1}: {_finding(e.code, str(e))}", file=sys.stderr)
            return EXIT_ERRORS
        if to_binary:
            problem = _write_output(dst, proto.SerializeToString())
            if problem is not None:
                print(f"graphlsp: error: {dst}: {problem}", file=sys.stderr)
                return EXIT_USAGE
            return EXIT_CLEAN
        import onnx.printer

        text = onnx.printer.to_text(proto)
        text = text if text.endswith("\n") else text + "\n"
    if dst == "-":
        sys.stdout.write(text)
    else:
        problem = _write_output(dst, text.encode("utf-8"))  # "\n" in a quoted string stays "\n"
        if problem is not None:
            print(f"graphlsp: error: {dst}: {problem}", file=sys.stderr)
            return EXIT_USAGE
    return EXIT_CLEAN


def _shapes(args: argparse.Namespace) -> int:
    import json

    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.infer.contracts import input_requirements
    from graphlsp.infer.report import value_shapes
    from graphlsp.infer.types import type_str
    from graphlsp.lint.config import ConfigError, load_settings
    from graphlsp.source import read_source

    try:
        settings = load_settings(args.file)  # the project's op libraries: their ops' shapes
        sizes = settings.sizes.merged(_sizes(args))
    except (ConfigError, ValueError) as e:
        print(f"graphlsp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.file.endswith(".onnx"):
        from graphlsp.binary.read import read_model

        try:
            model, _ = read_model(args.file)
        except OSError as e:
            print(f"graphlsp: error: {args.file}: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        except Exception as e:  # protobuf's DecodeError and friends
            print(f"graphlsp: error: {args.file}: cannot load binary ONNX model: {e}", file=sys.stderr)
            return EXIT_ERRORS
        binary = ModelAnalysis(model, [], sizes=sizes)
        shapes = value_shapes(model, binary.refiner)
        requirements = input_requirements(binary.refiner)
        failed = False
    else:
        try:
            source = read_source(args.file)
        except OSError as e:
            print(f"graphlsp: error: {args.file}: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        a = Analysis(source.text, sizes=sizes)
        shapes = value_shapes(a.model, a.refiner, a.doc.lines.position)
        requirements = input_requirements(a.refiner)
        failed = any(p.code.startswith("GL1") for p in a.doc.problems)
    contracts = [{"input": r.input, "dim": r.dim, "symbol": r.symbol, "requires": r.requirement,
                  "node": r.node.name, "op": r.node.qualified_op} for r in requirements]  # fmt: skip
    if args.format == "json":
        print(json.dumps({"values": [v.to_json() for v in shapes], "contracts": contracts}, indent=2))
    else:
        width = max((len(v.name) for v in shapes), default=0)
        for v in shapes:
            where = f"{v.line}:{v.col}" if v.line is not None else (v.node or "input")
            if v.line is None and "/" in v.graph:  # a subgraph's value: its graph tells two Constant_0 apart
                where = f"{v.graph}/{where}"
            print(f"{where}\t{v.name.ljust(width)}  {type_str(v.type)}")
        if contracts:
            print("\nsizes the graph takes:")
        for c in contracts:
            at = f" '{c['node']}'" if c["node"] else ""
            print(f"  {c['input']} dim {c['dim']} ({c['symbol']}): {c['requires']} ({c['op']}{at})")
    return EXIT_ERRORS if failed else EXIT_CLEAN


def _fold(args: argparse.Namespace) -> int:

    from graphlsp.lint.config import ConfigError, load_settings
    from graphlsp.lint.diagnostics import collect
    from graphlsp.lint.fold import fold_text
    from graphlsp.lint.output import format_text
    from graphlsp.source import read_source
    from graphlsp.syntax.document import SyntaxDocument

    binary_in = args.file.endswith(".onnx")
    if args.output not in (None, "-") and args.output.endswith(".onnx") != binary_in:
        what = "a binary model" if binary_in else "ONNX text"
        print(f"graphlsp: error: {args.output}: fold writes {what} like its input; name the output "
              f"{'*.onnx' if binary_in else '*.onnxtxt'} (`graphlsp convert` changes the format)", file=sys.stderr)
        return EXIT_USAGE
    problem = _output_problem(args.output, "") if args.output is not None else None
    if problem is not None:
        print(f"graphlsp: error: {args.output}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        settings = load_settings(args.file)  # the project's op libraries come into use here too
        cap = args.size_cap if args.size_cap is not None else settings.fold_size_cap
        if binary_in:
            return _fold_binary(args.file, args.output, cap)
        source = read_source(args.file)
    except OSError as e:
        print(f"graphlsp: error: {args.file}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as e:
        print(f"graphlsp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if source.error:
        print(f"{args.file}:1:1: {_finding(*source.error[:2])}", file=sys.stderr)
        return EXIT_ERRORS
    doc = SyntaxDocument(source.text)
    if doc.problems:  # folding a file that does not parse would guess at its meaning
        sys.stderr.write(format_text(d for d in collect(doc, args.file) if d.code.startswith("GL1")))
        return EXIT_ERRORS
    run = fold_text(doc, cap)  # the document parsed above: a file is parsed once
    r = run.result
    if args.output in (None, "-"):
        sys.stdout.write(run.text)
    else:
        problem = _write_output(args.output, run.text.encode("utf-8"))
        if problem is not None:
            print(f"graphlsp: error: {args.output}: {problem}", file=sys.stderr)
            return EXIT_USAGE
    print(f"{args.file}: folded {r.folded} node{'s' if r.folded != 1 else ''} into {r.constants} Constant"
          f"{'s' if r.constants != 1 else ''}, removed {r.removed} more ({run.seconds:.2f} s)", file=sys.stderr)
    return EXIT_CLEAN


def _fold_binary(path: str, output: str | None, cap: int) -> int:
    """Fold a binary model into a binary model: only the folded nodes change; initializers keep their bytes and
    external data stays where it is (the output is written beside the input's data files, or refused)."""
    import time
    from pathlib import Path

    from graphlsp.lint.fold import fold_binary

    if output in (None, "-"):
        print("graphlsp: error: fold of a binary model writes a binary model: give -o OUT.onnx", file=sys.stderr)
        return EXIT_USAGE
    assert output is not None
    t0 = time.perf_counter()
    try:
        data, r, external = fold_binary(path, cap)
    except OSError:
        raise
    except Exception as e:  # protobuf's DecodeError
        print(f"graphlsp: error: {path}: cannot load binary ONNX model: {e}", file=sys.stderr)
        return EXIT_ERRORS
    if external and Path(os.path.realpath(output)).parent != Path(os.path.realpath(path)).parent:
        print(f"graphlsp: error: {output}: the model's weights are in external data files beside {path}; write the "
              "folded model in the same folder so that it still finds them", file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    problem = _write_output(output, data)
    if problem is not None:
        print(f"graphlsp: error: {output}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{path}: folded {r.folded} node{'s' if r.folded != 1 else ''} into {r.constants} Constant"
          f"{'s' if r.constants != 1 else ''}, removed {r.removed} more ({time.perf_counter() - t0:.2f} s)",
          file=sys.stderr)  # fmt: skip
    return EXIT_CLEAN


def _graph(args: argparse.Namespace) -> int:
    """The model's graph as one self-contained HTML page (graphlsp/graphview)."""
    from pathlib import Path

    from graphlsp.graphview import file_graph
    from graphlsp.graphview.page import page
    from graphlsp.lint.config import ConfigError, load_settings

    try:
        settings = load_settings(args.file)  # the project's op libraries and rule selection
        data = file_graph(args.file, settings)
    except OSError as e:
        print(f"graphlsp: error: {args.file}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as e:
        print(f"graphlsp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "json":
        import json

        text = json.dumps(data, ensure_ascii=False)
    else:
        text = page(data)
    if args.output in (None, "-") and args.format == "json":
        sys.stdout.write(text + "\n")
        return EXIT_CLEAN
    out = args.output or str(Path(args.file).with_suffix("").name + ".graph.html")
    if out == "-":
        sys.stdout.write(text)
        return EXIT_CLEAN
    Path(out).write_text(text, encoding="utf-8")
    print(f"{args.file}: wrote {out}", file=sys.stderr)
    return EXIT_CLEAN


def _serve(args: argparse.Namespace) -> int:
    import logging

    from graphlsp.lsp.server import serve

    address = None
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit() or not 0 <= int(port) <= 65535:
            print(f"graphlsp: error: --tcp {args.tcp}: expected HOST:PORT with a port number from 0 to 65535 "
                  "(e.g. --tcp 127.0.0.1:2087)", file=sys.stderr)  # fmt: skip
            return EXIT_USAGE
        address = f"{host or '127.0.0.1'}:{int(port)}"
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    try:
        serve(address)
    except OSError as e:  # the address is taken, or the host is not one of this machine's
        print(f"graphlsp: error: --tcp {args.tcp}: cannot listen there: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_CLEAN


def _add_check(sub: argparse._SubParsersAction[Any]) -> None:
    check = sub.add_parser("check", help="report diagnostics for model files and folders")
    check.add_argument("paths", nargs="*", help="files or folders (*.onnxtxt, *.onnxtext, *.onnx, and op "
                       "libraries *.onnxop), or - for standard input; default: .")  # fmt: skip
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="the name of the model read from standard input, for output and settings (a name "
                       "ending in .onnx reads a binary model)")  # fmt: skip
    check.add_argument("--format", choices=["text", "concise", "json", "sarif", "github"], default="text")
    check.add_argument("--fix", action="store_true", help="apply the safe fixes and report what changed")
    check.add_argument("--diff", action="store_true", help="show the safe fixes as a diff, write nothing")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: the unsafe fixes too "
                       "(a guessed op name or opset version, rewritten declarations, folded constants)")  # fmt: skip
    check.add_argument("--strict", action="store_true", help="warnings fail the check too")
    check.add_argument("--show-hints", action="store_true", help="report hints too (constant folding and the like; "
                       "the editor shows them, the CLI leaves them out unless asked, or selected by code)")  # fmt: skip
    check.add_argument("--select", help="comma-separated codes, prefixes or names to report (only these)")
    check.add_argument("--ignore", help="comma-separated codes, prefixes or names not to report")
    check.add_argument("--target", action="append", metavar="RUNTIME[@RELEASE]:PROVIDER",
                       help="where the model must load (GL7xx), repeatable: onnxruntime:cpu (default), "
                       "onnxruntime:cuda, onnxruntime:dml, or a release: onnxruntime@1.16:cpu; replaces `targets` "
                       "of the config")
    check.add_argument("--config", help="a pyproject.toml or graphlsp.toml to use instead of the nearest one")
    check.add_argument("--no-cache", action="store_true", help="analyse every file, even unchanged ones")
    check.add_argument("--no-color", action="store_true", help="no colour even on a terminal")
    check.add_argument("-j", "--jobs", type=_count, default=0, help="worker processes (default: one per core; at "
                       "most one per file)")  # fmt: skip
    check.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    _size_options(check)
    check.set_defaults(func=_check)


def _add_rules(sub: argparse._SubParsersAction[Any]) -> None:
    rules = sub.add_parser("rules", help="list every rule")
    rules.set_defaults(func=_rules)


def _add_rule(sub: argparse._SubParsersAction[Any]) -> None:
    rule = sub.add_parser("rule", help="explain one rule: what it checks, why, an example and the fix")
    rule.add_argument("code", help="a code (GL301) or a name (broadcast-incompatible)")
    rule.set_defaults(func=_rule)


def _add_shapes(sub: argparse._SubParsersAction[Any]) -> None:
    shapes = sub.add_parser("shapes", help="print every value's inferred element type and shape")
    shapes.add_argument("file", help="a .onnxtxt, .onnxtext or .onnx file")
    shapes.add_argument("--format", choices=["text", "json"], default="text")
    _size_options(shapes)
    shapes.set_defaults(func=_shapes)


def _add_fold(sub: argparse._SubParsersAction[Any]) -> None:
    fold = sub.add_parser("fold", help="fold constant subgraphs into Constants (the rest of the text is kept)")
    fold.add_argument("file", help="a .onnxtxt, .onnxtext or .onnx file")
    fold.add_argument("-o", "--output", help="where to write the folded text (default: standard output)")
    fold.add_argument("--size-cap", type=int, help="bytes: the largest value to compute (default: fold-size-cap)")
    fold.set_defaults(func=_fold)


def _add_graph(sub: argparse._SubParsersAction[Any]) -> None:
    graph = sub.add_parser("graph", help="write the model's graph as one HTML page (inferred shapes, problems)")
    graph.add_argument("file", help="a .onnxtxt, .onnxtext or .onnx file")
    graph.add_argument("-o", "--output", help="the page to write (default: MODEL.graph.html in the current "
                       "folder; - for standard output)")  # fmt: skip
    graph.add_argument("--format", choices=["html", "json"], default="html",
                       help="json: the graph data the page draws (what the language server's graphlsp/graph "
                       "answers), to standard output unless -o")  # fmt: skip
    graph.set_defaults(func=_graph)


def _add_serve(sub: argparse._SubParsersAction[Any]) -> None:
    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="talk LSP over standard input/output (the default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP address instead")
    serve.add_argument("-v", "--verbose", action="store_true", help="log to standard error")
    serve.set_defaults(func=_serve)


def _add_convert(sub: argparse._SubParsersAction[Any]) -> None:
    convert = sub.add_parser("convert", help="convert between binary .onnx and ONNX text")
    convert.add_argument("input", help="a .onnx, .onnxtxt or .onnxtext file")
    convert.add_argument("output", help="a .onnx, .onnxtxt or .onnxtext file, or - for standard output")
    convert.set_defaults(func=_convert)


_COMMANDS = {"check": _add_check, "rules": _add_rules, "rule": _add_rule, "shapes": _add_shapes, "fold": _add_fold,
             "graph": _add_graph, "serve": _add_serve, "convert": _add_convert}  # fmt: skip


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; `only`: with that command's arguments alone (see `parse_args`)."""
    parser_class = _SlimParser if only is not None else _ArgumentParser
    parser = parser_class(
        prog="graphlsp", description="Language server and linter for ONNX models (binary .onnx and ONNX text)."
    )
    parser.add_argument("--version", action="version", version=f"graphlsp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=parser_class)
    for name, add in _COMMANDS.items():
        if only is None or name == only:
            add(sub)
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed command line. The usual command line (a command, then its arguments) is parsed by a parser of
    that command alone: argparse's parsers cost 1 ms each, and their first gettext lookups 10 ms more, a twentieth of
    a small model's check. Anything that parser refuses is parsed again by the whole parser, whose messages (usage
    listing every command) are the ones printed."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in _COMMANDS:
        with contextlib.suppress(_Refused):
            return build_parser(only=args[0]).parse_args(args)
    return build_parser().parse_args(args)


class _Refused(Exception):
    """A command line the one-command parser refuses: the whole parser says why."""


class _SlimParser(_ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Refused(message)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit code. Called with the process's own command line (argv None), a command other
    than `serve` ends the process at once when it is done: freeing a large model's objects one by one would add a
    third to the run (1.6 s of 5 on a 100k-node file), and the operating system takes the memory back anyway."""
    args = parse_args(argv)
    if argv is None and _one_file(args):
        # One model, then the process ends: the cyclic collector would only walk the model's millions of objects
        # once more after its analysis (a full collection: a sixth of the run on a 100k-node file) to free what
        # the exit frees anyway. Runs over many files keep it, so that each file's model is collected after it.
        import gc

        gc.disable()
    code = _run(args)
    if argv is None and args.command != "serve":
        import contextlib
        import os

        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BrokenPipeError, ValueError):
                stream.flush()
        os._exit(code)
    return code


def _one_file(args: argparse.Namespace) -> bool:
    """Does this command read one model and end? (`serve` does not end; `check` of a folder reads many.)"""
    if args.command in ("shapes", "fold", "convert", "graph"):
        return True
    if args.command != "check":
        return False
    if not args.paths:
        return args.stdin_filename is not None  # standard input, or the current folder
    return args.paths == ["-"] or (len(args.paths) == 1 and os.path.isfile(args.paths[0]))


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as e:  # a bug of ours: say so plainly, exit 2, no traceback unless asked for
        import os
        import traceback

        print(f"graphlsp: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        if os.environ.get("GRAPHLSP_DEBUG"):
            traceback.print_exc()
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
