; loci import query for C#: `using Acme.Util;`, `using static Acme.Util.Helpers;`,
; `using Alias = Acme.Util.Type;` (the target is the last name child).
(using_directive [(identifier) (qualified_name)] @import.module .) @import
