"""Op libraries: operators outside onnx's schemas (a runtime's contrib ops, a project's custom ops), declared in
the op DSL (`*.onnxop`, grammar in `grammar/onnxop.lark`); see README.md in this folder.

`parser` reads a library with positions and recovery, `checker` checks its declarations, `catalog` holds the
libraries in use (the shipped ones in `libraries/`, a project's from `[tool.graphlsp] op-libraries`) and answers
op resolution for them. Signatures and shape contracts are run on nodes by `graphlsp.ops.library`.
"""
