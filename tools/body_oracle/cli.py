"""The command line of tools/body_shapes.py: one line per model (body values judged, E/P/U/W, the runs), the
WRONG values, a total; exit 1 if any value is WRONG."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .bodies import load_model
from .claims import PEERS, peer_helper
from .engines import short
from .judge import CLASSES, Result
from .oracle import evaluate, node_test_cases


def print_result(r: Result, show: int, show_open: int = 0) -> None:
    if r.error:
        print(f"{r.model:<40} {r.bodies:>3} {r.body_nodes:>5} {'-':>6}  {r.error[:150]}", flush=True)
        return
    c = r.counts
    print(f"{r.model:<40} {r.bodies:>3} {r.body_nodes:>5} {r.values:>6}  {c['E']:>5} {c['P']:>5} {c['U']:>5} "
          f"{c['W']:>5}  {r.time:6.1f}s", flush=True)  # fmt: skip
    runs = "; ".join((", ".join(f"{k}={v}" for k, v in x["env"].items()) or "static") + f" ({x['try']})"
                     for x in r.runs)  # fmt: skip
    print(f"    runs: {runs}" + ("" if len(r.runs) >= 2 or r.runs[0]["try"] == "test inputs" else "  [ONE run only]"))
    notes = []
    if r.one_run and len(r.runs) > 1:
        notes.append(f"{r.one_run} values ran in one run only")
    if r.varying:
        notes.append(f"{r.varying} values change shape between iterations")
    if r.inconsistent:
        notes.append(f"inconsistent symbols: {', '.join(r.inconsistent[:4])}")
    if notes:
        print("    " + "; ".join(notes))
    notes = [f"{peer}: E/P/U/W {'/'.join(str(c[k]) for k in CLASSES)}" for peer, c in r.peer_counts.items()]
    notes += [f"{peer} failed: {e[:100]}" for peer, e in r.peer_errors.items()]
    if r.peer_counts or r.peer_errors:
        print("    peers: " + "; ".join(notes))
    if r.behind:
        print(f"    {len(r.behind)} values a peer resolves further: " + ", ".join(r.behind[:4]))
    for w in r.wrong[:show]:
        rt = " / ".join(w["runtime"])
        print(f"    WRONG ({w['why']}) {w['body']}: {w['name']}: graphlsp {w['graphlsp']}  runtime {rt}")
    if len(r.wrong) > show:
        print(f"    ... {len(r.wrong) - show} more WRONG")
    for o in r.open[:show_open]:
        rt = " / ".join(o["runtime"])
        print(f"    {o['cls']} {o['body']}: {o['name']}: graphlsp {o['graphlsp']}  runtime {rt}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_peer"]:
        peer_helper(argv[1], argv[2], argv[3])
        return 0
    ap = argparse.ArgumentParser(description="Judge graphlsp's shapes inside If/Loop/Scan bodies against execution.")
    ap.add_argument("models", nargs="*", help=".onnx or .onnxtxt files (with --node-tests: name filters)")
    ap.add_argument("--node-tests", action="store_true", help="onnx's node test cases that have subgraphs")
    ap.add_argument("--peers", action="store_true",
                    help="also judge onnx, onnx-shape-inference and onnxruntime's symbolic inference (oracle venv)")
    ap.add_argument("--json", metavar="OUT", help="write all results as JSON")
    ap.add_argument("--show", type=int, default=5, help="WRONG values to print per model (5)")
    ap.add_argument("--show-open", type=int, default=0, metavar="N",
                    help="PARTIAL and UNKNOWN values to print per model (0)")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=300, help="seconds per model (300)")
    args = ap.parse_args(argv)
    print(f"{'model':<40} {'bod':>3} {'nodes':>5} {'values':>6}  {'E':>5} {'P':>5} {'U':>5} {'W':>5}", flush=True)
    results = []
    peers = PEERS if args.peers else []
    if args.node_tests:
        for name, model, feeds, expected in node_test_cases(args.models):
            r = evaluate(model, name, None, args.timeout, feeds, expected, peers)
            results.append(r)
            print_result(r, args.show, args.show_open)
    else:
        for path in args.models:
            name = os.path.basename(path).rsplit(".", 1)[0]
            try:
                r = evaluate(load_model(path), name, path, args.timeout, peers=peers)
            except Exception as e:  # noqa: BLE001
                r = Result(name, error=f"failed: {short(e)}")
            results.append(r)
            print_result(r, args.show, args.show_open)
    tot = dict.fromkeys(CLASSES, 0)
    for r in results:
        for k in CLASSES:
            tot[k] += r.counts[k]
    judged = sum(tot.values())
    print(f"{'TOTAL':<40} {'':>3} {'':>5} {judged:>6}  {tot['E']:>5} {tot['P']:>5} {tot['U']:>5} {tot['W']:>5}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.__dict__ for r in results], f, indent=1, default=str)
    return 1 if tot["W"] else 0
