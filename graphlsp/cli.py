"""The `graphlsp` command: check, rules, rule, shapes, cost, fold, graph, convert, diff, serve."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from graphlsp.infer.sizes import InputSizes
    from graphlsp.lint.config import Settings
    from graphlsp.lint.diagnostics import Diagnostic

EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def _sizes(args: argparse.Namespace) -> InputSizes:
    """`--dim NAME=SIZE` and `--input-shape NAME=AxBxC`; raises ValueError."""
    from graphlsp.infer.sizes import InputSizes, parse_dim, parse_input_shape

    return InputSizes(tuple(parse_dim(x) for x in args.dim or ()),
                      tuple(parse_input_shape(x) for x in args.input_shape or ()))  # fmt: skip


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
        settings = load_settings(args.config or ((args.stdin_filename or ".") if stdin else paths[0]),
                                 user=args.config is not None)  # `--config`: the user's own file
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
        given = _sizes(args)
        settings.sizes = settings.sizes.merged(given)
        if args.target:
            named = [t for x in args.target for t in x.split(",") if t.strip()]
            if not named:
                raise ConfigError("--target: no target given; name one (onnxruntime:cpu), or turn the kernel check "
                                  "off with --ignore GL7")  # fmt: skip
            settings.targets = validate_targets(named, "--target", key="")
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
        if not files and not missing:  # as ruff says it: a check of nothing is no pass
            print(f"graphlsp: warning: no model file found in {', '.join(paths)} (*.onnx, *.onnxtxt, *.onnxtext, "
                  "*.onnxop)", file=sys.stderr)  # fmt: skip
        tty = sys.stderr.isatty()
        results = check_files(files, settings, fix=fix, jobs=args.jobs, cache=not args.no_cache,
                              progress=tty and len(files) > 20, unsafe=args.unsafe_fixes)  # fmt: skip
    folders = not stdin and any(os.path.isdir(p) for p in paths)
    refused = _refused_sizes(results, given, settings, folders)
    for message in refused:  # sizes the models contradict: nothing is reported (nor fixed) at sizes they refuse
        print(f"graphlsp: error: {message}", file=sys.stderr)
    if refused:
        return EXIT_USAGE
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
        elif not files:
            pass  # nothing was checked: the error or warning above is the whole story
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


def _size_option(kind: str, name: str, given: InputSizes, source: str) -> str:
    """The option or setting that gave a size: `--dim batch=8`, or the config file's `dims` entry."""
    if kind == "dim":
        dims = given.dim_map()
        return f"--dim {name}={dims[name]}" if name in dims else f"{source}: dims: {name}"
    shapes = given.shape_map()
    if name in shapes:
        return f"--input-shape {name}={'x'.join(map(str, shapes[name]))}"
    return f"{source}: input-shapes: {name}"


def _given(kind: str, name: str, given: InputSizes) -> bool:
    """Was the size named on the command line (else it comes from the config file)?"""
    return name in (given.dim_map() if kind == "dim" else given.shape_map())


