(import path: (string) @import.module) @import
