; loci additions to tree-sitter-rust's tags query (prepended: on a tie these win).

; `impl Type { .. }` and `impl Trait for Type { .. }` are not definitions, but their
; methods are qualified by the implementing type: `Type.method`.
(impl_item type: (_) @name) @scope

; What tree-sitter-rust's query calls `@definition.class` (structs, enums, unions, type
; aliases) and `@definition.interface` (traits), by the name a Rust user knows them by.
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.union
(type_item name: (type_identifier) @name) @definition.type
(trait_item name: (type_identifier) @name) @definition.trait

; trait method declarations without a body
(declaration_list
  (function_signature_item name: (identifier) @name) @definition.method)

(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant

; `Type::new()`, `module::func()`, `func::<T>()`
(call_expression
  function: (scoped_identifier name: (identifier) @name)) @reference.call
(call_expression
  function: (generic_function function: [
    (identifier) @name
    (scoped_identifier name: (identifier) @name)
    (field_expression field: (field_identifier) @name)
  ])) @reference.call

; `impl Trait for Type` where Trait is a path
(impl_item trait: (scoped_type_identifier name: (type_identifier) @name)) @reference.implementation
; and the type it implements the trait for, which it uses (`impl AsRawFd for crate::Handle`:
; the file depends on `Handle`'s)
(impl_item
  trait: (_)
  type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type

; A type qualifying a path (`ByteStr::from_static(..)`, `Kind::Io`, `crate::x::ByteStr::new`):
; the path's type, capitalized as Rust names types (a module's path, `mem::take`, is no type).
(scoped_identifier
  path: [
    (identifier) @name
    (scoped_identifier name: (identifier) @name)
  ]
  (#match? @name "^[A-Z]")
  (#not-eq? @name "Self")) @reference.type

; A capitalised item named by a path as a value: a unit struct or unit variant constructed
; (`let guard = unwind::AbortIfPanic;`, `Ordering::SeqCst`: calls, as struct literals are),
; a constant or static read (`util::DEFAULT_CAPACITY`: as rust-analyzer's SCIP index has
; it). A leading segment of a longer path is the type above (`module::Type` in
; `module::Type::new()`: the call names `new`, the type is used); a path `use` imports is
; an import.
((scoped_identifier name: (identifier) @name) @reference.call
  (#match? @name "^[A-Z][a-z]"))
((scoped_identifier name: (identifier) @name) @reference.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
(use_declaration argument: (scoped_identifier name: (identifier) @ignore))
(use_as_clause path: (scoped_identifier name: (identifier) @ignore))
(use_list (scoped_identifier name: (identifier) @ignore))

; `crate::ensure!(..)`, `std::println!(..)`
(macro_invocation macro: (scoped_identifier name: (identifier) @name)) @reference.call

; The flags types `bitflags!` and its wrappers (nix's `libc_bitflags!`) declare in a body
; that is no Rust (`pub struct OFlag: c_int { .. }`): the name before the flags' type,
; defined by the flags' `{ .. }`.
(macro_invocation
  macro: [
    (identifier) @_macro
    (scoped_identifier name: (identifier) @_macro)
  ]
  (token_tree
    "struct" (identifier) @name . [(identifier) (primitive_type)] . (token_tree) @definition.struct)
  (#match? @_macro "bitflags$"))

; enum variants, qualified by their enum (`Value.Null`): docs name them as `Value::Null`,
; and a variant missing from the map made `loci lint` report every such mention
(enum_variant name: (identifier) @name) @definition.constant

; a trait method declaration in a macro body parsed on its own (`trait T { cfg_x! { fn f(); } }`:
; the body's tree has no `declaration_list`); a top-level `fn f();` is no valid Rust elsewhere
(source_file
  (function_signature_item name: (identifier) @name) @definition.method)

; Uses of a type by name: what a function takes and returns, fields, annotations and type
; arguments (they resolve to types only), and struct literals, which construct a value as
; `Store::new()` does (calls: `Error::Io { .. }` is the variant's). tree-sitter-rust's
; query has none, so `loci refs Store` and `loci impact` missed them.
; A type written as a path (`&crate::Message`, `Vec<error::Kind>`) too: the path is the
; reference's receiver, followed through the module tree.
(function_item return_type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
(function_signature_item return_type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
(parameter type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
(reference_type type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
(type_arguments [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
(generic_type type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
(field_declaration type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
(ordered_field_declaration_list type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
(let_declaration type: [(type_identifier) @name (scoped_type_identifier name: (type_identifier) @name)]) @reference.type
; A trait object or `impl Trait` (`&dyn Message`, `-> impl crate::Message`): the trait's.
(dynamic_type trait: [
  (type_identifier) @name
  (scoped_type_identifier name: (type_identifier) @name)
]) @reference.type
(abstract_type trait: [
  (type_identifier) @name
  (scoped_type_identifier name: (type_identifier) @name)
]) @reference.type
(struct_expression name: (type_identifier) @name) @reference.call
(struct_expression
  name: (scoped_type_identifier name: (type_identifier) @name)) @reference.call
