(import_directive source: (string) @import.module) @import
