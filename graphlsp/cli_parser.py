"""The command line's argparse parsers (`graphlsp.cli` parses the usual `check` command line without them: argparse,
gettext and locale, and building the parser, are 4 ms of a check's start)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from graphlsp import __version__

EXIT_USAGE = 2  # graphlsp.cli's, which imports this module (never the other way: no import circle)
Command = Callable[[argparse.Namespace], int]


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


def _size_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dim", action="append", metavar="NAME=SIZE",
                        help="check at this size of an input dim (a dim_param such as batch=8); repeatable")
    parser.add_argument("--input-shape", action="append", metavar="INPUT=D1xD2x...",
                        help="check with this shape of a graph input (images=1x3x640x640); repeatable")


def _at_least(low: int, note: str = "") -> Callable[[str], int]:
    """argparse's type for a whole number, `low` or more (`note`: what `low` means)."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: must be {low}{note} or more")
        return value

    return whole


_count = _at_least(0, " (one per core)")  # -j
_depth = _at_least(1)  # --depth


def _add_check(sub: argparse._SubParsersAction[Any], func: Command) -> None:
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
    check.set_defaults(func=func)


def _add_rules(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    rules = sub.add_parser("rules", help="list every rule")
    rules.set_defaults(func=func)


def _add_rule(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    rule = sub.add_parser("rule", help="explain one rule: what it checks, why, an example and the fix")
    rule.add_argument("code", help="a code (GL301) or a name (broadcast-incompatible)")
    rule.set_defaults(func=func)


def _add_shapes(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    shapes = sub.add_parser("shapes", help="print every value's inferred element type and shape")
    shapes.add_argument("file", help="a .onnxtxt, .onnxtext or .onnx file")
    shapes.add_argument("--format", choices=["text", "json"], default="text")
    _size_options(shapes)
    shapes.set_defaults(func=func)


def _add_cost(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    cost = sub.add_parser("cost", help="FLOPs, MACs, bytes, parameters and peak memory as formulas in the input "
                          "dims (numbers at the sizes given with --dim / --input-shape)")  # fmt: skip
    cost.add_argument("file", help="a .onnxtxt, .onnxtext or .onnx file")
    cost.add_argument("--by", choices=["scope", "op", "node"], default="scope",
                      help="rows by name scope (the exporter's module path), op type or node (default: scope)")
    cost.add_argument("--depth", type=_depth, default=2, help="with --by scope: how many levels of the name "
                      "scope make a row (default: 2, /model/layers.3)")  # fmt: skip
    cost.add_argument("--format", choices=["text", "json", "csv"], default="text")
    _size_options(cost)
    cost.set_defaults(func=func)


def _add_fold(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    fold = sub.add_parser("fold", help="fold constant subgraphs into Constants (the rest of the text is kept)")
    fold.add_argument("file", help="a .onnxtxt, .onnxtext or .onnx file")
    fold.add_argument("-o", "--output", help="where to write the folded text (default: standard output)")
    fold.add_argument("--size-cap", type=int, help="bytes: the largest value to compute (default: fold-size-cap)")
    fold.set_defaults(func=func)


def _add_graph(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    graph = sub.add_parser("graph", help="write the model's graph as one HTML page (inferred shapes, problems)")
    graph.add_argument("file", help="a .onnxtxt, .onnxtext or .onnx file")
    graph.add_argument("-o", "--output", help="the page to write (default: MODEL.graph.html in the current "
                       "folder; - for standard output)")  # fmt: skip
    graph.add_argument("--format", choices=["html", "json"], default="html",
                       help="json: the graph data the page draws (what the language server's graphlsp/graph "
                       "answers), to standard output unless -o")  # fmt: skip
    graph.set_defaults(func=func)


def _add_serve(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="talk LSP over standard input/output (the default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP address instead")
    serve.add_argument("-v", "--verbose", action="store_true", help="log to standard error")
    serve.add_argument("--source-diagnostics", action="store_true",
                       help="also publish a binary model's findings on the Python lines that made their "
                       "nodes")  # fmt: skip
    serve.set_defaults(func=func)


def _add_convert(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    convert = sub.add_parser("convert", help="convert between binary .onnx and ONNX text")
    convert.add_argument("input", help="a .onnx, .onnxtxt or .onnxtext file")
    convert.add_argument("output", nargs="?", default="-",
                         help="a .onnx, .onnxtxt or .onnxtext file, or - for standard output (the default)")
    convert.add_argument("--weights", choices=["elide", "inline", "external"], default=None,
                         help="binary to text: tensors over 16 values written without their data, a comment saying "
                         "where they are (elide, the default), every element (inline: the text parses back to the "
                         "same model), or into a data file beside the output that the text refers to (external)")
    convert.add_argument("--textconv", action="store_true",
                         help="the text git's textconv shows: weights elided, each with a digest of its data, "
                         "to standard output (see docs/diff.md)")
    convert.set_defaults(func=func)


def _add_diff(sub: argparse._SubParsersAction[Any], func: Command) -> None:
    diff = sub.add_parser("diff", help="what changed between two models (exit 0: equal, 1: different, 2: error)",
                          description="Compare two models (binary or text): header, nodes (matched by name, then "
                          "by structure), inferred types, initializers, findings, input size requirements and "
                          "kernel coverage. With git's seven arguments (GIT_EXTERNAL_DIFF, or diff.<driver>.command)"
                          " it is a git diff driver.")  # fmt: skip
    diff.add_argument("paths", nargs="+", metavar="OLD NEW", help="the two models (or git's seven arguments)")
    diff.add_argument("--format", choices=["text", "json", "html"], default="text")
    diff.add_argument("-o", "--output", help="where to write (default: standard output; html: OLD-NEW.diff.html)")
    diff.add_argument("--target", action="append", metavar="RUNTIME[@RELEASE]:PROVIDER",
                      help="the runtimes whose kernel coverage is compared (default: the config's targets)")
    diff.set_defaults(func=func)


_COMMANDS = {"check": _add_check, "rules": _add_rules, "rule": _add_rule, "shapes": _add_shapes, "fold": _add_fold,
             "graph": _add_graph, "serve": _add_serve, "convert": _add_convert, "cost": _add_cost,
             "diff": _add_diff}  # fmt: skip


def build_parser(funcs: dict[str, Command], only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; `only`: with that command's arguments alone (see `parse_args`)."""
    parser_class = _SlimParser if only is not None else _ArgumentParser
    parser = parser_class(
        prog="graphlsp", description="Language server and linter for ONNX models (binary .onnx and ONNX text)."
    )
    parser.add_argument("--version", action="version", version=f"graphlsp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=parser_class)
    for name, add in _COMMANDS.items():
        if only is None or name == only:
            add(sub, funcs[name])
    return parser


class _Refused(Exception):
    """A command line the one-command parser refuses: the whole parser says why."""


class _SlimParser(_ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Refused(message)




def _nearest_option(message: str, command: argparse.ArgumentParser) -> str:
    """` (did you mean --format?)` for an unrecognized option close to one of the command's."""
    import difflib

    head = "unrecognized arguments: "
    if not message.startswith(head):
        return ""
    options = [o for a in command._actions for o in a.option_strings if o.startswith("--")]
    for word in message[len(head) :].split():
        close = difflib.get_close_matches(word.partition("=")[0], options, n=1, cutoff=0.6) if word[:2] == "--" else []
        if close:
            return f" (did you mean {close[0]}?)"
    return ""


def parse(args: list[str], funcs: dict[str, Command]) -> argparse.Namespace:
    """The parsed command line. A command line (a command, then its arguments) is parsed by a parser of that
    command alone: argparse's parsers cost 1 ms each, and their first gettext lookups 10 ms more. What that parser
    refuses is said with that command's usage; any other command line is the whole parser's."""
    if args and args[0] in _COMMANDS:
        parser = build_parser(funcs, only=args[0])
        try:
            return parser.parse_args(args)
        except _Refused as e:  # `check --formt json`: the command's usage, not the list of every command
            command = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[args[0]]
            command.print_usage(sys.stderr)
            print(f"graphlsp: error: {e}{_nearest_option(str(e), command)}", file=sys.stderr)
            raise SystemExit(EXIT_USAGE) from None
    return build_parser(funcs).parse_args(args)
