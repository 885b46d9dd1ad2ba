-- *.onnxtxt and *.onnxtext are ONNX models in ONNX text syntax: filetype `onnxtxt`; *.onnxop (op libraries) are
-- filetype `onnxop`.
require('graphlsp').filetype()
