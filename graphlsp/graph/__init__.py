"""The core graph IR of a model (`core`), built by a front end, with its structural findings (`findings`)."""

from graphlsp.graph.core import Function, Graph, Model, Node, Value
from graphlsp.graph.findings import Finding

__all__ = ["Finding", "Function", "Graph", "Model", "Node", "Value"]
