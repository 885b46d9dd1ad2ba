"""Operators: signatures from onnx's schemas and our shape functions, one module per op family.

Importing this package registers every shape function (see `registry.load_all`).
"""
