"""Write graphlsp/ops/index.py: which family module registers each op's shape functions, read from the registry
with every family loaded. Run after adding a shape function: `python tools/ops_index.py`."""

from __future__ import annotations

import pprint
from pathlib import Path

from graphlsp.ops.registry import family_index

INDEX = Path(__file__).resolve().parents[1] / "graphlsp" / "ops" / "index.py"
HEAD = "FAMILY_OF: dict[tuple[str, str], str] = "


def main() -> None:
    text = INDEX.read_text()
    before = text[: text.index(HEAD)]
    body = pprint.pformat(family_index(), width=120, compact=True, sort_dicts=True)
    INDEX.write_text(f"{before}{HEAD}{body}  # fmt: skip\n")


if __name__ == "__main__":
    main()
