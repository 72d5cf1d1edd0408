// What the extension attaches loci to: the VS Code language ids of every language loci
// parses plus markdown, whose claims loci checks, and the file extensions loci parses.
// Both lists are checked against the server's registry (`Language::ALL` in
// server/core/src/lang/mod.rs, the editor names in server/lsp/src/languages.rs) by
// server/cli/tests/it/editors_vscode.rs. Pure, for `node --test`.

/** Language ids, in `Language::ALL` order, then markdown. Built-in ids where VS Code has
 * the language (`shellscript`, `objective-c`, `r`, ...), else the id of the extension most
 * people use (Kotlin, Scala, Elixir, Haskell, Zig, Dart, OCaml, Julia, Erlang, HashiCorp
 * Terraform `terraform`/`terraform-vars` and HCL `hcl`, Solidity, vscode-proto3 `proto3`
 * and Buf `proto`, Vue, Svelte). */
export const LANGUAGES: readonly string[] = [
  'rust',
  'python',
  'javascript',
  'javascriptreact',
  'typescript',
  'typescriptreact',
  'go',
  'java',
  'c',
  'cpp',
  'csharp',
  'ruby',
  'php',
  'kotlin',
  'swift',
  'scala',
  'lua',
  'shellscript',
  'elixir',
  'haskell',
  'zig',
  'dart',
  'ocaml',
  'julia',
  'r',
  'erlang',
  'terraform',
  'terraform-vars',
  'hcl',
  'solidity',
  'objective-c',
  'proto3',
  'proto',
  'vue',
  'svelte',
  'markdown',
];

/** File extensions loci parses (`Spec::extensions`, in `Language::ALL` order): without an
 * extension for its language VS Code calls a `.kt` file `plaintext`, and loci still maps
 * it. */
export const EXTENSIONS: readonly string[] = [
  'rs',
  'py',
  'pyi',
  'js',
  'mjs',
  'cjs',
  'jsx',
  'ts',
  'mts',
  'cts',
  'tsx',
  'go',
  'java',
  'c',
  'h',
  'cc',
  'cpp',
  'cxx',
  'c++',
  'hpp',
  'hh',
  'hxx',
  'h++',
  'cs',
  'rb',
  'php',
  'kt',
  'kts',
  'swift',
  'scala',
  'sc',
  'lua',
  'sh',
  'bash',
  'ex',
  'exs',
  'hs',
  'zig',
  'dart',
  'ml',
  'jl',
  'r',
  'R',
  'erl',
  'hrl',
  'tf',
  'hcl',
  'tfvars',
  'sol',
  'm',
  'proto',
  'vue',
  'svelte',
];

/** One document filter of the client's document selector. */
export interface DocumentFilter {
  scheme: string;
  language?: string;
  pattern?: string;
}

/** The language client's document selector: files of every language id, and files of
 * every parsed extension whatever language VS Code gives them. */
export function documentSelector(): DocumentFilter[] {
  return [
    ...LANGUAGES.map((language) => ({ scheme: 'file', language })),
    { scheme: 'file', pattern: `**/*.{${EXTENSIONS.join(',')}}` },
  ];
}
