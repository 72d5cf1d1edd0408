//! Each editor's names for the languages loci parses: the one table that the editor
//! configurations (`editors/`) are checked against and that maps a `didOpen`'s
//! `languageId` to a [`Language`].
//!
//! The match in [`editor_names`] is exhaustive, so a new [`Language`] does not compile
//! until its names in VS Code, Neovim and Helix are written here; the tests of
//! `server/cli/tests/editors_*.rs` then say which editor lists to update.
//!
//! Where the names come from:
//! - VS Code: the language ids of its built-in languages (`rust`, `shellscript`,
//!   `objective-c`, `r`, ...) and, for languages it has none for, of the extension most
//!   people use (Kotlin, Scala, Elixir, Haskell, Zig, Dart, OCaml Platform, Julia, Erlang,
//!   HashiCorp Terraform and HCL, Solidity, vscode-proto3 (`proto3`) and Buf (`proto`), Vue,
//!   Svelte).
//! - Neovim: the filetypes `vim.filetype.match` gives (Neovim 0.11): `cs`, `sh`,
//!   `terraform`, `terraform-vars`, `objc`, ...
//! - Helix: the `[[language]] name`s of Helix's own `languages.toml` (`c-sharp`, `bash`,
//!   `hcl`, `tfvars`, `protobuf`, ...).

use loci_core::Language;

/// One language's names in each editor (VS Code language ids, Neovim filetypes, Helix
/// language names). Each list names files loci parses as that language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EditorNames {
    /// VS Code language ids (`TextDocumentItem.languageId` from VS Code).
    pub vscode: &'static [&'static str],
    /// Neovim filetypes (Neovim sends the filetype as the `languageId`).
    pub neovim: &'static [&'static str],
    /// Helix language names (Helix sends its `language-id`, which defaults to the name).
    pub helix: &'static [&'static str],
}

/// The editors loci ships a configuration for, in the order the docs list them.
pub const EDITORS: [&str; 3] = ["vscode", "neovim", "helix"];

impl EditorNames {
    /// The names of one editor of [`EDITORS`]; empty for any other.
    pub fn of(&self, editor: &str) -> &'static [&'static str] {
        match editor {
            "vscode" => self.vscode,
            "neovim" => self.neovim,
            "helix" => self.helix,
            _ => &[],
        }
    }
}

/// Shorthand for a language named the same in every editor.
const fn same(name: &'static [&'static str]) -> EditorNames {
    EditorNames {
        vscode: name,
        neovim: name,
        helix: name,
    }
}

/// The names of `language` in each editor.
pub fn editor_names(language: Language) -> EditorNames {
    match language {
        Language::Rust => same(&["rust"]),
        Language::Python => same(&["python"]),
        // `.jsx` files: VS Code and Neovim `javascriptreact`, Helix `jsx`.
        Language::JavaScript => EditorNames {
            vscode: &["javascript", "javascriptreact"],
            neovim: &["javascript", "javascriptreact"],
            helix: &["javascript", "jsx"],
        },
        Language::TypeScript => same(&["typescript"]),
        Language::Tsx => EditorNames {
            vscode: &["typescriptreact"],
            neovim: &["typescriptreact"],
            helix: &["tsx"],
        },
        Language::Go => same(&["go"]),
        Language::Java => same(&["java"]),
        Language::C => same(&["c"]),
        // Helix and Neovim name `.h` headers `cpp` too (loci parses them as C).
        Language::Cpp => same(&["cpp"]),
        Language::CSharp => EditorNames {
            vscode: &["csharp"],
            neovim: &["cs"],
            helix: &["c-sharp"],
        },
        Language::Ruby => same(&["ruby"]),
        Language::Php => same(&["php"]),
        Language::Kotlin => same(&["kotlin"]),
        Language::Swift => same(&["swift"]),
        Language::Scala => same(&["scala"]),
        Language::Lua => same(&["lua"]),
        // Neovim 0.11 names `.sh` and `.bash` files `sh` (with `b:is_bash`); `bash` is
        // the filetype users and nvim-lspconfig set.
        Language::Bash => EditorNames {
            vscode: &["shellscript"],
            neovim: &["sh", "bash"],
            helix: &["bash"],
        },
        Language::Elixir => same(&["elixir"]),
        Language::Haskell => same(&["haskell"]),
        Language::Zig => same(&["zig"]),
        Language::Dart => same(&["dart"]),
        Language::OCaml => same(&["ocaml"]),
        Language::Julia => same(&["julia"]),
        Language::R => same(&["r"]),
        Language::Erlang => same(&["erlang"]),
        // `.tf`, `.tfvars`, `.hcl`.
        Language::Hcl => EditorNames {
            vscode: &["terraform", "terraform-vars", "hcl"],
            neovim: &["terraform", "terraform-vars", "hcl"],
            helix: &["hcl", "tfvars"],
        },
        Language::Solidity => same(&["solidity"]),
        // Neovim names an Objective-C header `objcpp` (`objc` under `g:c_syntax_for_h`);
        // loci parses `.h` as C either way. Helix has no Objective-C language: it names
        // every `.m` file `matlab`, and loci parses `.m` files as Objective-C.
        Language::ObjC => EditorNames {
            vscode: &["objective-c"],
            neovim: &["objc", "objcpp"],
            helix: &["matlab"],
        },
        Language::Proto => EditorNames {
            vscode: &["proto3", "proto"],
            neovim: &["proto"],
            helix: &["protobuf"],
        },
        Language::Vue => same(&["vue"]),
        Language::Svelte => same(&["svelte"]),
    }
}

/// The language of a document whose path says none, from the `languageId` its editor
/// gave (any editor's name in [`editor_names`]); `None` for any other id.
pub fn from_language_id(id: &str) -> Option<Language> {
    Language::ALL.into_iter().find(|&language| {
        let names = editor_names(language);
        EDITORS.iter().any(|editor| names.of(editor).contains(&id))
    })
}

/// Every name of one editor of [`EDITORS`], in [`Language::ALL`] order, then `markdown`
/// (loci checks the claims of markdown documents): the list its configuration attaches
/// loci to.
pub fn attached(editor: &str) -> Vec<&'static str> {
    Language::ALL
        .into_iter()
        .flat_map(|language| editor_names(language).of(editor).iter().copied())
        .chain(std::iter::once("markdown"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_a_name_in_every_editor() {
        for language in Language::ALL {
            for editor in EDITORS {
                assert!(
                    !editor_names(language).of(editor).is_empty(),
                    "{language:?} has no {editor} name"
                );
            }
        }
    }

    #[test]
    fn a_name_names_one_language() {
        for language in Language::ALL {
            for editor in EDITORS {
                for id in editor_names(language).of(editor) {
                    assert_eq!(from_language_id(id), Some(language), "{editor} {id}");
                }
            }
        }
        assert_eq!(from_language_id("markdown"), None);
        assert_eq!(from_language_id("plaintext"), None);
    }

    #[test]
    fn attached_lists_end_with_markdown() {
        assert_eq!(attached("helix").last(), Some(&"markdown"));
        assert_eq!(attached("vscode")[..3], ["rust", "python", "javascript"]);
        assert_eq!(attached("emacs"), ["markdown"]);
    }
}
