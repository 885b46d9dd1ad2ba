"""graphlsp: a language server and linter for ONNX graphs written in ONNX textual syntax."""

__version__ = "0.1.0"