def _refused_sizes(results: list[Any], given: InputSizes, settings: Settings, folders: bool) -> list[str]:
    """Usage errors for the sizes the checked models contradict: a name is unknown when no model has it (a folder's
    models differ), a size that contradicts a model's input is an error on that model. A name from the config file
    that the files named on the command line lack is only a warning: the config is the project's, and pre-commit
    checks the few files a commit changes."""
    models = [r for r in results if not r.error and not r.path.lower().endswith(".onnxop")]
    refused: dict[str, list[str]] = {}  # one message, the models that refuse it (said once, as findings are)
    unknown: dict[tuple[str, str], str] = {}
    for k, r in enumerate(models):
        mine = {(p.kind, p.name): p.message for p in r.size_problems if p.unknown}
        unknown = mine if k == 0 else {key: m for key, m in unknown.items() if key in mine}
        for p in r.size_problems:
            if not p.unknown:
                refused.setdefault(f"{_size_option(p.kind, p.name, given, settings.source)}: {p.message}", []) \
                    .append(r.path)  # fmt: skip
    out = []
    for (kind, name), m in unknown.items():
        if folders or _given(kind, name, given):
            out.append(f"{_size_option(kind, name, given, settings.source)}: {m}")
        else:
            print(f"graphlsp: warning: {_size_option(kind, name, given, settings.source)}: {m}", file=sys.stderr)
    for message, paths in refused.items():
        if len(models) == 1:
            out.append(message)
        elif len(paths) == 1:
            out.append(f"{paths[0]}: {message}")
        else:
            shown = ", ".join(paths[:3]) + (", …" if len(paths) > 3 else "")
            out.append(f"{message} ({len(paths)} models: {shown})")
    return out


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
    """Write a fixed model atomically (files.write_file: a temporary file in the same folder, then renamed over
    it; an interrupted `--fix` leaves the old file or the new one, never half of one). The file keeps its
    permission bits. False (and the error said) when it cannot be written."""
    from graphlsp.files import write_file

    try:
        write_file(path, data, keep_mode=True, sync=True)
    except (OSError, ValueError) as e:
        print(f"graphlsp: error: {path}: cannot write the fixed model: {getattr(e, 'strerror', None) or e}",
              file=sys.stderr)  # fmt: skip
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
    from graphlsp.files import write_file

    try:
        write_file(output, data)  # a link planted at the output's name is replaced, never written through
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
        from graphlsp.lint.config import ConfigError, check_rules

        try:  # its message offers the nearest codes and names
            check_rules([wanted], "rule", prefixes=False)
        except ConfigError as e:
            print(f"graphlsp: error: {e}", file=sys.stderr)
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

    from graphlsp.source import TEXT_SUFFIXES, is_binary

    src, dst = args.input, args.output
    weights = getattr(args, "weights", None)
    textconv = getattr(args, "textconv", False)
    if textconv and dst != "-":
        print("graphlsp: error: --textconv writes to standard output: give no output file", file=sys.stderr)
        return EXIT_USAGE
    from_binary = is_binary(src)
    to_binary = dst != "-" and is_binary(dst)
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
        if weights == "external":
            return _convert_external(model, src, dst)
        try:
            if weights == "inline":
                text = print_model(model)
            elif textconv:  # stable: no temporary path of git's in it, a digest of every weight left out
                text = print_model(model, data="digest")
            else:
                text = print_model(model, data="summary", source=src)
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
        if textconv:  # a text model is its own text
            sys.stdout.write(source.text)
            return EXIT_CLEAN
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


