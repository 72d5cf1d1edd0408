//! scratch
use loci_core::Language;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lang = Language::from_name(&args[1]).unwrap();
    let text = std::fs::read_to_string(&args[2]).unwrap();
    let mut p = tree_sitter::Parser::new();
    p.set_language(&lang.grammar()).unwrap();
    let t = p.parse(&text, None).unwrap();
    eprintln!("{}", tree_sitter::format_sexp(&t.root_node().to_sexp(), 0));
}
