-- ONNX text: `#` comments (gc, gcc), words are names; `gd` goes to the value's producer (LSP definition);
-- :GraphlspGraph shows the model's graph.
require('graphlsp.ftplugin').setup({ gd_desc = 'graphlsp: go to the producer of the value under the cursor', graph = true })
