(open_module module: (module_path (module_name) @import.module)) @import
(module_definition (module_binding body: (module_path (module_name) @import.module))) @import
