" ONNX text syntax (*.onnxtxt, *.onnxtext): a base layer of regex highlighting. With the graphlsp server attached,
" its semantic tokens (ops, values, types, dims, attributes) are drawn on top.
if exists('b:current_syntax')
  finish
endif

syn keyword onnxtxtType float8e4m3fnuz float8e5m2fnuz float8e4m3fn float8e5m2 float8e8m0 float6e2m3 float6e3m2
syn keyword onnxtxtType float4e2m1 float16 bfloat16 complex128 complex64 float double uint64 uint32 uint16 uint8
syn keyword onnxtxtType uint4 uint2 int64 int32 int16 int8 int4 int2 string bool
syn keyword onnxtxtTypeCtor seq map optional sparse_tensor opaque
syn match onnxtxtOp /=\s*\zs\%(\h\w*\.\)*\h\w*\%(:\h\w*\)\?\ze\s*[<(]/
syn match onnxtxtAttrName /\%([<,]\s*\|^\s*\)\zs\h\w*\ze\s*\%(:\s*\h\w*\s*\)\?=/
syn match onnxtxtLabel /\[\s*\h\w*\s*\]\ze\s*\h/
syn match onnxtxtHeaderKey /^\s*\zs\h\w*\ze\s*:/
syn match onnxtxtNumber /\%(\w\)\@<!-\?\d\+\%(\.\d*\)\?\%([eE][+-]\?\d\+\)\?\>/
syn match onnxtxtFloatWord /\c\<-\?\%(infinity\|inf\|nan\)\>/
syn match onnxtxtArrow /=>/
syn match onnxtxtRef /@\h\w*/
syn region onnxtxtString start=/"/ skip=/\\./ end=/"/ contains=onnxtxtEscape
syn match onnxtxtEscape /\\./ contained
syn match onnxtxtComment /#.*$/ contains=@Spell

hi def link onnxtxtType Type
hi def link onnxtxtTypeCtor Type
hi def link onnxtxtOp Function
hi def link onnxtxtAttrName Identifier
hi def link onnxtxtLabel Label
hi def link onnxtxtHeaderKey Keyword
hi def link onnxtxtNumber Number
hi def link onnxtxtFloatWord Number
hi def link onnxtxtArrow Operator
hi def link onnxtxtRef PreProc
hi def link onnxtxtString String
hi def link onnxtxtEscape SpecialChar
hi def link onnxtxtComment Comment

let b:current_syntax = 'onnxtxt'
