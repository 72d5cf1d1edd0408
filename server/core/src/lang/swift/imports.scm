(import_declaration (identifier) @import.module) @import
