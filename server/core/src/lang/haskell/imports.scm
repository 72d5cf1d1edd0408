(import module: (module) @import.module) @import
