(import (qualified_identifier (identifier) @import.name .) @import.module) @import
