"""The registry imports only the family module an op needs: its index must name, for every op with a Python
shape function, the module that registers it, and a lookup through the index must find what a lookup with every
family loaded finds."""

from __future__ import annotations

import json
import subprocess
import sys

from graphlsp.ops import registry
from graphlsp.ops.index import FAMILY_OF

_LOOKUPS = """
import json, random, sys
from graphlsp.ops import registry
from graphlsp.ops.index import FAMILY_OF
keys = sorted(FAMILY_OF) + [("", "NoSuchOp"), ("com.example", "Thing")]
random.Random(int(sys.argv[1])).shuffle(keys)
def seen():
    out = {}
    for domain, op in keys:
        for version in (None, 1, 6, 11, 13, 18, 21, 26):
            fn = registry.lookup(domain, op, version)
            out[f"{domain}/{op}/{version}"] = None if fn is None else f"{fn.__module__}.{fn.__qualname__}"
    return out
lazy = seen()
families = sorted(m for m in sys.modules if m.startswith("graphlsp.ops.") and m.removeprefix("graphlsp.ops.") in registry.FAMILIES)
registry.load_all()
print(json.dumps({"lazy": lazy, "full": seen(), "families": families}))
"""


def test_index_names_the_family_registering_each_op() -> None:
    assert registry.family_index() == FAMILY_OF  # else: python tools/ops_index.py


def test_lookup_through_the_index_finds_what_a_full_load_finds() -> None:
    for seed in (1, 2):
        out = json.loads(subprocess.run([sys.executable, "-c", _LOOKUPS, str(seed)], capture_output=True, text=True,
                                        check=True).stdout)  # fmt: skip
        assert out["lazy"] == out["full"]
        assert any(v is not None for v in out["lazy"].values())


_ONE_OP = """
import sys
from graphlsp.ops import registry
assert registry.lookup("", "Relu", 14) is not None
print(sorted(m.removeprefix("graphlsp.ops.") for m in sys.modules
             if m.startswith("graphlsp.ops.") and m.removeprefix("graphlsp.ops.") in registry.FAMILIES))
"""


def test_a_lookup_imports_only_the_family_of_its_op() -> None:
    out = subprocess.run([sys.executable, "-c", _ONE_OP], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['elementwise']"
