; Elixir: `defstruct` and `defmacro` are in the shipped query's `def*` patterns.
