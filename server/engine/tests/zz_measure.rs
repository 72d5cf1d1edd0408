use loci_core::claims::{ClaimKind, extract_claims};
use loci_engine::Workspace;
#[test]
fn measure() {
    let root = std::path::PathBuf::from(std::env::var("M_ROOT").unwrap());
    let db = std::path::PathBuf::from(std::env::var("M_DB").unwrap());
    let ws = Workspace::open(&root, Some(&db)).unwrap();
    let docs = std::env::var("M_DOCS").unwrap();
    let (mut total, mut symbols, mut missing) = (0, 0, 0);
    for doc in docs.split_whitespace() {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        for c in extract_claims(&text) {
            total += 1;
            if c.kind != ClaimKind::Symbol {
                continue;
            }
            if lines
                .get(c.line as usize)
                .is_some_and(|l| l.contains("loci: ignore"))
            {
                continue;
            }
            symbols += 1;
            let call = c.text.ends_with(')');
            let qualified = c.target.contains('.');
            let e = ws.explain_claim(&c).unwrap();
            if e.contains("**not found**") {
                missing += 1;
                println!(
                    "MISSING\t{}\t{}\t{}\t{}",
                    doc,
                    c.line + 1,
                    if call {
                        "call"
                    } else if qualified {
                        "qual"
                    } else {
                        "bare"
                    },
                    c.text
                );
            }
        }
    }
    println!("TOTAL claims {total} symbol {symbols} missing {missing}");
}
