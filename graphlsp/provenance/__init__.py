"""Where an exported node comes from in Python: the frames torch's exporters write on each node, the frame a user
would fix, and the file on this machine that holds it.

`trace` reads a node's metadata (dynamo's `pkg.torch.onnx.stack_trace`, `name_scopes` and `class_hierarchy`; the
TorchScript exporter's doc_string frames and the scope names in its node names) into a `NodeSource`, and chooses
the innermost frame outside torch, onnxscript and the Python standard library. `locate` maps a frame's file to one
the user has (the workspace, a `path-map` entry, the installed package) and reads a line only inside the
workspace and the mapped folders.
"""
