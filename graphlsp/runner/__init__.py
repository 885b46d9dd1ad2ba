"""The CPU runner and constant folding: evaluate constant subgraphs for the shape engine (`runner.py`), find
what folds and say so (`fold.py`, GL4xx hints), and rewrite the text with the folds applied (`rewrite.py`)."""

from graphlsp.runner.runner import CACHE_LIMIT, DEFAULT_CAP, NOT_CONST, Runner

__all__ = ["CACHE_LIMIT", "DEFAULT_CAP", "NOT_CONST", "Runner"]
