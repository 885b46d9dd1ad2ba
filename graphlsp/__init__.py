"""graphlsp: a language server and linter for ONNX models, binary (.onnx) and text (.onnxtxt)."""

__version__ = "0.1.0"
