"""A diff report as text for a terminal (or git's external diff): a line per change, long lists shortened."""

from __future__ import annotations

from typing import Any

SHOWN = 40  # entries of one list in text; `--format json` has them all


def _ref(r: dict[str, Any]) -> str:
    where = f"{r['graph']}/" if "/" in r.get("graph", "") else ""
    return f"{where}{r['name'] or r['op'] + '_' + str(r['index'])} ({r['op']})"


def _cut(lines: list[str], indent: str = "  ") -> list[str]:
    if len(lines) <= SHOWN:
        return [indent + x for x in lines]
    more = f"{indent}... and {len(lines) - SHOWN} more (--format json lists all)"
    return [indent + x for x in lines[:SHOWN]] + [more]


def format_text(data: dict[str, Any]) -> str:
    out = [f"--- {data['old']}", f"+++ {data['new']}"]
    if data["equal"]:
        out.append("no differences")
        unread = data["initializers"]["unread"]
        if unread:
            out.append(f"({len(unread)} initializers not compared: their data cannot be read)")
        return "\n".join(out) + "\n"
    if data["header"]:
        out.append("header:")
        out += [f"  ~ {h['what']}: {h['old']} -> {h['new']}" for h in data["header"]]
    for what in ("inputs", "outputs"):
        rows = data[what]
        if not rows:
            continue
        out.append(f"{what}:")
        for r in rows:
            if r["change"] == "added":
                out.append(f"  + {r['name']}: {r['new']}")
            elif r["change"] == "removed":
                out.append(f"  - {r['name']}: {r['old']}")
            else:
                name = r["name"] if r["old_name"] == r["name"] else f"{r['old_name']} -> {r['name']}"
                line = f"  ~ {name}: {r['old']} -> {r['new']}" if r["old"] != r["new"] else f"  ~ {name}: {r['new']}"
                if r.get("old_inferred") != r.get("new_inferred"):
                    line += f" (inferred {r['old_inferred']} -> {r['new_inferred']})"
                out.append(line)
    n = data["nodes"]
    counts = [f"{n['matched']} matched ({n['matched_by_structure']} by structure)", f"{len(n['added'])} added",
              f"{len(n['removed'])} removed", f"{len(n['changed'])} changed", f"{len(n['moved'])} moved",
              f"{len(n['renamed'])} renamed"]  # fmt: skip
    out.append("nodes: " + ", ".join(counts))
    out += _cut([f"- {_ref(r)}" for r in n["removed"]])
    out += _cut([f"+ {_ref(r)}" for r in n["added"]])
    out += _cut([f"~ {_ref(c['new'])}: " + "; ".join(c["changes"]) for c in n["changed"]])
    out += _cut([f"> {_ref(c['new'])}: moved from #{c['old']['index']} to #{c['new']['index']}" for c in n["moved"]])
    out += _cut([f"= {_ref(c['old'])} renamed {c['new']['name']}" for c in n["renamed"]])
    if data["values"]:
        out.append(f"values whose inferred type changed: {len(data['values'])}")
        out += _cut([f"~ {v['name']}: {v['old']} -> {v['new']}" for v in data["values"]])
    i = data["initializers"]
    kinds = {k: [c for c in i["changed"] if c["change"] == k] for k in ("shape", "type", "data", "renamed")}
    out.append(f"initializers: {len(i['added'])} added, {len(i['removed'])} removed, {len(kinds['shape'])} changed "
               f"shape, {len(kinds['type'])} changed type, {len(kinds['data'])} other data, {len(kinds['renamed'])} "
               f"renamed, {i['unchanged']} unchanged")  # fmt: skip
    out += _cut([f"- {r['name']}: {r['type']}" for r in i["removed"]])
    out += _cut([f"+ {r['name']}: {r['type']}" for r in i["added"]])

    def init_line(c: dict[str, Any]) -> str:
        name = c["name"] if c["old_name"] == c["name"] else f"{c['old_name']} -> {c['name']}"
        if c["change"] == "renamed":
            return f"= {name}: {c['new']}, same data"
        diff = f", max abs diff {c['max_abs_diff']:.6g}" if c.get("max_abs_diff") is not None else ""
        if c["change"] == "data":
            return f"~ {name}: {c['new']}, other data{diff}"
        return f"~ {name}: {c['old']} -> {c['new']}{diff}"

    out += _cut([init_line(c) for c in i["changed"]])
    out += _cut([f"? {c['name']}: {c['new']}, data not compared (it cannot be read)" for c in i["unread"]])
    fn = data["functions"]
    if fn["added"] or fn["removed"]:
        out.append("functions:")
        out += _cut([f"- {x}" for x in fn["removed"]] + [f"+ {x}" for x in fn["added"]])
    f = data["findings"]
    if f["appeared"] or f["gone"] or f["changed"]:
        out.append(f"findings: {len(f['appeared'])} appeared, {len(f['gone'])} went away, {len(f['changed'])} say "
                   f"something else ({f['old']} -> {f['new']})")  # fmt: skip
        out += _cut([f"+ {d['severity']}: {d['code']} {_where(d)}{d['message']}" for d in f["appeared"]])
        out += _cut([f"- {d['severity']}: {d['code']} {_where(d)}{d['message']}" for d in f["gone"]])
        out += _cut([f"~ {c['new']['severity']}: {c['new']['code']} {_where(c['new'])}{c['new']['message']} (was: "
                     f"{c['old']['message']})" for c in f["changed"]])  # fmt: skip
    c = data["contracts"]
    if c["appeared"] or c["gone"]:
        out.append("input size requirements:")
        out += _cut([f"+ {x}" for x in c["appeared"]] + [f"- {x}" for x in c["gone"]])
    cost = data.get("cost") or {}
    if cost:
        out.append("cost (formulas in the input dims):")
        names = {"flops": "FLOPs", "macs": "MACs", "read": "bytes read", "written": "bytes written"}
        for key, label in names.items():
            row = cost.get(key)
            if row:
                lower = " (a lower bound: some nodes' cost is unknown)" if row["new_unknown"] else ""
                out.append(f"  ~ {label}: {row['old']} -> {row['new']} (change: {row['delta']}){lower}")
        if "parameters" in cost:
            (n0, b0), (n1, b1) = cost["parameters"]["old"], cost["parameters"]["new"]
            out.append(f"  ~ parameters: {n0:,} -> {n1:,} elements, {b0:,} -> {b1:,} bytes")
        if "peak" in cost:
            line = f"  ~ peak activations: {cost['peak']['old']} -> {cost['peak']['new']} bytes"
            out.append(line if len(line) <= 400 else "  ~ peak activations: another formula (--format json has both)")
    words = {"no_kernel": "nodes without a kernel", "cpu_fallback": "nodes on CPU instead", "float32_casts":
             "nodes run in float32 through Casts", "too_old": "the runtime too old"}  # fmt: skip
    for target, row in data["coverage"].items():
        moved = [f"{words[k]} {row['old'][k]} -> {row['new'][k]}" for k in words if row["old"][k] != row["new"][k]]
        if moved:
            out.append(f"kernel coverage on {target}: " + ", ".join(moved))
    return "\n".join(out) + "\n"


def _where(d: dict[str, Any]) -> str:
    if d.get("node"):
        return f"[{d['node']}] "
    if d.get("line") is not None:
        return f"[line {d['line']}] "
    return ""