def _convert_external(model: Any, src: str, dst: str) -> int:
    """`convert --weights external`: the text, and its large tensors in `OUT.data` beside it."""
    from graphlsp.syntax.printer import PrintError, print_with_external_data

    if dst == "-":
        print("graphlsp: error: --weights external writes a data file beside the text: name the text file",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    location = os.path.basename(dst) + ".data"
    try:
        text, data = print_with_external_data(model, location)
    except PrintError as e:
        print(f"graphlsp: error: {src}: {e}", file=sys.stderr)
        return EXIT_ERRORS
    data_path = os.path.join(os.path.dirname(dst), location)
    problem = _output_problem(data_path, src) or _write_output(data_path, data)
    problem = problem or _write_output(dst, text.encode("utf-8"))
    if problem is not None:
        print(f"graphlsp: error: {dst}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_CLEAN


def _diff(args: argparse.Namespace) -> int:
    """Two models compared (graphlsp/diff); with git's seven (or nine) arguments, a git diff driver."""
    import json

    from graphlsp.diff.load import LoadError
    from graphlsp.lint.config import ConfigError, load_settings, validate_targets

    paths = args.paths
    git = len(paths) in (7, 9)  # path old-file old-hex old-mode new-file new-hex new-mode [new-path rename-info]
    if git:
        old, new = paths[1], paths[4]
        names = (f"a/{paths[0]}", f"b/{paths[7] if len(paths) == 9 else paths[0]}")
    elif len(paths) == 2:
        old, new = paths
        names = (old, new)
    else:
        print(f"graphlsp: error: diff takes two models (OLD NEW) or git's seven arguments, not {len(paths)}",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    try:
        # git runs its driver at the top of the work tree: the file's own path finds the project's settings
        settings = load_settings(paths[0] if git else new if new != "/dev/null" else old)
        if args.target:
            settings.targets = validate_targets([t for x in args.target for t in x.split(",") if t], "--target")
    except ConfigError as e:
        print(f"graphlsp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    binary = None
    if git:  # git's temporary copies keep the file's name at their end; the path says what the file is
        binary = paths[0].lower().endswith(".onnx")
    try:
        from graphlsp.diff.compare import compare
        from graphlsp.diff.load import load

        sides = load(old, settings, names[0], binary), load(new, settings, names[1], binary)
        report = compare(*sides, settings)
    except LoadError as e:
        print(f"graphlsp: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "json":
        text = json.dumps(report.data, indent=1, ensure_ascii=False, default=str) + "\n"
    elif args.format == "html":
        from graphlsp.diff.page import diff_page

        text = diff_page(report, *sides)
    else:
        from graphlsp.diff.text import format_text

        text = format_text(report.data)
    out = args.output
    if out is None and args.format == "html":
        from pathlib import Path

        out = f"{Path(names[0]).stem}-{Path(names[1]).stem}.diff.html"
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        problem = _output_problem(out, old) or _write_output(out, text.encode("utf-8"))
        if problem is not None:
            print(f"graphlsp: error: {out}: {problem}", file=sys.stderr)
            return EXIT_USAGE
        print(f"wrote {out}", file=sys.stderr)
    if git:  # git stops at an external diff that exits non-zero
        return EXIT_CLEAN
    return EXIT_CLEAN if report.equal else EXIT_ERRORS


def _settings_and_sizes(args: argparse.Namespace) -> Any:
    """(settings, the sizes given on the command line, those merged with the config's), or the exit code once it
    has said why they cannot be read."""
    from graphlsp.lint.config import ConfigError, load_settings

    try:
        settings = load_settings(args.file)
        given = _sizes(args)
        return settings, given, settings.sizes.merged(given)
    except (ConfigError, ValueError) as e:
        print(f"graphlsp: error: {e}", file=sys.stderr)
        return EXIT_USAGE


def _binary_model(path: str) -> Any:
    """The binary model at `path`, or the exit code once it has said why it cannot be read."""
    from graphlsp.binary.read import read_model

    try:
        return read_model(path)[0]
    except OSError as e:
        print(f"graphlsp: error: {path}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as e:  # protobuf's DecodeError and friends
        print(f"graphlsp: error: {path}: cannot load binary ONNX model: {e}", file=sys.stderr)
        return EXIT_ERRORS


def _shapes(args: argparse.Namespace) -> int:
    import json

    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.infer.contracts import input_requirements
    from graphlsp.infer.report import value_shapes
    from graphlsp.infer.types import type_str
    from graphlsp.source import read_source

    read = _settings_and_sizes(args)  # the project's op libraries (their ops' shapes) and the sizes given
    if isinstance(read, int):
        return read
    settings, given, sizes = read
    from graphlsp.source import is_binary

    if is_binary(args.file):
        model = _binary_model(args.file)
        if isinstance(model, int):
            return model
        if _shapes_refused(model, sizes, given, settings):
            return EXIT_USAGE
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
        if _shapes_refused(a.model, sizes, given, settings):
            return EXIT_USAGE
        shapes = value_shapes(a.model, a.refiner, a.doc.lines.position)
        requirements = input_requirements(a.refiner)
        failed = any(p.code.startswith("GL1") for p in a.doc.problems)
    contracts = [{"input": r.input, "dim": r.dim, "symbol": r.symbol, "requires": r.requirement,
                  "node": r.node.name, "op": r.node.qualified_op,
                  "also": [{"node": n.name, "op": n.qualified_op} for n in r.also]} for r in requirements]  # fmt: skip
    if args.format == "json":
        print(json.dumps({"values": [v.to_json() for v in shapes], "contracts": contracts}, indent=2))
    else:
        width = max((len(v.name) for v in shapes), default=0)
        for v in shapes:
            where = f"{v.line}:{v.col}" if v.line is not None else (v.node or _unproduced(v.kind))
            if v.line is None and "/" in v.graph:  # a subgraph's value: its graph tells two Constant_0 apart
                where = f"{v.graph}/{where}"
            print(f"{where}\t{v.name.ljust(width)}  {type_str(v.type)}")
        if contracts:
            print("\nsizes the graph takes:")
        for c in contracts:
            nodes = [f"{n['op']} '{n['node']}'" if n["node"] else n["op"] for n in [c, *c["also"]]]  # type: ignore[misc]
            print(f"  {c['input']} dim {c['dim']} ({c['symbol']}): {c['requires']} ({', '.join(nodes)})")
    return EXIT_ERRORS if failed else EXIT_CLEAN


def _unproduced(kind: str) -> str:
    """What `shapes` calls a value no node produces: a graph input, or an initializer (a weight)."""
    return "initializer" if kind == "initializer" else "input"


def _shapes_refused(model: Any, sizes: InputSizes, given: InputSizes, settings: Settings) -> bool:
    """Say which given sizes the model contradicts (usage errors); True when there are any."""
    from graphlsp.infer.sizes import size_problems

    refused = False
    for p in size_problems(model, sizes):
        fatal = not p.unknown or _given(p.kind, p.name, given)  # a config's name another model of it may have
        refused |= fatal
        print(f"graphlsp: {'error' if fatal else 'warning'}: {_size_option(p.kind, p.name, given, settings.source)}: "
              f"{p.message}", file=sys.stderr)  # fmt: skip
    return refused
def _cost(args: argparse.Namespace) -> int:
    """FLOPs, bytes, parameters and peak memory as formulas in the input dims (graphlsp/cost)."""
    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.cost.model import model_cost
    from graphlsp.cost.report import format_csv, format_json, format_text
    from graphlsp.infer.refiner import bindings
    from graphlsp.source import is_binary, read_source

    read = _settings_and_sizes(args)  # the project's op libraries (their ops' shapes) and the sizes given
    if isinstance(read, int):
        return read
    settings, given, sizes = read
    if is_binary(args.file):
        model = _binary_model(args.file)
        if isinstance(model, int):
            return model
        refiner = ModelAnalysis(model, []).refiner  # unbound: the formulas; the sizes are evaluated into them
    else:
        try:
            source = read_source(args.file)
        except OSError as e:
            print(f"graphlsp: error: {args.file}: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        a = Analysis(source.text)
        model, refiner = a.model, a.refiner
    env, shapes = bindings(model, sizes)
    if _shapes_refused(model, sizes, given, settings):  # the same checks as `shapes` and `check`
        return EXIT_USAGE
    cost = model_cost(model, refiner)
    bound = None
    if sizes:  # the numbers from an analysis at those sizes: exact where a dim has no name the formulas could bind
        if is_binary(args.file):
            model_b = _binary_model(args.file)
            if isinstance(model_b, int):
                return model_b
            bound = model_cost(model_b, ModelAnalysis(model_b, [], sizes=sizes).refiner)
        else:
            a_b = Analysis(source.text, sizes=sizes)
            bound = model_cost(a_b.model, a_b.refiner)
    if args.format == "json":
        sys.stdout.write(format_json(cost, args.by, env, args.depth, bound))
    elif args.format == "csv":
        sys.stdout.write(format_csv(cost, args.by, env, args.depth, bound))
    else:
        sys.stdout.write(format_text(cost, args.by, env, args.file, args.depth, bound))
    return EXIT_CLEAN


def _fold(args: argparse.Namespace) -> int:

    from graphlsp.lint.config import ConfigError, load_settings
    from graphlsp.lint.fold import fold_text
    from graphlsp.source import is_binary, read_source
    from graphlsp.syntax.document import SyntaxDocument

    binary_in = is_binary(args.file)
    if args.output not in (None, "-") and is_binary(args.output) != binary_in:
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
        from graphlsp.lint.diagnostics import collect
        from graphlsp.lint.output import format_text  # (with urllib: only to report)

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
    problem = _output_problem(out, args.file) or _write_output(out, text.encode("utf-8"))
    if problem is not None:
        print(f"graphlsp: error: {out}: {problem}", file=sys.stderr)
        return EXIT_USAGE
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
        serve(address, source_diagnostics=args.source_diagnostics)
    except OSError as e:  # the address is taken, or the host is not one of this machine's
        print(f"graphlsp: error: --tcp {args.tcp}: cannot listen there: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_CLEAN


_FLAGS = {"--fix": "fix", "--diff": "diff", "--unsafe-fixes": "unsafe_fixes", "--strict": "strict",
          "--show-hints": "show_hints", "--no-cache": "no_cache", "--no-color": "no_color", "-q": "quiet",
          "--quiet": "quiet"}  # fmt: skip
_FORMATS = ("text", "concise", "json", "sarif", "github")
_CHECK_DEFAULTS: dict[str, Any] = {
    "paths": [], "stdin_filename": None, "format": "text", "fix": False, "diff": False, "unsafe_fixes": False,
    "strict": False, "show_hints": False, "select": None, "ignore": None, "target": None, "config": None,
    "no_cache": False, "no_color": False, "jobs": 0, "quiet": False, "dim": None, "input_shape": None,
}  # fmt: skip


def _plain_check(args: list[str]) -> Any:
    """`check` with paths, flags and `--format`, parsed as argparse parses it (tests/test_cli_arguments.py holds
    the two to the same answers), without argparse: importing it (with gettext and locale) and building the
    parser are 4 ms of a check's start. None for any other command line, which argparse parses (and explains)."""
    if not args or args[0] != "check":
        return None
    out = dict(_CHECK_DEFAULTS, paths=[], command="check", func=_check)
    paths: list[str] = []
    ended = False  # the paths are one run of arguments (argparse refuses `a --quiet b`)
    i = 1
    while i < len(args):
        arg = args[i]
        if arg in _FLAGS:
            out[_FLAGS[arg]] = True
            ended = ended or bool(paths)
        elif arg == "--format" and i + 1 < len(args) and args[i + 1] in _FORMATS:
            out["format"] = args[i + 1]
            ended = ended or bool(paths)
            i += 1
        elif arg.startswith("-") or ended:  # another option, `-` (standard input), `--`: argparse's
            return None
        else:
            paths.append(arg)
        i += 1
    out["paths"] = paths
    return SimpleNamespace(**out)


_FUNCS: dict[str, Any] = {"check": _check, "rules": _rules, "rule": _rule, "shapes": _shapes, "fold": _fold,
                          "graph": _graph, "serve": _serve, "convert": _convert, "cost": _cost,
                          "diff": _diff}  # fmt: skip


_COST_CHOICES = {"--by": ("scope", "op", "node"), "--format": ("text", "json", "csv")}


def _plain_cost(args: list[str]) -> Any:
    """`cost FILE` with --by, --format, --dim and --input-shape, parsed as argparse parses it, without argparse (its
    import is a tenth of `cost` on a small model); None for anything else, which argparse parses and explains."""
    if not args or args[0] != "cost":
        return None
    out: dict[str, Any] = {"command": "cost", "func": _cost, "by": "scope", "format": "text", "depth": 2,
                           "dim": None, "input_shape": None}  # fmt: skip
    files: list[str] = []
    i = 1
    while i < len(args):
        arg = args[i]
        value = args[i + 1] if i + 1 < len(args) else None
        if arg in _COST_CHOICES and value in _COST_CHOICES[arg]:
            out[arg[2:]] = value
        elif arg in ("--dim", "--input-shape") and value is not None and not value.startswith("-"):
            key = arg[2:].replace("-", "_")
            out[key] = [*(out[key] or []), value]
        elif arg.startswith("-") or files:
            return None
        else:
            files.append(arg)
            i += 1
            continue
        i += 2
    if len(files) != 1:
        return None
    out["file"] = files[0]
    return SimpleNamespace(**out)


def _plain_fold(args: list[str]) -> Any:
    """`fold FILE`, `fold FILE -o OUT` (or --output, before or after FILE), parsed as argparse parses it, without
    argparse (4 ms of a fold's start); None for anything else, which argparse parses and explains."""
    if not args or args[0] != "fold":
        return None
    out: dict[str, Any] = {"command": "fold", "func": _fold, "output": None, "size_cap": None}
    files: list[str] = []
    i = 1
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "--output") and out["output"] is None and i + 1 < len(args) and not args[i + 1].startswith(
                "-"):  # fmt: skip
            out["output"] = args[i + 1]
            i += 2
            continue
        if arg.startswith("-") or files:
            return None
        files.append(arg)
        i += 1
    if len(files) != 1:
        return None
    out["file"] = files[0]
    return SimpleNamespace(**out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed command line: the usual `check`, `cost` and `fold` command lines here, anything else by argparse
    (`graphlsp.cli_parser`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    fast = _plain_check(args) or _plain_cost(args) or _plain_fold(args)
    if fast is not None:
        return fast  # type: ignore[no-any-return]
    from graphlsp.cli_parser import parse

    return parse(args, _FUNCS)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit code. Called with the process's own command line (argv None), a command other
    than `serve` ends the process at once when it is done: freeing a large model's objects one by one would add a
    third to the run (1.6 s of 5 on a 100k-node file), and the operating system takes the memory back anyway."""
    args = parse_args(argv)
    if argv is None:
        # numpy's OpenBLAS starts a thread per core when it is imported (CPU time a loaded machine feels: a tenth of
        # a second on 2 cores), for products graphlsp's runner never makes (its values are small: fold-size-cap);
        # one thread, unless the user chose. Only the process's own command line: a caller's environment is theirs.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if argv is None and _one_file(args):
        # One model, then the process ends: the cyclic collector would only walk the model's millions of objects
        # once more after its analysis (a full collection: a sixth of the run on a 100k-node file) to free what
        # the exit frees anyway. Runs over many files keep it, so that each file's model is collected after it.
        import gc

        gc.disable()
    code = _run(args)
    if argv is None and args.command != "serve":
        import contextlib

        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BrokenPipeError, ValueError):
                stream.flush()
        os._exit(code)
    return code


def _one_file(args: argparse.Namespace) -> bool:
    """Does this command read one model and end? (`serve` does not end; `check` of a folder reads many.)"""
    if args.command in ("shapes", "fold", "convert", "graph", "cost", "diff"):
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


def drop_working_directory() -> None:
    """`python -m graphlsp` put the working directory first on sys.path: taken off again, so that a repository
    being checked that ships `lark.py` or `onnxruntime/` never has it imported (modules are imported lazily, long
    after this). `python -P -m graphlsp` (docs/security.md) keeps it off from the start, graphlsp's own modules
    included."""
    if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]


if __name__ == "__main__":
    drop_working_directory()
    sys.exit(main())
