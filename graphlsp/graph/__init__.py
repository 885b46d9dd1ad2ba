"""The core graph IR of a model (`core`), built from the syntax by `build.build_model`, with its structural findings."""

from graphlsp.graph.build import build_model
from graphlsp.graph.core import Function, Graph, Model, Node, Value
from graphlsp.graph.findings import Finding

__all__ = ["Finding", "Function", "Graph", "Model", "Node", "Value", "build_model"]
