-- Op libraries (*.onnxop): `#` comments (gc, gcc), words are names; `gd` goes to where a name is declared or bound
-- (LSP definition: an input, attribute or type constraint, or the input shape that binds a dim symbol).
require('graphlsp.ftplugin').setup({ gd_desc = 'graphlsp: go to where the name under the cursor is declared or bound' })
