" Op libraries (*.onnxop), graphlsp's declarations of ops outside onnx's schemas: regex highlighting.
if exists('b:current_syntax')
  finish
endif

syn keyword onnxopDeclaration library domain op nextgroup=onnxopName skipwhite
syn match onnxopName /\h\w*\%(\.\h\w*\)*/ contained
syn keyword onnxopVersion since until
syn match onnxopStatement /^\s*\zs\%(doc\|input\|output\|attr\|type\|require\|dim\|let\|shape\|alternative\)\>/
syn keyword onnxopWord if else and or not in when with heterogeneous python
syn match onnxopFunction /\<\%(has\|rank\|dim\|len\|value\|min\|max\|cdiv\|broadcast\)\ze\s*(/
syn keyword onnxopType float16 bfloat16 float double uint64 uint32 uint16 uint8 uint4 uint2 int64 int32 int16 int8
syn keyword onnxopType int4 int2 bool string complex64 complex128 float8e4m3fn float8e4m3fnuz float8e5m2
syn keyword onnxopType float8e5m2fnuz float8e8m0 float4e2m1 float6e2m3 float6e3m2
syn keyword onnxopTypeCtor tensor seq optional sparse_tensor map
syn match onnxopRun /\*\h\w*/ contained
syn match onnxopAnyDim /\<_\>/ contained
syn region onnxopShape matchgroup=onnxopBracket start=/\[/ end=/\]/ contains=onnxopRun,onnxopAnyDim,onnxopNumber,onnxopFunction,onnxopWord,onnxopShape
syn match onnxopCode /\<GL\d\{3}\>/
syn match onnxopNumber /\%(\w\)\@<!\d\+\%(\.\d*\)\?\%([eE][+-]\?\d\+\)\?\>/
syn region onnxopString start=/"/ skip=/\\./ end=/"\|$/ contains=onnxopEscape
syn match onnxopEscape /\\./ contained
syn match onnxopComment /#.*$/ contains=@Spell

hi def link onnxopDeclaration Keyword
hi def link onnxopName Function
hi def link onnxopVersion Keyword
hi def link onnxopStatement Statement
hi def link onnxopWord Operator
hi def link onnxopFunction Function
hi def link onnxopType Type
hi def link onnxopTypeCtor Type
hi def link onnxopRun Identifier
hi def link onnxopAnyDim Constant
hi def link onnxopBracket Delimiter
hi def link onnxopCode Constant
hi def link onnxopNumber Number
hi def link onnxopString String
hi def link onnxopEscape SpecialChar
hi def link onnxopComment Comment

let b:current_syntax = 'onnxop'
