"""What a runtime can run: onnxruntime's kernel registries (per execution provider) and the model versions each
release loads, with onnxruntime's own rule for matching a node to a kernel. Knows nothing of graphlsp's IR: a node
is described by its domain, op, schema version and the type of each argument, as onnxruntime spells types."""
