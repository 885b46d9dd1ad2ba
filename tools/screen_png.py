"""A terminal capture with colours (`tmux capture-pane -e`, as `CAPTURE_ANSI=FILE editors/nvim/capture.sh` writes
it) as a PNG: the escape sequences become HTML, and headless Chromium takes the picture.

    python tools/screen_png.py screen.ansi docs/images/editor.png [--chromium PATH]
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# xterm's 16 colours, as a dark theme shows them
PALETTE = ["#1d1f21", "#cc6666", "#b5bd68", "#f0c674", "#81a2be", "#b294bb", "#8abeb7", "#c5c8c6",
           "#666666", "#ff6b6b", "#b9ca4a", "#ffd75f", "#7aa6da", "#c397d8", "#70c0b1", "#eaeaea"]  # fmt: skip
FG, BG = "#d7d7d7", "#1c1c1c"
SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def _xterm256(n: int) -> str:
    if n < 16:
        return PALETTE[n]
    if n < 232:
        n -= 16
        r, g, b = (n // 36, n // 6 % 6, n % 6)
        return "#" + "".join(f"{(0 if c == 0 else 55 + 40 * c):02x}" for c in (r, g, b))
    level = 8 + 10 * (n - 232)
    return f"#{level:02x}{level:02x}{level:02x}"


def _colour(params: list[int], i: int) -> tuple[str | None, int]:
    """The colour of `38;5;n` or `38;2;r;g;b` starting at params[i] (the 5 or 2); the index after it."""
    if i < len(params) and params[i] == 5 and i + 1 < len(params):
        return _xterm256(params[i + 1]), i + 2
    if i < len(params) and params[i] == 2 and i + 3 < len(params):
        return "#" + "".join(f"{min(255, c):02x}" for c in params[i + 1 : i + 4]), i + 4
    return None, len(params)


def to_html(ansi: str) -> str:
    state: dict[str, object] = {"fg": None, "bg": None, "bold": False, "underline": False}
    out: list[str] = []
    pos = 0

    def text(s: str) -> None:
        if not s:
            return
        style = []
        if state["fg"]:
            style.append(f"color:{state['fg']}")
        if state["bg"]:
            style.append(f"background:{state['bg']}")
        if state["bold"]:
            style.append("font-weight:bold")
        if state["underline"]:
            style.append("text-decoration:underline")
        body = html.escape(s)
        out.append(f'<span style="{";".join(style)}">{body}</span>' if style else body)

    for m in SGR.finditer(ansi):
        text(ansi[pos : m.start()])
        pos = m.end()
        params = [int(p) if p.isdigit() else 0 for p in re.split(r"[;:]", m[1] or "0")]
        i = 0
        while i < len(params):
            p = params[i]
            i += 1
            if p == 0:
                state.update(fg=None, bg=None, bold=False, underline=False)
            elif p == 1:
                state["bold"] = True
            elif p == 4:
                state["underline"] = True
            elif p == 22:
                state["bold"] = False
            elif p == 24:
                state["underline"] = False
            elif 30 <= p <= 37:
                state["fg"] = PALETTE[p - 30]
            elif 90 <= p <= 97:
                state["fg"] = PALETTE[p - 90 + 8]
            elif 40 <= p <= 47:
                state["bg"] = PALETTE[p - 40]
            elif 100 <= p <= 107:
                state["bg"] = PALETTE[p - 100 + 8]
            elif p == 39:
                state["fg"] = None
            elif p == 49:
                state["bg"] = None
            elif p in (38, 48, 58):
                colour, i = _colour(params, i)
                if p == 38:
                    state["fg"] = colour
                elif p == 48:
                    state["bg"] = colour
    text(ansi[pos:])
    return "".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ansi", type=Path)
    ap.add_argument("png", type=Path)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = ap.parse_args()
    lines = args.ansi.read_text(encoding="utf-8").rstrip("\n").split("\n")
    columns = max(len(SGR.sub("", line)) for line in lines)
    page = (f"<!doctype html><meta charset=utf-8><style>body{{margin:0;background:{BG}}}pre{{margin:0;padding:12px;"
            f"color:{FG};background:{BG};font:15px/1.165 'DejaVu Sans Mono',monospace}}</style>"
            f"<pre>{to_html(chr(10).join(lines))}</pre>")  # fmt: skip
    width, height = int(columns * 9.05) + 24, int(len(lines) * 17.5) + 24
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "screen.html"
        index.write_text(page, encoding="utf-8")
        args.png.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={tmp}/profile", f"--window-size={width},{height}",
                        f"--screenshot={args.png.resolve()}", index.as_uri()], check=True, capture_output=True,
                       timeout=120)  # fmt: skip
    print(f"wrote {args.png} ({width}x{height})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
