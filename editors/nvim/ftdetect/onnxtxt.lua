-- *.onnxtxt and *.onnxtext are ONNX models in ONNX text syntax: filetype `onnxtxt`.
require('graphlsp').filetype()
