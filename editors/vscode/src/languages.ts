// The VS Code language ids loci serves: the first twelve languages loci parses
// (server/core/src/lang/mod.rs, `Language::ALL`; the others are mapped but not attached
// yet, docs/languages.md) plus markdown, whose claims loci checks. Pure, for `node --test`.

/** Language ids, in `Language::ALL` order, then markdown. JavaScript covers `.jsx`
 * (`javascriptreact`), TypeScript `.ts` and TSX `.tsx` (`typescriptreact`). */
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
  'markdown',
];
