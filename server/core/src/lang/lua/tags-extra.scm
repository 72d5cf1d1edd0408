; Lua: `local function f` (the shipped query takes `function_declaration` names; this
; keeps a local function a function too).
