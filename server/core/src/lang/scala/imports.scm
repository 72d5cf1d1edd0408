(import_declaration (identifier) @import.name .) @import
