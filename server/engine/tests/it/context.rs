//! `search` and `context`: safe queries (B18), filters, provenance, tiers under a budget,
//! the recap, banners and stale warnings, abstention; and retrieval quality on loci's own
//! case set (`fixtures/eval/loci.jsonl`) against plain BM25.

use std::path::Path;

use loci_engine::Workspace;
use loci_engine::context::{ContextRequest, HitKind, SearchOptions, Tier};
use loci_engine::memory::WriteOptions;

use crate::fixture::{files, write};

fn by(author: &str) -> WriteOptions {
    WriteOptions {
        author: Some(author.into()),
        ..Default::default()
    }
}

/// A small project: a billing module, an auth module importing it, a doc, and memory.
fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/billing.py",
        "class Invoice:\n    \"\"\"An invoice with line items and a total.\"\"\"\n    def total(self):\n        return sum(i.amount for i in self.items)\n\ndef refund_invoice(invoice):\n    \"\"\"Refunds every line item of a paid invoice.\"\"\"\n    return -invoice.total()\n",
    );
    write(
        root,
        "src/auth.py",
        "from src.billing import Invoice\n\ndef login(user, password):\n    \"\"\"Checks the password hash and opens a session.\"\"\"\n    return check_hash(user, password)\n\ndef check_hash(user, password):\n    return True\n",
    );
    write(
        root,
        "docs/billing.md",
        "# Billing\n\nInvoices are totalled from their line items.\n\n## Refunds\n\nA refund reverses every line item.\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "src/billing.py",
        "Refunds go through `refund_invoice()`, which negates `Invoice.total()`. Never refund a draft invoice.",
        &by("agent:a"),
    )
    .unwrap();
    (dir, ws)
}

/// A workspace with nothing in it yet.
fn empty_workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path(), Some(&dir.path().join("loci.db"))).unwrap();
    (dir, ws)
}

/// Rewrites `src/billing.py` (both symbols its memory names change) and rescans: the
/// page on it goes stale.
fn rewrite_billing(root: &Path, ws: &mut Workspace) {
    write(
        root,
        "src/billing.py",
        "class Invoice:\n    def total(self):\n        return 0\n\ndef refund_invoice(invoice):\n    return None\n",
    );
    ws.scan(&|_| {}).unwrap();
}

fn ask(
    ws: &Workspace,
    query: &str,
    open: &[&str],
    budget: u64,
) -> loci_engine::Envelope<loci_engine::context::ContextAnswer> {
    ws.context(&ContextRequest {
        query: query.into(),
        open_files: open.iter().map(|s| s.to_string()).collect(),
        budget: Some(budget),
        floor: None,
    })
    .unwrap()
}

#[test]
fn b18_user_text_is_always_a_valid_query() {
    let (_dir, mut ws) = workspace();
    ws.remember(
        "docs/billing.md",
        "multi-agent setup; see grammar::fa and spec 38.101; order BENCH-100821",
        &by("human:b"),
    )
    .unwrap();
    let memory = SearchOptions {
        kinds: vec![HitKind::Memory],
        ..Default::default()
    };
    for q in ["multi-agent", "grammar::fa", "38.101", "BENCH-100821"] {
        let hits = ws.search(q, &memory).unwrap().result;
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["docs/billing.md"], "query {q}");
    }
    for q in ["-band", "", "   ", "\"", "NEAR(", "a AND", "*", "col:umn"] {
        let hits = ws.search(q, &memory).unwrap().result;
        assert!(hits.is_empty(), "query {q:?} gave {hits:?}");
    }
    // The same texts through context never fail either.
    for q in ["multi-agent", "-band", "\"", "NEAR(", "col:umn"] {
        ask(&ws, q, &[], 500);
    }
}

#[test]
fn search_filters_by_kind_and_path_and_gives_snippets_and_provenance() {
    let (_dir, ws) = workspace();
    let all = ws.search("refund", &SearchOptions::default()).unwrap();
    let mut kinds: Vec<(HitKind, &str)> =
        all.result.iter().map(|h| (h.kind, h.id.as_str())).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            (HitKind::Memory, "src/billing.py"),
            (HitKind::Symbol, "src/billing.py#refund_invoice@function"),
            (HitKind::Doc, "docs/billing.md#Refunds"),
        ]
    );
    let memory = &all
        .result
        .iter()
        .find(|h| h.kind == HitKind::Memory)
        .unwrap();
    assert!(
        memory
            .snippet
            .starts_with("Refunds go through `[refund]_invoice()`"),
        "{}",
        memory.snippet
    );
    assert!(
        memory.provenance.starts_with("revision 1 by agent:a at "),
        "{}",
        memory.provenance
    );
    let symbol = &all
        .result
        .iter()
        .find(|h| h.kind == HitKind::Symbol)
        .unwrap();
    assert_eq!(symbol.provenance, "src/billing.py:6");
    assert_eq!(symbol.snippet, "def refund_invoice(invoice):");
    assert_eq!(all.limits.used, 3);

    let only_docs = SearchOptions {
        kinds: vec![HitKind::Doc],
        ..Default::default()
    };
    let ids: Vec<String> = ws
        .search("line items", &only_docs)
        .unwrap()
        .result
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(ids, ["docs/billing.md#Billing"]);
    let under_docs = SearchOptions {
        path_prefix: Some("./docs/".into()),
        ..Default::default()
    };
    let ids: Vec<String> = ws
        .search("refund", &under_docs)
        .unwrap()
        .result
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(ids, ["docs/billing.md#Refunds"]);
    // Identifier-aware: one spelling finds the others.
    for q in ["checkHash", "CheckHash", "check_hash"] {
        let ids: Vec<String> = ws
            .search(q, &SearchOptions::default())
            .unwrap()
            .result
            .into_iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(ids, ["src/auth.py#check_hash@function"], "query {q}");
    }
}

#[test]
fn context_answers_a_question_in_prose_with_memory_and_code_first() {
    let (_dir, ws) = workspace();
    let env = ask(&ws, "How do we refund an invoice?", &[], 2_000);
    let a = &env.result;
    assert!(!a.abstained);
    let top: Vec<(&str, Tier)> = a
        .items
        .iter()
        .take(2)
        .map(|i| (i.id.as_str(), i.tier))
        .collect();
    assert_eq!(
        top,
        [
            ("src/billing.py", Tier::Full),
            ("src/billing.py#refund_invoice@function", Tier::Full)
        ]
    );
    // FULL pages are headed with subject, version, date and author.
    let page = &a.items[0].text;
    assert!(page.starts_with("### src/billing.py (v1, "), "{page}");
    assert!(page.contains("by agent:a)\nRefunds go through"), "{page}");
    assert!(
        a.markdown
            .contains("## Context for `How do we refund an invoice?`")
    );
    assert_eq!(env.limits.budget, Some(2_000));
    assert_eq!(env.limits.used, a.tokens_estimated);
    assert!(!env.limits.truncated);
    assert_eq!(env.limits.omitted, 0);
    assert!(
        a.markdown.ends_with(&format!(
            "\n_≈{} of 2000 tokens (an estimate: characters / 4)_\n",
            env.limits.used
        )),
        "{}",
        a.markdown
    );
}

#[test]
fn a_small_budget_packs_digests_and_index_lines_and_says_what_it_cut() {
    let (_dir, ws) = workspace();
    let roomy = ask(&ws, "refund invoice line items", &[], 5_000).result;
    let n = roomy.items.len();
    assert!(n >= 4, "{:?}", roomy.items);
    let fulls = |items: &[loci_engine::context::ContextItem]| {
        items.iter().filter(|i| i.tier == Tier::Full).count()
    };
    assert!(fulls(&roomy.items) >= 2, "{:?}", roomy.items);
    let tight = ask(&ws, "refund invoice line items", &[], 60);
    let tiers: Vec<Tier> = tight.result.items.iter().map(|i| i.tier).collect();
    assert!(
        fulls(&tight.result.items) < fulls(&roomy.items),
        "{tiers:?}"
    );
    assert!(
        tiers.contains(&Tier::Index),
        "index lines fill what is left: {tiers:?}"
    );
    assert!(tight.limits.used <= 60, "{:?}", tight.limits);
    assert!(tight.limits.truncated);
    assert_eq!(
        tight.limits.omitted as usize + tight.result.items.len(),
        n,
        "every candidate is served at some tier or counted as omitted"
    );
    let index = tight
        .result
        .items
        .iter()
        .find(|i| i.tier == Tier::Index)
        .unwrap();
    assert!(index.text.contains("score "), "{}", index.text);
    // The answer says what it used, labelled an estimate, and how much it left out.
    assert!(
        tight.result.markdown.contains(&format!(
            "\n_≈{} of 60 tokens (an estimate: characters / 4)",
            tight.limits.used
        )),
        "{}",
        tight.result.markdown
    );
}

#[test]
fn a_recap_of_the_last_sessions_heads_the_answer() {
    let (_dir, mut ws) = workspace();
    let s = ws
        .session_begin(Some("fix refunds of drafts"), Some("agent:a"))
        .unwrap()
        .result;
    ws.session_end(s.session_id, Some("drafts are refused"))
        .unwrap();
    let a = ask(&ws, "refund", &[], 2_000).result;
    assert!(a.recap.starts_with("## Recent sessions\n"), "{}", a.recap);
    assert!(
        a.recap
            .contains("agent:a): fix refunds of drafts — drafts are refused")
    );
    assert!(
        a.markdown.starts_with("## Recent sessions\n"),
        "{}",
        a.markdown
    );
}

#[test]
fn stale_memory_is_marked_and_warned_about() {
    let (dir, mut ws) = workspace();
    rewrite_billing(dir.path(), &mut ws);
    let env = ask(&ws, "refund invoice", &[], 2_000);
    let page = env
        .result
        .items
        .iter()
        .find(|i| i.id == "src/billing.py")
        .unwrap();
    assert!(page.stale);
    assert!(
        page.signals.iter().any(|s| s == "stale -20.0"),
        "{:?}",
        page.signals
    );
    assert!(
        page.text
            .contains("> stale: the code changed since this was written")
    );
    let reasons: Vec<&str> = env
        .stale_warnings
        .iter()
        .map(|w| w.reason.as_str())
        .collect();
    assert!(
        reasons.contains(
            &"memory `src/billing.py` v1 is stale: src/billing.py changed since it was written"
        ),
        "{reasons:?}"
    );
}

#[test]
fn contradicted_memory_comes_with_a_banner() {
    let (_dir, mut ws) = workspace();
    ws.remember(
        "src/auth.py",
        "`login()` asks `src/mfa/totp.py` for a second factor, then calls `check_hash()`.",
        &by("agent:a"),
    )
    .unwrap();
    ws.lint().unwrap();
    let a = ask(&ws, "what does login check", &["src/auth.py"], 2_000).result;
    assert_eq!(
        a.banners,
        [
            "⚠ memory `src/auth.py` has 1 open contradiction(s) with the code; verify before relying on it (`loci lint`)"
        ]
    );
    let page = a.items.iter().find(|i| i.id == "src/auth.py").unwrap();
    assert_eq!(page.contradictions, 1);
    assert!(a.markdown.contains(&a.banners[0]));
}

#[test]
fn an_unrelated_question_abstains_with_the_best_score() {
    let (_dir, mut ws) = workspace();
    ws.decide("Invoices are immutable once paid.", None, &by("human:b"))
        .unwrap();
    for q in [
        "kubernetes helm chart for the staging cluster",
        "bake a chocolate cake",
        "how",
    ] {
        let env = ask(&ws, q, &[], 2_000);
        let a = &env.result;
        assert!(a.abstained, "{q}: {:?}", a.items);
        assert!(a.best_relevance < a.floor, "{q}");
        assert_eq!(a.floor, 10.5, "the default floor");
        assert!(a.items.is_empty() && a.banners.is_empty());
        // Why, and the best candidate when there is one.
        let why = match &a.best_candidate {
            Some(id) => format!(
                "is relevant enough to `{q}` (best candidate `{id}` at relevance {:.1} < floor 10.5)",
                a.best_relevance
            ),
            None => format!(
                "is relevant enough to `{q}` (best relevance {:.1} < floor 10.5)",
                a.best_relevance
            ),
        };
        assert!(a.markdown.contains(&why), "{}", a.markdown);
        assert!(env.stale_warnings.is_empty());
    }
    // The same question about the code does not abstain, and the decision log, which
    // matches nothing, is not padded in by its boost.
    let a = ask(&ws, "refund a paid invoice", &[], 2_000).result;
    assert!(!a.abstained);
    assert!(a.best_relevance >= 10.5);
    let decisions = a.items.iter().find(|i| i.id == "decision:1");
    assert!(
        decisions.is_some_and(|d| d.signals.iter().any(|s| s == "decisions +25.0")),
        "a matching decision log is boosted: {:?}",
        a.items
    );
    let a = ask(&ws, "who checks the password hash", &[], 2_000).result;
    assert!(
        a.items.iter().all(|i| !i.id.starts_with("decision:")),
        "{:?}",
        a.items
    );
}

#[test]
fn an_open_file_brings_its_memory_without_a_question_match() {
    let (_dir, ws) = workspace();
    let a = ask(
        &ws,
        "what should I know before changing this",
        &["src/billing.py"],
        2_000,
    )
    .result;
    assert!(!a.abstained);
    // The page first, and with it the file's outline and symbols (the two the page names
    // one hop from it, +15, follow the memory about their file, not come first).
    let items: Vec<(&str, HitKind, Tier, f64)> = a
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.kind, i.tier, i.score))
        .collect();
    assert_eq!(
        items,
        [
            ("src/billing.py", HitKind::Memory, Tier::Full, 60.0),
            (
                "src/billing.py#refund_invoice@function",
                HitKind::Symbol,
                Tier::Full,
                60.0
            ),
            (
                "src/billing.py#Invoice.total@method",
                HitKind::Symbol,
                Tier::Full,
                60.0
            ),
            ("src/billing.py", HitKind::File, Tier::Digest, 50.0),
            (
                "src/billing.py#Invoice@class",
                HitKind::Symbol,
                Tier::Digest,
                50.0
            ),
        ]
    );
    assert_eq!(
        a.items[0].signals,
        [
            "open module src/billing.py +50.0",
            "updated this week +10.0"
        ]
    );
    assert_eq!(
        a.items[1].signals,
        [
            "open module src/billing.py +50.0",
            "named by memory `src/billing.py` +15.0",
            "after the memory about its file -5.0"
        ]
    );
}

/// Retrieval quality on loci's own repository and case set, side by side with plain FTS5
/// BM25. Measured when this was written (context_bench, 39 in-scope and 7 out-of-scope
/// cases): loci recall@5 0.436 and MRR 0.519, BM25 0.397 and 0.365; the bounds leave room
/// for the repository to grow, and fail on a real regression of the ranking. On
/// 2026-12-01 (14 out-of-scope cases): recall@5 0.380, MRR 0.449, BM25 0.350 and 0.316;
/// 12 of the 14 abstain, so two more may stop abstaining before the 0.7 bound fails (with
/// 7 cases, one docs change that matched an out-of-scope word had failed it). On
/// 2026-12-04: MRR 0.423, then 0.418 with the same code on the repository as that day's
/// changes left it (one case's gold from rank 2 to 3 in `eval`), so the MRR bound is 0.41.
#[test]
fn loci_beats_bm25_on_its_own_case_set() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let db = tempfile::tempdir().unwrap();
    let mut ws = Workspace::open(&repo, Some(&db.path().join("loci.db"))).unwrap();
    let scan = ws.scan(&|_| {}).unwrap().result;
    // Tests that hold credential-shaped strings build them from pieces: a source file the
    // secret rules skip drops out of the map (and of the docs' checks).
    assert_eq!(
        scan.skipped.get("secret"),
        None,
        "{:?}",
        scan.skipped_examples
    );
    let report = ws
        .eval(&repo.join("fixtures/eval/loci.jsonl"), 5)
        .unwrap()
        .result;
    assert!(
        report.unknown_gold.is_empty(),
        "fixtures/eval/loci.jsonl names what the map does not hold: {:?}",
        report.unknown_gold
    );
    assert!(
        report.in_scope >= 30 && report.out_of_scope >= 5,
        "{}",
        report.table()
    );
    let (loci, bm25) = (&report.systems[0], &report.systems[1]);
    assert_eq!(
        (loci.system.as_str(), bm25.system.as_str()),
        ("loci context", "fts5 bm25")
    );
    assert!(loci.recall_at_k >= Some(0.38), "{}", report.table());
    assert!(loci.mrr >= Some(0.41), "{}", report.table());
    assert!(loci.recall_at_k > bm25.recall_at_k, "{}", report.table());
    assert!(loci.mrr > bm25.mrr, "{}", report.table());
    // Abstention at the default floor: most out-of-scope questions abstain, and most that
    // abstain are out of scope.
    assert!(loci.abstention_recall >= Some(0.7), "{}", report.table());
    let calibration = ws
        .calibrate(&repo.join("fixtures/eval/loci.jsonl"))
        .unwrap()
        .result;
    assert!(calibration.balanced_accuracy >= 0.8, "{calibration:?}");
}

/// `docs/ledger.md`: one section, `Reconciliation`, long enough to be indexed as several
/// chunks, each holding "ledger" and "reconcile".
fn write_long_section(root: &Path) {
    let filler = "Totals are kept per currency and rounded at the end of the month. ".repeat(20);
    let section = (0..4)
        .map(|i| format!("Paragraph {i}: the ledger must reconcile. {filler}"))
        .collect::<Vec<_>>()
        .join("\n\n");
    write(
        root,
        "docs/ledger.md",
        &format!("# Ledger\n\n## Reconciliation\n\n{section}\n"),
    );
}

/// The signals of the item `id` in an answer.
/// Asserts that no item of `a` scored for a name the question uses.
fn assert_nothing_named(a: &loci_engine::context::ContextAnswer) {
    assert!(
        !a.items.iter().any(|i| i
            .signals
            .iter()
            .any(|s| s.contains("named in the question"))),
        "{:?}",
        a.items
    );
}

fn signals_of(a: &loci_engine::context::ContextAnswer, id: &str) -> Vec<String> {
    a.items
        .iter()
        .find(|i| i.id == id)
        .map(|i| i.signals.clone())
        .unwrap_or_else(|| panic!("no item {id} in {:?}", a.items))
}

#[test]
fn scoring_uses_the_seed_weights() {
    let (_dir, mut ws) = workspace();
    ws.remember(
        "src",
        "The `src` folder holds the application modules.",
        &by("agent:a"),
    )
    .unwrap();
    ws.remember(
        "src/auth.py",
        "`login()` verifies the password with `check_hash()`.",
        &by("agent:a"),
    )
    .unwrap();
    let a = ask(&ws, "what does login verify", &["src/auth.py"], 5_000).result;
    // The open file's own page: its module (+50), a full-text hit (the whole question,
    // rank 0: +30), updated within 7 days (+10).
    assert_eq!(
        signals_of(&a, "src/auth.py"),
        [
            "text (100% of the question) +30.0",
            "symbol match in this file +6.7",
            "open module src/auth.py +50.0",
            "updated this week +10.0"
        ]
    );
    // The open file's folder is its module too.
    assert!(
        signals_of(&a, "src").contains(&"open module src/auth.py +50.0".to_string()),
        "{:?}",
        signals_of(&a, "src")
    );
    // A sibling file's page: +25, and one import hop from the open file (+15).
    let billing = signals_of(&a, "src/billing.py");
    assert!(
        billing.contains(&"sibling of src/auth.py +25.0".to_string())
            && billing.contains(&"one import hop from a top result +15.0".to_string()),
        "{billing:?}"
    );
    // A symbol named in the question (+15) whose name is the whole question (+30).
    let a = ask(&ws, "check_hash", &[], 5_000).result;
    assert_eq!(
        signals_of(&a, "src/auth.py#check_hash@function"),
        [
            "text (100% of the question) +30.0",
            "named in the question (`check_hash`) +15.0",
            "named by memory `src/auth.py`, which holds the question +15.0"
        ]
    );
}

#[test]
fn where_memory_is_thin_the_import_graph_ranks_files_around_the_open_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "pkg/a.py",
        "from pkg.b import helper\n\ndef main():\n    return helper()\n",
    );
    write(
        root,
        "pkg/b.py",
        "from pkg.c import base\n\ndef helper():\n    return base()\n",
    );
    write(root, "pkg/c.py", "def base():\n    return 1\n");
    write(root, "other/d.py", "def unrelated():\n    return 2\n");
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "where is main", &["pkg/a.py"], 5_000).result;
    let files: Vec<(&str, Vec<String>)> = a
        .items
        .iter()
        .filter(|i| i.kind == HitKind::File)
        .map(|i| (i.id.as_str(), i.signals.clone()))
        .collect();
    assert_eq!(
        files.len(),
        2,
        "{:#?}",
        a.items
            .iter()
            .map(|i| (&i.id, &i.signals))
            .collect::<Vec<_>>()
    );
    assert_eq!(files[0].0, "pkg/b.py");
    assert_eq!(files[1].0, "pkg/c.py");
    assert!(
        files[0]
            .1
            .contains(&"import-graph centrality near the seeds +12.0".to_string()),
        "{files:?}"
    );
    // Centrality supports; it is not evidence: the files are served as index lines.
    assert!(
        a.items
            .iter()
            .filter(|i| i.kind == HitKind::File)
            .all(|i| i.tier == Tier::Index && i.relevance == 0.0)
    );
    // With enough relevant memory, no centrality is added.
    for (s, body) in [
        ("pkg/a.py", "`main()` is the entry point."),
        ("pkg", "The package has three modules."),
        ("pkg/b.py", "`helper()` wraps `base()`."),
    ] {
        ws.remember(s, body, &by("agent:a")).unwrap();
    }
    let a = ask(&ws, "where is main", &["pkg/a.py"], 5_000).result;
    assert!(
        a.items
            .iter()
            .all(|i| !i.signals.iter().any(|s| s.starts_with("import-graph"))),
        "{:?}",
        a.items
    );
}

#[test]
fn symbols_a_relevant_page_names_come_one_hop_from_it() {
    let (_dir, ws) = workspace();
    let a = ask(&ws, "never refund a draft", &[], 5_000).result;
    assert!(!a.abstained);
    // The page holds the whole question (30 text points): what it names is evidence, half
    // its text points, though `Invoice.total` shares no word with the question.
    let total = signals_of(&a, "src/billing.py#Invoice.total@method");
    assert_eq!(
        total,
        ["named by memory `src/billing.py`, which holds the question +15.0"]
    );
    let item = a
        .items
        .iter()
        .find(|i| i.id == "src/billing.py#Invoice.total@method")
        .unwrap();
    assert_eq!((item.relevance, item.tier), (15.0, Tier::Full));
}

/// Faults from a first-use trial on clap: `search Command` ranked `pub struct Command`
/// (long doc comment) 139th, below every short `fn command()`; and a question in words
/// (`how does get_matches parse arguments`) found nothing because every word had to match.
#[test]
fn search_puts_exact_definitions_first_and_answers_a_question_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let doc: String = (0..40)
        .map(|i| format!("/// Line {i} of a long description of how a command line is built.\n"))
        .collect();
    write(
        root,
        "src/lib.rs",
        &format!(
            "{doc}pub struct Command {{\n    name: String,\n}}\n\npub trait Factory {{\n    fn command() -> Command;\n    fn command_for_update() -> Command;\n}}\n\nimpl Command {{\n    pub fn get_matches(self) -> u32 {{\n        0\n    }}\n}}\n"
        ),
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let symbols = SearchOptions {
        kinds: vec![HitKind::Symbol],
        limit: Some(3),
        ..Default::default()
    };
    let hits = ws.search("Command", &symbols).unwrap().result;
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert_eq!(ids[0], "src/lib.rs#Command@struct", "{ids:?}");
    assert_eq!(ids.iter().filter(|i| **i == ids[0]).count(), 1);

    let hits = ws
        .search("how does get_matches parse arguments", &symbols)
        .unwrap()
        .result;
    assert_eq!(
        hits.first().map(|h| h.id.as_str()),
        Some("src/lib.rs#Command.get_matches@method")
    );
}

/// Fault: `context --budget 0` was silently raised to 50 tokens (and the answer then
/// reported "~59 tokens of 50"); a budget too small to honour is refused.
#[test]
fn a_budget_too_small_to_honour_is_refused() {
    let (_dir, ws) = workspace();
    let err = ws
        .context(&ContextRequest {
            query: "refund".into(),
            open_files: Vec::new(),
            budget: Some(0),
            floor: None,
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument `budget`: 0 tokens is too small: an answer needs at least 50 (its header and one index line)"
    );
    assert_eq!(ask(&ws, "refund", &[], 60).limits.budget, Some(60));
}

/// `context` keeps pages, stale marks and term statistics between questions while the
/// store's data is unchanged: a write by this workspace or by another process must show
/// in the next answer.
#[test]
fn a_long_lived_workspace_sees_the_writes_of_others_and_its_own_in_the_next_answer() {
    let (dir, mut ws) = workspace();
    let page_of = |env: &loci_engine::Envelope<loci_engine::context::ContextAnswer>, id: &str| {
        env.result.items.iter().find(|i| i.id == id).cloned()
    };
    let before = ask(&ws, "refund invoice", &[], 2_000);
    assert!(!page_of(&before, "src/billing.py").unwrap().stale);
    assert!(page_of(&before, "src/auth.py").is_none());
    // Another process edits the code, rescans, and writes memory about auth.
    write(
        dir.path(),
        "src/billing.py",
        "class Invoice:\n    def total(self):\n        return 0\n\ndef refund_invoice(invoice):\n    return None\n",
    );
    let mut other = Workspace::open(dir.path(), Some(&dir.path().join("loci.db"))).unwrap();
    other.scan(&|_| {}).unwrap();
    other
        .remember(
            "src/auth.py",
            "A refund of an invoice needs a fresh login: `login()` is checked again.",
            &by("agent:b"),
        )
        .unwrap();
    let after = ask(&ws, "refund invoice", &[], 2_000);
    assert!(page_of(&after, "src/billing.py").unwrap().stale);
    assert!(
        after.stale_warnings.iter().any(|w| w.reason
            == "memory `src/billing.py` v1 is stale: src/billing.py changed since it was written"),
        "{:?}",
        after.stale_warnings
    );
    let auth = page_of(&after, "src/auth.py").unwrap();
    assert_eq!(auth.kind, HitKind::Memory);
    // This workspace's own write: the page is rewritten for the new code, no longer stale.
    ws.remember(
        "src/billing.py",
        "Refunds go through `refund_invoice()`, which now returns None.",
        &by("agent:a"),
    )
    .unwrap();
    let own = ask(&ws, "refund invoice", &[], 2_000);
    let page = page_of(&own, "src/billing.py").unwrap();
    assert!(!page.stale, "{:?}", page.signals);
    assert!(page.text.contains("v2"), "{}", page.text);
}

/// Fault found by a fresh-user trial: the recap of recent sessions that heads every answer
/// was outside the token budget. A session begun with a 60 KB task made `context --budget
/// 100` print all of it ("~15014 tokens of 100"). The recap now quotes each task and
/// summary's first line up to `RECAP_CHARS`, and only as many sessions as fit a quarter of
/// the budget.
#[test]
fn fault_the_session_recap_ignored_the_token_budget() {
    use loci_engine::context::RECAP_CHARS;
    let (_dir, mut ws) = workspace();
    let task = format!("migrate billing {}", "x".repeat(60_000));
    let s = ws
        .session_begin(Some(&task), Some("agent:a"))
        .unwrap()
        .result;
    let answer = ask(&ws, "invoice totals", &[], 2000);
    let expected_task: String = task.chars().take(RECAP_CHARS).collect();
    assert_eq!(
        answer.result.recap,
        format!(
            "## Recent sessions\n- #{} {} (agent:a): {expected_task}…\n",
            s.session_id,
            &s.started_at[..10]
        )
    );
    assert!(answer.limits.used <= 2000, "{:?}", answer.limits);
    // A budget whose quarter cannot hold the line: no recap, and the answer says it cut.
    let small = ask(&ws, "invoice totals", &[], 100);
    assert_eq!(small.result.recap, "");
    assert!(small.limits.truncated);
    assert!(small.limits.used <= 100, "{:?}", small.limits);
}

/// Fault: a documentation section cut into several chunks scored every chunk that matched,
/// so a long section of weak matches (31% of the question, twice) outranked the function
/// that answers it (loci's own `how are FTS queries made safe` put `docs/memory.md` above
/// `fts_query`). A candidate now scores its best passage once, as the "+30 at most" rule
/// says.
#[test]
fn fault_a_long_section_scored_every_passage_it_was_cut_into() {
    let (dir, mut ws) = workspace();
    write_long_section(dir.path());
    ws.scan(&|_| {}).unwrap();
    let text = std::fs::read_to_string(dir.path().join("docs/ledger.md")).unwrap();
    let cut = loci_core::markdown::chunks(&text)
        .iter()
        .filter(|c| c.heading == "Reconciliation")
        .count();
    assert!(cut >= 2, "the section is cut into {cut} chunks");
    let answer = ask(&ws, "how does the ledger reconcile", &[], 4000).result;
    let signals = signals_of(&answer, "docs/ledger.md#Reconciliation");
    let text: Vec<&String> = signals.iter().filter(|s| s.starts_with("text (")).collect();
    assert_eq!(text.len(), 1, "{signals:?}");
    let item = answer
        .items
        .iter()
        .find(|i| i.id == "docs/ledger.md#Reconciliation")
        .unwrap();
    assert!(item.relevance <= 30.0, "{}", item.relevance);
}

/// Fault: a one-word question naming a function (`namedtuple` in the standard library)
/// ranked its definition 55th. Its 40-line docstring put it below the 50 full-text hits
/// kept per index (FTS5's BM25 normalises by length), so it had only the +15 for being
/// named, under dozens of tests whose names hold the word. A definition the question names
/// is now also its best text hit.
#[test]
fn fault_a_named_definition_with_a_long_docstring_ranked_below_its_tests() {
    let (dir, mut ws) = workspace();
    let doc = (0..40)
        .map(|i| format!("    Line {i} of the manual: options, defaults and examples.\n"))
        .collect::<String>();
    write(
        dir.path(),
        "src/frob.py",
        &format!(
            "def frobnicate(widget, depth=3):\n    \"\"\"Frobnicates a widget.\n\n{doc}    \"\"\"\n    return widget\n"
        ),
    );
    let tests = (0..60)
        .map(|i| format!("def test_frobnicate_{i}():\n    assert frobnicate({i})\n\n"))
        .collect::<String>();
    write(dir.path(), "tests/test_frob.py", &tests);
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "frobnicate", &[], 4000).result;
    assert_eq!(
        answer.items[0].id,
        "src/frob.py#frobnicate@function",
        "{:?}",
        answer.items[..3]
            .iter()
            .map(|i| (&i.id, &i.signals))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        answer.items[0].signals,
        vec![
            "text (100% of the question) +30.0",
            "named in the question (`frobnicate`) +15.0"
        ]
    );
}

/// Test code is usage, not the answer, unless the question is about tests: it has code-text
/// indexes of its own, asked only then (`loci_core::secondary`), and is then served as any
/// other code.
#[test]
fn test_code_is_served_only_when_the_question_is_about_tests() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "tests/test_billing.py",
        "def test_refund_invoice_line_items():\n    \"\"\"Refund invoice line items.\"\"\"\n    assert refund_invoice(None)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let test_key = "tests/test_billing.py#test_refund_invoice_line_items@function";
    let answer = ask(&ws, "refund invoice line items", &[], 4000).result;
    let ids: Vec<&str> = answer.items.iter().map(|i| i.id.as_str()).collect();
    assert!(!ids.contains(&test_key), "{ids:?}");
    assert!(
        ids.contains(&"src/billing.py#refund_invoice@function"),
        "{ids:?}"
    );
    let about_tests = ask(&ws, "which tests refund invoice line items", &[], 4000).result;
    let signals = signals_of(&about_tests, test_key);
    assert!(
        signals.iter().all(|s| !s.starts_with("test code")),
        "{signals:?}"
    );
}

/// Fault: a Python function served FULL showed its docstring twice, in its source and
/// again below it. The doc comment is now added only when the source does not show it (a
/// Rust `///` comment comes before the definition's first line, so it is still added).
#[test]
fn fault_a_python_docstring_was_served_twice_in_a_full_symbol() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "src/math.rs",
        "/// Adds two amounts of money.\npub fn add_amounts(a: u64, b: u64) -> u64 {\n    a + b\n}\n",
    );
    ws.scan(&|_| {}).unwrap();
    let full_text = |query: &str, id: &str| {
        let answer = ask(&ws, query, &[], 4000).result;
        answer
            .items
            .iter()
            .find(|i| i.id == id && i.tier == Tier::Full)
            .unwrap_or_else(|| panic!("{id} not served FULL: {:?}", answer.items))
            .text
            .clone()
    };
    let python = full_text("refund_invoice", "src/billing.py#refund_invoice@function");
    assert_eq!(
        python
            .matches("Refunds every line item of a paid invoice.")
            .count(),
        1,
        "{python}"
    );
    let rust = full_text("add_amounts", "src/math.rs#add_amounts@function");
    assert_eq!(
        rust.matches("Adds two amounts of money.").count(),
        1,
        "{rust}"
    );
}

/// Fault found by the issue-6 fresh-user trial: a documentation section served FULL was
/// the search snippet of its best chunk (`…stopped at its first `loci.[scan]` (…`, with
/// FTS's `[match]` marks), not the section's text, for `how does a scan resolve imports`
/// on loci's own repository. FULL now serves the chunk, once for a section of several.
#[test]
fn fault_a_doc_section_served_its_search_snippet_as_full() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let p1 = "Keys rotate on a schedule and every rotation is logged. ".repeat(40);
    let p2 = format!(
        "The rotation quota is five keys a day. {}",
        "Each rotation is audited. ".repeat(80)
    );
    let p3 = "Rotation ends here.";
    write(
        root,
        "docs/guide.md",
        &format!("# Guide\n\n## Rotation\n\n{p1}\n\n{p2}\n\n{p3}\n"),
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "rotation quota", &[], 2_000).result;
    let docs: Vec<_> = answer
        .items
        .iter()
        .filter(|i| i.id == "docs/guide.md#Rotation")
        .collect();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].tier, Tier::Full);
    assert_eq!(docs[0].signals, ["text (100% of the question) +30.0"]);
    assert_eq!(
        docs[0].text,
        format!("### Rotation (docs/guide.md:6)\n{}\n", p2.trim())
    );
}

/// Fault found by the issue-6 fresh-user trial: with a file at the repository root open
/// (`subprocess.py` in the standard library, `setup.py`, `main.py`), `decisions` and
/// `lessons` counted as its siblings (+25 relevance, their subjects have no folder), so
/// `kubernetes helm chart` did not abstain and served both logs FULL. Only pages about a
/// file or folder have a module.
#[test]
fn fault_the_decision_log_was_a_sibling_of_every_open_file_at_the_root() {
    let (dir, mut ws) = workspace();
    write(dir.path(), "setup.py", "def setup():\n    pass\n");
    ws.scan(&|_| {}).unwrap();
    ws.decide("Invoices are immutable once sent", None, &by("agent:a"))
        .unwrap();
    ws.learn("Refunds of drafts fail", None, &by("agent:a"))
        .unwrap();
    let answer = ask(&ws, "kubernetes helm chart", &["setup.py"], 2_000).result;
    // The question matches nothing, so the open file is what it is about (its outline
    // and its symbol); neither log is served.
    let items: Vec<(&str, f64, &[String])> = answer
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.score, i.signals.as_slice()))
        .collect();
    let open = ["open module setup.py +50.0".to_string()];
    assert_eq!(
        items,
        [
            ("setup.py", 50.0, &open[..]),
            ("setup.py#setup@function", 50.0, &open[..])
        ]
    );
}

/// Fault found by the issue-6 fresh-user trial: the answer's heading (which quoted the
/// whole question) and its closing line were outside the budget: `context --budget 50`
/// printed 80 tokens while reporting 50 used, and a 10 KB question printed 10 KB over any
/// budget. Both are counted now, and the heading quotes the question's first 200
/// characters.
#[test]
fn fault_the_heading_and_closing_line_of_an_answer_were_outside_its_budget() {
    let (_dir, ws) = workspace();
    for budget in [50, 60, 100, 300, 2_000] {
        let env = ask(&ws, "refund invoice line items", &[], budget);
        let printed = env.result.markdown.chars().count().div_ceil(4) as u64;
        assert!(printed <= budget, "{printed} tokens printed of {budget}");
        assert!(env.limits.used <= budget, "{:?}", env.limits);
    }
    let long = format!("refund {}", "invoice ".repeat(1_250));
    let env = ask(&ws, &long, &[], 300);
    let first: String = long.chars().take(200).collect();
    assert!(
        env.result
            .markdown
            .starts_with(&format!("## Context for `{first}…`\n")),
        "{}",
        &env.result.markdown[..300]
    );
    assert!(env.result.markdown.chars().count().div_ceil(4) as u64 <= 300);
}

/// Fault: `loci eval` wrote the case file's memory into the workspace's own database, so
/// after evaluating the stdlib set a user's `decisions` page was the set's ("v2 by
/// eval:setup"), served to agents. `eval` and `calibrate` now write it into a scratch copy;
/// the evaluation still sees it.
#[test]
fn fault_eval_wrote_the_case_files_memory_into_the_users_database() {
    let (dir, mut ws) = workspace();
    ws.decide(
        "Invoices are immutable once sent.",
        None,
        &by("human:owner"),
    )
    .unwrap();
    let cases = dir.path().join("cases.jsonl");
    std::fs::write(
        &cases,
        concat!(
            r#"{"memory": {"subject": "decisions", "body": "Refunds are approved by finance before `refund_invoice()` runs."}}"#,
            "\n",
            r#"{"id": "approval", "query": "are refunds approved by finance", "gold": ["decisions"]}"#,
            "\n",
            r#"{"id": "cake", "query": "bake a chocolate cake", "out_of_scope": true}"#,
            "\n",
        ),
    )
    .unwrap();
    let before = ws.show("decisions", None).unwrap().result.revision;
    let report = ws.eval(&cases, 5).unwrap().result;
    // The evaluation saw the set's decision (its only gold) in the first 5.
    assert_eq!(report.cases[0].loci_recall, 1.0, "{:?}", report.cases);
    ws.calibrate(&cases).unwrap();
    let after = ws.show("decisions", None).unwrap().result.revision;
    assert_eq!(after.version, before.version);
    assert_eq!(after.body, before.body);
    assert_eq!(after.author, "human:owner");
    // Written for real only when asked.
    assert_eq!(ws.write_case_memory(&cases).unwrap(), 1);
    assert_eq!(ws.write_case_memory(&cases).unwrap(), 0);
    assert_eq!(
        ws.show("decisions", None).unwrap().result.revision.author,
        "eval:setup"
    );
}

/// Fault: a floor of NaN was accepted and turned abstention off (every comparison with NaN
/// is false), and `impact` at depth 0 was refused by the CLI but answered by MCP and LSP
/// as depth 1. Both are refused by the engine, so every door says the same.
#[test]
fn fault_a_nan_floor_and_a_zero_depth_were_taken_by_some_doors() {
    let (_dir, ws) = workspace();
    let err = ws
        .context(&ContextRequest {
            query: "bake a chocolate cake".into(),
            open_files: Vec::new(),
            budget: None,
            floor: Some(f64::NAN),
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument `floor`: the floor is a number of points, not NaN"
    );
    let err = ws.impact("src/billing.py", 0, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument `depth`: the depth is at least 1 (direct dependents)"
    );
    assert_eq!(
        ws.impact("src/billing.py", 1, false).unwrap().result.depth,
        1
    );
}

/// Fault: a nested function and the function around it were both served FULL, the second
/// repeating the first's lines ("where is the json encoder's float formatting" served
/// `iterencode.floatstr`, then `iterencode`, whose source holds it). A symbol whose lines
/// an item served FULL already shows is served as a digest.
#[test]
fn fault_a_nested_function_and_its_parent_were_both_served_full() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "src/encode.py",
        "def encode_amount(value):\n    \"\"\"Encodes an amount for the ledger.\"\"\"\n    def format_amount(x):\n        \"\"\"Formats an amount for the ledger.\"\"\"\n        return '%.2f' % x\n    return format_amount(value)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "format and encode an amount for the ledger", &[], 4000).result;
    let tier_of = |id: &str| {
        answer
            .items
            .iter()
            .find(|i| i.id == id)
            .map(|i| i.tier)
            .unwrap_or_else(|| panic!("no {id} in {:?}", answer.items))
    };
    let outer = tier_of("src/encode.py#encode_amount@function");
    let inner = tier_of("src/encode.py#encode_amount.format_amount@function");
    assert!(
        (outer == Tier::Full) != (inner == Tier::Full),
        "outer {outer:?}, inner {inner:?}"
    );
}

/// Fault: after lines were added above a function and before a rescan, the function served
/// FULL showed the code at its old lines (5 lines too early, its end cut off) under its old
/// line number. The definition is now found again by its first line; when no line holds
/// it any more, the item is served as a digest rather than as other code.
#[test]
fn fault_an_edit_since_the_scan_served_other_code_at_the_symbols_old_lines() {
    let (dir, ws) = workspace();
    let path = dir.path().join("src/billing.py");
    let scanned = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("import os\nimport sys\n\n\n# Billing.\n{scanned}"),
    )
    .unwrap();
    let key = "src/billing.py#refund_invoice@function";
    let answer = ask(&ws, "refund_invoice", &[], 4000).result;
    let item = answer.items.iter().find(|i| i.id == key).unwrap();
    assert_eq!(item.tier, Tier::Full);
    assert!(
        item.text.starts_with(
            "### function refund_invoice (src/billing.py:11)\n```\ndef refund_invoice(invoice):\n"
        ),
        "{}",
        item.text
    );
    assert!(
        item.text.contains("    return -invoice.total()\n```"),
        "{}",
        item.text
    );
    // Renamed on disk: nothing holds its first line, so no source is shown for it.
    std::fs::write(&path, scanned.replace("def refund_invoice", "def refund")).unwrap();
    let answer = ask(&ws, "refund_invoice", &[], 4000).result;
    let item = answer.items.iter().find(|i| i.id == key).unwrap();
    assert_eq!(item.tier, Tier::Digest, "{}", item.text);
}

/// Fault (fresh-user trial): `search` listed a long doc section once per chunk it is
/// indexed in (four hits for one section). It is listed once, at its best chunk.
#[test]
fn fault_search_listed_a_doc_section_once_per_chunk() {
    let (dir, mut ws) = workspace();
    write_long_section(dir.path());
    ws.scan(&|_| {}).unwrap();
    let options = SearchOptions {
        kinds: vec![HitKind::Doc],
        path_prefix: None,
        limit: Some(20),
    };
    let hits = ws.search("ledger reconcile", &options).unwrap().result;
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, vec!["docs/ledger.md#Reconciliation"]);
}

/// Fault (fresh-user trial): `eval` of a file with no case lines reported abstention
/// precision 1.00 and `calibrate` of a one-sided file recommended a floor, both exit 0.
/// Each is refused, saying what the file holds.
#[test]
fn fault_eval_and_calibrate_answered_for_case_files_that_measure_nothing() {
    let (dir, mut ws) = workspace();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "// nothing yet\n").unwrap();
    let err = ws.eval(&empty, 5).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "invalid argument `cases`: {} holds no case lines",
            empty.display()
        )
    );
    let one_sided = dir.path().join("in.jsonl");
    std::fs::write(
        &one_sided,
        "{\"id\": \"a\", \"query\": \"refund invoice\", \"gold\": [\"src/billing.py\"]}\n",
    )
    .unwrap();
    let err = ws.calibrate(&one_sided).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "invalid argument `cases`: {} holds 1 in-scope and 0 out-of-scope cases: a floor separates the two, so it needs some of each",
            one_sided.display()
        )
    );
    assert_eq!(ws.eval(&one_sided, 5).unwrap().result.in_scope, 1);
}

/// Fault (trial): a search `limit` of 0 gave one hit and one of 5,000 gave a thousand, an
/// eval `k` of 0 was taken as 1, and an infinite floor was answered (`--floor inf`
/// abstained on everything and reported its floor as JSON `null`). Each is refused with
/// the argument's name, by the engine, so every door says the same.
#[test]
fn fault_a_zero_limit_a_zero_k_and_an_infinite_floor_were_changed_silently() {
    let (dir, mut ws) = workspace();
    let search = |limit| {
        ws.search(
            "invoice",
            &SearchOptions {
                limit: Some(limit),
                ..Default::default()
            },
        )
    };
    for limit in [0, 1001] {
        assert_eq!(
            search(limit).unwrap_err().to_string(),
            format!("invalid argument `limit`: {limit}: a search returns 1 to 1000 hits per kind")
        );
    }
    let kinds: Vec<HitKind> = search(1).unwrap().result.iter().map(|h| h.kind).collect();
    assert_eq!(kinds, [HitKind::Memory, HitKind::Symbol]); // one per kind that matches
    for floor in [f64::INFINITY, f64::NEG_INFINITY] {
        let err = ws
            .context(&ContextRequest {
                query: "refund an invoice".into(),
                floor: Some(floor),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid argument `floor`: {floor}: the floor is a finite number of points (a very low one, say -1000, never abstains)"
            )
        );
    }
    let cases = dir.path().join("cases.jsonl");
    write(
        dir.path(),
        "cases.jsonl",
        "{\"id\": \"a\", \"query\": \"refund an invoice\", \"gold\": [\"src/billing.py\"]}\n",
    );
    assert_eq!(
        ws.eval(&cases, 0).unwrap_err().to_string(),
        "invalid argument `k`: the cutoff k is at least 1"
    );
}

/// Fault (trial): `context --open` took a file the map does not hold (a typo) without a
/// word; the open-file points it should have given were simply missing. The answer now
/// notes each such file, and is given all the same (an editor's new unsaved file is one).
#[test]
fn fault_an_open_file_the_map_does_not_hold_was_taken_without_a_word() {
    let (_dir, ws) = workspace();
    let env = ask(
        &ws,
        "refund an invoice",
        &["src/biling.py", "src/billing.py"],
        2000,
    );
    assert_eq!(
        env.capability.notes[1..],
        [
            "open file `src/biling.py` is not in the map (no such file, ignored, or not scanned yet): only the memory of `src` and of the files in it scored open-file points"
        ]
    );
    assert!(!env.result.abstained);
}

/// Fault found by a fresh-user trial: `--open nosuch.py`, a file the map lacks at the
/// root, gave every top-level file's page the +25 of a sibling, so an unrelated question
/// that abstained without it served them all, under a note saying nothing near the file
/// had scored. At the root an unmapped file earns nothing.
#[test]
fn fault_a_mistyped_open_file_at_the_root_served_every_top_level_page() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "setup.py",
        "def setup():
    pass
",
    );
    ws.scan(&|_| {}).unwrap();
    ws.remember("setup.py", "Packaging entry point.", &by("agent:a"))
        .unwrap();
    let without = ask(&ws, "zebra quantum banana", &[], 2000).result;
    let with = ask(&ws, "zebra quantum banana", &["nosuch.py"], 2000);
    assert_eq!(
        (without.abstained, with.result.abstained),
        (true, true),
        "{:?}",
        with.result.items.iter().map(|i| &i.id).collect::<Vec<_>>()
    );
    assert_eq!(
        with.capability.notes.last().map(String::as_str),
        Some(
            "open file `nosuch.py` is not in the map (no such file, ignored, or not scanned yet), so nothing near it scored open-file points"
        )
    );
}

/// Fault (trial): `context "regex::escape"` abstained at 0.0 and `serde_json::to_string_pretty`
/// too: the map qualifies a name by its enclosing definitions (`escape`), not by its crate
/// or module. A path that names no symbol names what its last segments name, in a file
/// whose path holds the leading ones.
#[test]
fn fault_a_crate_qualified_path_named_nothing() {
    let (_dir, ws) = workspace();
    let a = ask(&ws, "billing::refund_invoice", &[], 2000).result;
    assert!(!a.abstained);
    assert_eq!(a.items[0].id, "src/billing.py#refund_invoice@function");
    assert!(
        a.items[0]
            .signals
            .iter()
            .any(|s| s == "named in the question (`billing::refund_invoice`) +15.0"),
        "{:?}",
        a.items[0].signals
    );
    // A leading segment no path holds names nothing.
    let a = ask(&ws, "payroll::refund_invoice", &[], 2000).result;
    assert!(a.items.iter().all(|i| {
        i.signals
            .iter()
            .all(|s| !s.starts_with("named in the question"))
    }));
}

/// Fault (trial): stale memory served as a DIGEST carried no stale mark (FULL and INDEX
/// did), and the answer warned about stale pages it did not serve at all.
#[test]
fn fault_a_stale_digest_had_no_mark_and_unserved_pages_were_warned_about() {
    let (dir, mut ws) = workspace();
    rewrite_billing(dir.path(), &mut ws);
    let tiers = |budget| {
        let env = ask(&ws, "refund invoice", &[], budget);
        let page = env
            .result
            .items
            .iter()
            .find(|i| i.id == "src/billing.py")
            .cloned();
        let about_page = env
            .stale_warnings
            .iter()
            .filter(|w| w.reason.starts_with("memory `src/billing.py` v1 "))
            .count();
        (page, env.stale_warnings.len(), about_page)
    };
    // A budget where the page is a digest: marked, and warned about.
    let digest = (50..400)
        .step_by(10)
        .find_map(|b| match tiers(b) {
            (Some(p), n, about) if p.tier == Tier::Digest => Some((p, n, about)),
            _ => None,
        })
        .expect("some budget serves the page as a digest");
    assert!(
        digest.0.text.starts_with("- **src/billing.py** (stale) — "),
        "{}",
        digest.0.text
    );
    // The file and the two symbols its claims name changed: three warnings, all the page's.
    assert_eq!((digest.1, digest.2), (3, 3));
    // The smallest budget leaves the page out: no warning about it.
    let (page, warnings, _) = tiers(50);
    assert!(page.is_none());
    assert_eq!(warnings, 0);
}

/// Fault (trial): a larger budget served fewer items. Three FULL bodies filled 2,000
/// tokens and left no line for the rest (1,000 tokens served seven items), and a budget
/// of 100,000 still served three bodies. Bodies now fill at most three quarters of a
/// budget, digests nine tenths, and every 1,000 tokens over 2,000 allow one more body.
#[test]
fn fault_more_budget_served_fewer_items() {
    let (dir, mut ws) = workspace();
    let body: String = (0..38)
        .map(|i| format!("    total_{i} = entry.amount * {i}\n"))
        .collect();
    for n in 0..8 {
        write(
            dir.path(),
            &format!("src/ledger_{n}.py"),
            &format!(
                "def post_ledger_entry_{n}(entry):\n    \"\"\"Posts a ledger entry.\"\"\"\n{body}    return entry\n"
            ),
        );
    }
    ws.scan(&|_| {}).unwrap();
    let served = |budget| {
        let a = ask(&ws, "post a ledger entry", &[], budget).result;
        let full = a.items.iter().filter(|i| i.tier == Tier::Full).count();
        let ledger = a
            .items
            .iter()
            .filter(|i| i.id.contains("post_ledger_entry_"))
            .count();
        (a.items.len(), full, ledger, a.tokens_estimated)
    };
    let mut last = 0;
    for budget in [500, 1000, 2000, 4000, 8000] {
        let (items, full, ledger, used) = served(budget);
        assert!(
            items >= last,
            "{budget} tokens served {items} items, fewer than {last}"
        );
        assert!(used <= budget);
        if budget >= 1000 {
            assert_eq!(ledger, 8, "{budget}: every entry function is listed");
        }
        last = items;
        if budget == 2000 {
            assert!(full <= 3);
        }
        if budget == 8000 {
            assert_eq!(full, 8, "each body fits: 3 + 6 allowed");
        }
    }
}

/// Fault (trial): `eval` credited an in-scope case whose answer abstained with the recall
/// and rank of what it had ranked, though the agent is served nothing.
#[test]
fn fault_eval_credited_an_abstained_answer_with_its_ranking() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "cases.jsonl",
        "{\"id\": \"weak\", \"query\": \"chocolate cake kubernetes helm chart staging cluster items\", \"gold\": [\"src/billing.py\"]}\n",
    );
    let report = ws.eval(&dir.path().join("cases.jsonl"), 5).unwrap().result;
    let case = &report.cases[0];
    assert!(case.abstained, "best relevance {}", case.best_relevance);
    assert_eq!((case.loci_rank, case.loci_recall), (None, 0.0));
    assert_eq!(report.systems[0].recall_at_k, Some(0.0));
    // What it ranked, had it answered: the gold file among the first five.
    let ranked = ws
        .context(&ContextRequest {
            query: "chocolate cake kubernetes helm chart staging cluster items".into(),
            floor: Some(-1000.0),
            ..Default::default()
        })
        .unwrap()
        .result;
    let gold = ranked
        .items
        .iter()
        .position(|i| i.path.as_deref() == Some("src/billing.py"));
    assert!(gold.is_some_and(|r| r < 5), "{gold:?}");
}

/// Fault (trial): a file named in the question was ignored even when it had a memory
/// page: "what should I know before editing src/number.rs" abstained, and only `--open`
/// found the page. A mapped path, or a file name only one mapped file has, counts as an
/// open file.
#[test]
fn fault_a_file_named_in_the_question_was_ignored() {
    let (_dir, ws) = workspace();
    for q in [
        "what should I know before editing src/billing.py?",
        "what should I know before editing `billing.py`",
    ] {
        let a = ask(&ws, q, &[], 2000).result;
        assert!(!a.abstained, "{q}");
        // The page first: the file's symbols that it names (+50 in the open file, +15 one
        // hop from the page) follow the memory about their file.
        let page = a
            .items
            .iter()
            .position(|i| i.kind == HitKind::Memory)
            .unwrap();
        assert_eq!(
            (a.items[page].id.as_str(), a.items[page].tier, page),
            ("src/billing.py", Tier::Full, 0),
            "{q}: {:?}",
            a.items
        );
        assert_eq!(
            a.items[page].signals,
            [
                "open module src/billing.py +50.0",
                "updated this week +10.0"
            ],
            "{q}"
        );
    }
    // A long question whose answer abstains quotes at most 200 characters of it.
    let long = format!("bake a chocolate cake {}", "and then ".repeat(200));
    let a = ask(&ws, &long, &[], 2000).result;
    assert!(a.abstained);
    assert!(a.markdown.len() < 400, "{}", a.markdown.len());
}

/// Fault (trial): an open folder was taken as a file: `--open src` gave root files +25
/// as its "siblings" and nothing to the files in it. What is in an open folder is its
/// module.
#[test]
fn fault_an_open_folder_was_taken_for_a_file() {
    let (_dir, ws) = workspace();
    let a = ask(&ws, "refund an invoice", &["src"], 2000).result;
    let page = a
        .items
        .iter()
        .find(|i| i.id == "src/billing.py")
        .expect("the page");
    assert!(
        page.signals.iter().any(|s| s == "open module src +50.0"),
        "{:?}",
        page.signals
    );
    assert!(
        a.items
            .iter()
            .all(|i| i.signals.iter().all(|s| !s.starts_with("sibling of src"))),
        "{:?}",
        a.items
    );
}

/// Fault (trial): `eval` took an in-scope case with no gold (it can only score 0) and two
/// cases with one id without a word. Both are refused with the line.
#[test]
fn fault_eval_took_cases_that_skew_its_figures_silently() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "nogold.jsonl",
        "{\"id\": \"a\", \"query\": \"refund\", \"gold\": []}\n",
    );
    write(
        dir.path(),
        "twice.jsonl",
        "{\"id\": \"a\", \"query\": \"refund\", \"gold\": [\"src/billing.py\"]}\n{\"id\": \"a\", \"query\": \"login\", \"gold\": [\"src/auth.py\"]}\n",
    );
    let mut err = |f: &str| ws.eval(&dir.path().join(f), 5).unwrap_err().to_string();
    let nogold = err("nogold.jsonl");
    assert!(
        nogold.ends_with("nogold.jsonl:1: case `a` is in scope but names no gold (give `gold`, or `out_of_scope: true`)"),
        "{nogold}"
    );
    let twice = err("twice.jsonl");
    assert!(
        twice.ends_with("twice.jsonl:2: case id `a` is used twice"),
        "{twice}"
    );
}

/// `src/tree.py`: `copy_tree`, whose docstring holds "Recursively copy a directory tree"
/// and then 40 lines of manual (long, so BM25's length normalisation ranks it low).
fn write_copy_tree(root: &Path) {
    let manual = (0..40)
        .map(|i| format!("    Line {i} of the manual: options, defaults and examples.\n"))
        .collect::<String>();
    write(
        root,
        "src/tree.py",
        &format!(
            "def copy_tree(src, dst):\n    \"\"\"Recursively copy a directory tree.\n\n{manual}    \"\"\"\n    return dst\n"
        ),
    );
}

/// Fault found by a fresh-user trial: "recursively copy a directory" did not surface
/// `shutil.copytree`, whose long docstring holds every word of the question. FTS5's BM25
/// normalises by length, so 50 short texts holding two of the three words outranked it and
/// it never became a candidate. The code's text is now indexed by file as well as by
/// chunk, and the file holding the whole question is a candidate of its own.
#[test]
fn fault_a_long_text_holding_every_word_of_the_question_was_never_retrieved() {
    let (dir, mut ws) = workspace();
    write_copy_tree(dir.path());
    let walkers = (0..60)
        .map(|i| {
            format!(
                "def walk_{i}(d):\n    \"\"\"Recursively walk directory {i}.\"\"\"\n\ndef copy_{i}(d):\n    \"\"\"Copy directory {i}.\"\"\"\n\n"
            )
        })
        .collect::<String>();
    write(dir.path(), "src/walkers.py", &walkers);
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "recursively copy a directory", &[], 4000).result;
    let first: Vec<(&str, &str)> = answer
        .items
        .iter()
        .take(3)
        .map(|i| (i.id.as_str(), i.path.as_deref().unwrap_or("")))
        .collect();
    // Retrieved, and its file second: `src/walkers.py` holds every word too, 60 times.
    assert_eq!(
        first,
        [
            ("src/walkers.py#copy_0@function", "src/walkers.py"),
            ("src/walkers.py#copy_1@function", "src/walkers.py"),
            ("src/tree.py#copy_tree@function", "src/tree.py")
        ]
    );
}

/// Fault (trial): with open files and no question, or one that matches nothing, `context`
/// abstained at 0.0 unless the files had memory pages: the open file's own symbols were
/// not candidates. Now the file (its outline: symbol count, top-level symbols, importers)
/// and its first symbols are, at the open module's +50; a file of 2,001 symbols gives 8,
/// top-level first.
#[test]
fn fault_an_open_file_and_a_question_that_matches_nothing_abstained() {
    let (dir, mut ws) = workspace();
    for q in ["what should I know before I touch this?", ""] {
        let a = ask(&ws, q, &["src/auth.py"], 2_000).result;
        assert!(!a.abstained, "{q:?}");
        assert_eq!(a.best_relevance, 50.0, "{q:?}");
        let items: Vec<(&str, HitKind, Tier, f64)> = a
            .items
            .iter()
            .map(|i| (i.id.as_str(), i.kind, i.tier, i.score))
            .collect();
        assert_eq!(
            items,
            [
                // auth.py imports billing.py, whose page is a sibling one hop away.
                ("src/billing.py", HitKind::Memory, Tier::Full, 50.0),
                ("src/auth.py", HitKind::File, Tier::Full, 50.0),
                // `check_hash` first: `login` calls it (the most referenced first).
                (
                    "src/auth.py#check_hash@function",
                    HitKind::Symbol,
                    Tier::Full,
                    50.0
                ),
                (
                    "src/auth.py#login@function",
                    HitKind::Symbol,
                    Tier::Digest,
                    50.0
                ),
                // Not the symbols the sibling page names (+15 at relevance 0); the file
                // it imports, as an index line (centrality supports, it is no evidence).
                ("src/billing.py", HitKind::File, Tier::Index, 12.0),
            ],
            "{q:?}"
        );
        if q.is_empty() {
            assert!(
                a.markdown.starts_with("## Context for the open files\n"),
                "{}",
                a.markdown
            );
        }
        assert_eq!(
            a.items[1].text,
            "### src/auth.py (open file: 2 symbols, 2 top-level)\n- `def login(user, password):` — line 3\n- `def check_hash(user, password):` — line 7\nImported by no mapped file\n"
        );
    }
    // billing.py's outline (a digest here: its page and two symbols were served FULL)
    // names its importer.
    let a = ask(&ws, "", &["src/billing.py"], 2_000).result;
    let outline = a.items.iter().find(|i| i.kind == HitKind::File).unwrap();
    assert_eq!(
        (outline.tier, outline.text.as_str()),
        (
            Tier::Digest,
            "- **src/billing.py** — open file: 3 symbols (Invoice, refund_invoice); imported by 1 file(s): src/auth.py"
        )
    );

    // 2,001 symbols: a class of 1,995 methods, then 5 functions.
    let mut big = String::from("class Big:\n");
    for i in 0..1995 {
        big.push_str(&format!("    def m{i}(self):\n        return {i}\n"));
    }
    for i in 0..5 {
        big.push_str(&format!("def f{i}():\n    return {i}\n"));
    }
    write(dir.path(), "big.py", &big);
    ws.scan(&|_| {}).unwrap();
    let env = ask(&ws, "", &["big.py"], 2_000);
    let a = &env.result;
    let items: Vec<(&str, Tier)> = a.items.iter().map(|i| (i.id.as_str(), i.tier)).collect();
    assert_eq!(
        items,
        [
            ("big.py", Tier::Full),
            ("big.py#Big@class", Tier::Full),
            ("big.py#f0@function", Tier::Full),
            ("big.py#f1@function", Tier::Digest),
            ("big.py#f2@function", Tier::Digest),
            ("big.py#f3@function", Tier::Digest),
            ("big.py#f4@function", Tier::Digest),
            ("big.py#Big.m0@method", Tier::Digest),
            ("big.py#Big.m1@method", Tier::Digest),
        ]
    );
    assert!(a.items.iter().all(|i| i.score == 50.0));
    assert_eq!(
        a.items[0].text,
        "### big.py (open file: 2001 symbols, 6 top-level)\n- `class Big:` — line 1\n- `def f0():` — line 3992\n- `def f1():` — line 3994\n- `def f2():` — line 3996\n- `def f3():` — line 3998\n- `def f4():` — line 4000\nImported by no mapped file\n"
    );
    assert_eq!((env.limits.omitted, env.limits.truncated), (0, false));
    assert!(env.limits.used <= 2_000);
    // A question that finds something is answered as before: the open file's other
    // symbols do not outrank it.
    let a = ask(&ws, "refund an invoice", &["big.py"], 2_000).result;
    assert!(
        a.items.iter().all(|i| i.path.as_deref() != Some("big.py")),
        "{:?}",
        a.items
    );
}

/// Packing gives no line, and no banner, to an item at 0 points or below, but no test held
/// such an item: here a stale page with an open contradiction (−20 −40) that matches the
/// question fully (+29.5, +10 this week) is at −20.5 and absent, while the symbol that
/// matches is served; opened, the page's +50 shows the signals that add up to it.
#[test]
fn fault_no_test_held_an_item_at_or_below_zero_points() {
    let (dir, mut ws) = workspace();
    ws.remember(
        "docs/billing.md",
        "A draft refund is refused; see `src/gone.py`.",
        &by("agent:a"),
    )
    .unwrap();
    write(
        dir.path(),
        "docs/billing.md",
        "# Billing\n\nInvoices are totalled.\n",
    );
    ws.scan(&|_| {}).unwrap();
    ws.lint().unwrap();
    let opened = ask(&ws, "refund a draft", &["docs/billing.md"], 2_000).result;
    let page = opened
        .items
        .iter()
        .find(|i| i.id == "docs/billing.md")
        .unwrap();
    assert_eq!(
        page.signals,
        [
            "text (100% of the question) +29.5",
            "open module docs/billing.md +50.0",
            "updated this week +10.0",
            "stale -20.0",
            "open contradictions -40.0"
        ]
    );
    assert_eq!(format!("{:.3}", page.score), "29.508");
    assert_eq!(opened.banners.len(), 1);

    let env = ask(&ws, "refund a draft", &[], 2_000);
    let a = &env.result;
    let items: Vec<(&str, Tier, String)> = a
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.tier, format!("{:.3}", i.score)))
        .collect();
    assert_eq!(
        items,
        [
            ("src/billing.py", Tier::Full, "46.695".to_string()),
            (
                "src/billing.py#refund_invoice@function",
                Tier::Full,
                "23.368".to_string()
            ),
            // Named by the page that holds the question: relevant through it.
            (
                "src/billing.py#Invoice.total@method",
                Tier::Full,
                "15.000".to_string()
            ),
        ]
    );
    assert!(!a.markdown.contains("docs/billing.md"), "{}", a.markdown);
    assert!(a.banners.is_empty(), "{:?}", a.banners);
    assert!(
        env.stale_warnings
            .iter()
            .all(|w| !w.reason.contains("docs/billing.md"))
    );
}

/// Fault (trial): the +25 of `decisions` and `lessons` went to any such page over the
/// floor, so a lessons page sharing one common word with the question (36% of it, +10.8)
/// came first at 45.8, above the page that answers it (+30, 40.0); the lessons page now
/// scores 9.75 (33% of the question, below the floor, so no boost). The boost now asks for
/// full-text points of at least half the best's, or a claim linking the page to an open
/// file or a named symbol.
#[test]
fn fault_the_lessons_boost_put_a_page_sharing_one_word_first() {
    let (_dir, mut ws) = workspace();
    ws.remember(
        "docs/billing.md",
        "A session timeout logs the user out after 15 minutes.",
        &by("agent:a"),
    )
    .unwrap();
    ws.learn("Clearing a session drops its cart.", None, &by("agent:a"))
        .unwrap();
    let a = ask(&ws, "what is the session timeout", &[], 2_000).result;
    let items: Vec<(&str, String, &[String])> = a
        .items
        .iter()
        .map(|i| {
            (
                i.id.as_str(),
                format!("{:.2}", i.score),
                i.signals.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        items,
        [
            (
                "docs/billing.md",
                "40.00".to_string(),
                &[
                    "text (100% of the question) +30.0".to_string(),
                    "updated this week +10.0".to_string()
                ][..]
            ),
            (
                "lesson:1",
                "9.75".to_string(),
                &["text (33% of the question) +9.8".to_string()][..]
            ),
            (
                "src/auth.py#login@function",
                "8.37".to_string(),
                &["code (28% of the question; file text #1, code chunks #1) +8.4".to_string()][..]
            ),
        ]
    );
    // A lesson naming a symbol of the open file links the page to it: boosted.
    ws.learn("`check_hash()` is slow; cache it.", None, &by("agent:a"))
        .unwrap();
    let a = ask(&ws, "what is the session timeout", &["src/auth.py"], 2_000).result;
    let lessons = a.items.iter().find(|i| i.id == "lesson:2").unwrap();
    assert!(
        lessons.signals.iter().any(|s| s == "lessons +25.0"),
        "{:?}",
        lessons.signals
    );
}

/// Fault (trial): `search --path server/core` also matched `server/core2/…`: the filter
/// was a string prefix. It is a path: the path itself or what is under `prefix/`, with or
/// without the trailing `/`, for memory, symbols and docs alike.
#[test]
fn fault_search_path_was_a_string_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for folder in ["server/core", "server/core2"] {
        write(
            root,
            &format!("{folder}/lib.py"),
            "def parse_config(text):\n    return text\n",
        );
        write(
            root,
            &format!("{folder}/README.md"),
            "# Config\n\nparse_config reads the file.\n",
        );
    }
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    for folder in ["server/core", "server/core2"] {
        ws.remember(
            &format!("{folder}/lib.py"),
            "`parse_config()` takes the whole file.",
            &by("agent:a"),
        )
        .unwrap();
    }
    let ids = |path: Option<&str>| -> Vec<(HitKind, String)> {
        let options = SearchOptions {
            path_prefix: path.map(str::to_string),
            ..Default::default()
        };
        let mut ids: Vec<(HitKind, String)> = ws
            .search("parse_config", &options)
            .unwrap()
            .result
            .into_iter()
            .map(|h| (h.kind, h.id))
            .collect();
        ids.sort();
        ids
    };
    let core = [
        (HitKind::Memory, "server/core/lib.py".to_string()),
        (
            HitKind::Symbol,
            "server/core/lib.py#parse_config@function".to_string(),
        ),
        (HitKind::Doc, "server/core/README.md#Config".to_string()),
    ];
    assert_eq!(ids(Some("server/core")), core);
    assert_eq!(ids(Some("server/core/")), core);
    assert_eq!(ids(Some("./server/core")), core);
    // The path of one file is a filter too; a partial component matches nothing.
    assert_eq!(ids(Some("server/core/lib.py")), core[..2]);
    let partial = SearchOptions {
        path_prefix: Some("server/cor".into()),
        ..Default::default()
    };
    match ws.search("parse_config", &partial) {
        Err(loci_engine::EngineError::NotFound(m)) => {
            assert!(m.starts_with("`server/cor`: no file or folder"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ids(Some("server")).len(), 6);
    assert_eq!(ids(Some(".")), ids(None));
}

/// Fault found by a fresh-user trial: "parse a URL" with `urllib/parse.py` open served
/// only test code: `urlparse`, whose docstring holds the whole question, ranked below 50
/// shorter texts across the repository, so it never became a candidate and its +50 as
/// part of the open file was never given. The code's own text is indexed now, by file and
/// by chunk: the file holding the question is found with or without the open file.
#[test]
fn fault_an_open_files_definition_matching_the_question_was_never_a_candidate() {
    let (dir, mut ws) = workspace();
    write_copy_tree(dir.path());
    let others = (0..60)
        .map(|i| format!("def copy_{i}(d):\n    \"\"\"Recursively copy directory {i}.\"\"\"\n\n"))
        .collect::<String>();
    write(dir.path(), "tests/test_copies.py", &others);
    ws.scan(&|_| {}).unwrap();
    // The code-text index finds it without the open file: its file holds every word.
    let without = ask(&ws, "recursively copy a directory", &[], 4000).result;
    assert_eq!(
        without.items.first().map(|i| i.id.as_str()),
        Some("src/tree.py#copy_tree@function")
    );
    let with = ask(&ws, "recursively copy a directory", &["src/tree.py"], 4000).result;
    assert_eq!(
        (with.items[0].id.as_str(), with.items[0].signals.clone()),
        (
            "src/tree.py#copy_tree@function",
            vec![
                "code (100% of the question; file text #1, code chunks #1) +30.0".to_string(),
                "open module src/tree.py +50.0".to_string()
            ]
        )
    );
}

/// Fault found by a fresh-user trial: `context --open shutil.py` with no question served
/// `_WINDOWS`, `posix` and `COPY_BUFSIZE` as the file's main symbols (its first ones in
/// source order), not `copytree` or `rmtree`. Public definitions come first now, the most
/// referenced first; the outline stays in source order.
#[test]
fn fault_an_open_files_main_symbols_were_its_first_private_constants() {
    let (dir, mut ws) = workspace();
    let mut text = String::new();
    for i in 0..10 {
        text.push_str(&format!(
            "_PRIVATE_{i} = {i}
"
        ));
    }
    text.push_str(
        "def _inner():\n    return 2\n\ndef copy_all():\n    return helper()\n\ndef helper():\n    return 1\n",
    );
    write(dir.path(), "src/tools.py", &text);
    write(
        dir.path(),
        "src/use.py",
        "from src.tools import copy_all, helper\n\ndef run():\n    return copy_all() + helper()\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "", &["src/tools.py"], 2_000).result;
    let symbols: Vec<&str> = a
        .items
        .iter()
        .filter(|i| i.kind == HitKind::Symbol && i.id.starts_with("src/tools.py#"))
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(
        symbols[..3],
        [
            "src/tools.py#helper@function",
            "src/tools.py#copy_all@function",
            "src/tools.py#_inner@function"
        ]
    );
}

/// A fixture where BM25 prefers the tests: a test class whose name holds the question's
/// words gives every one of its 30 methods those words in a short text, and the code they
/// test holds them only in its doc comment, too far apart to be a phrase.
fn write_split_tests(root: &Path) {
    write(
        root,
        "src/urls.py",
        "def divide(text):\n    \"\"\"Split the given text, which holds one web address, into its parts.\"\"\"\n    return text.split('/')\n",
    );
    let methods = (0..30)
        .map(|i| format!("    def test_case_{i}(self):\n        assert divide('{i}')\n\n"))
        .collect::<String>();
    write(
        root,
        "tests/test_urls.py",
        &format!("class SplitAddressTest:\n{methods}"),
    );
}

/// Fault found by a fresh-user trial: on the stdlib, "parse a URL" with no open file served
/// 12 methods of `test/test_urlparse.py`'s `UrlParseTestCase` (every method carries the
/// class's words in a short text, so BM25 ranked them first) before `urllib/parse.py`: the
/// 5 points off test code were less than what a better BM25 rank is worth (30 at rank 0,
/// 22.5 at rank 20). Each ranked list of the code retrieval puts test code after the rest
/// (`loci_engine::retrieve`), so the code under test comes first in each, and fused; a
/// question about tests still gets the tests first.
#[test]
fn fault_tests_outranked_the_code_under_test_on_their_shorter_texts() {
    let (dir, mut ws) = workspace();
    write_split_tests(dir.path());
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "split an address", &[], 4000).result;
    assert_eq!(
        (answer.items[0].id.as_str(), answer.items[0].signals.clone()),
        (
            "src/urls.py#divide@function",
            vec!["code (100% of the question; file text #1, code chunks #1) +30.0".to_string()]
        ),
        "{:?}",
        answer.items[..3]
            .iter()
            .map(|i| (&i.id, &i.signals))
            .collect::<Vec<_>>()
    );
    let about_tests = ask(&ws, "tests that split an address", &[], 4000).result;
    assert!(
        about_tests.items[0]
            .id
            .starts_with("tests/test_urls.py#SplitAddressTest"),
        "{:?}",
        about_tests.items[..3]
            .iter()
            .map(|i| (&i.id, &i.signals))
            .collect::<Vec<_>>()
    );
}

/// Examples and vendored code are left out as tests are, unless the question names them.
#[test]
fn examples_and_vendored_code_are_served_only_when_the_question_names_them() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "examples/refunds.py",
        "def refund_invoice_line_items():\n    \"\"\"Refund invoice line items.\"\"\"\n",
    );
    write(
        dir.path(),
        "vendor/billing/refund.py",
        "def refund_invoice_line_items():\n    \"\"\"Refund invoice line items.\"\"\"\n",
    );
    ws.scan(&|_| {}).unwrap();
    let example = "examples/refunds.py#refund_invoice_line_items@function";
    let vendored = "vendor/billing/refund.py#refund_invoice_line_items@function";
    let answer = ask(&ws, "refund invoice line items", &[], 4000).result;
    let ids: Vec<&str> = answer.items.iter().map(|i| i.id.as_str()).collect();
    assert!(
        !ids.contains(&example) && !ids.contains(&vendored),
        "{ids:?}"
    );
    let asked = ask(&ws, "an example that refunds invoice line items", &[], 4000).result;
    let signals = signals_of(&asked, example);
    assert!(
        signals.iter().all(|s| !s.starts_with("example code")),
        "{signals:?}"
    );
    // The vendored copy is in the same index, after the examples asked for.
    let signals = signals_of(&asked, vendored);
    assert!(
        signals.contains(
            &"vendored code, and the question is not about vendored code -5.0".to_string()
        ),
        "{signals:?}"
    );
}

/// Fault found by a fresh-user trial: a definition whose doc comment quotes the question
/// nearly verbatim was never served: its name holds none of the words, and 30 shorter
/// definitions named `socket_open_…` (the words, out of order) ranked above it in BM25.
/// The code's own text is indexed now (doc comments among it), by file and by chunk: the
/// definition is served with the whole question. (In a repository of four files, BM25
/// gives words found in half of them no weight, so `login`'s "opens" ranks first.)
#[test]
fn fault_a_doc_comment_quoting_the_question_did_not_rank_first() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "src/net.py",
        "def connect(host, port, retries=3, timeout=10.0):\n    \"\"\"Open a socket to the host and wait until it accepts; retry with backoff, then give up.\"\"\"\n    return None\n",
    );
    let others = (0..30)
        .map(|i| format!("def socket_open_{i}():\n    return {i}\n\n"))
        .collect::<String>();
    write(dir.path(), "src/pool.py", &others);
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "how do I open a socket?", &[], 4000).result;
    let connect = answer
        .items
        .iter()
        .position(|i| i.id == "src/net.py#connect@function");
    assert_eq!(
        (connect, answer.items.get(3).map(|i| i.signals.clone())),
        (
            Some(3),
            Some(vec![
                "code (100% of the question; file text #3, code chunks #3) +29.0".to_string()
            ])
        ),
        "{:?}",
        answer.items[..4]
            .iter()
            .map(|i| (&i.id, &i.signals))
            .collect::<Vec<_>>()
    );
    // Any text is a valid phrase query: quotes, FTS5 operators, column filters.
    for q in [
        r#"open "a" socket"#,
        "open NEAR(socket, 2)",
        "doc : open socket",
        "open* ^socket -x {terms}",
    ] {
        ask(&ws, q, &[], 4000);
    }
}

/// Fault found by a fresh-user trial: `context --open email/nosuch.py` with no question (a
/// file the map lacks, in a mapped folder) served the root page `.` first: the missing file
/// counted as an open file, whose parent folders (the root among them) score +25. It is
/// not an open file now: only its folder's memory and that of the files beside it score,
/// and the answer's markdown says so; with neither, the answer abstains.
#[test]
fn fault_a_nonexistent_open_file_served_the_root_page() {
    let (_dir, mut ws) = workspace();
    ws.remember(
        ".",
        "The project bills customers and logs them in.",
        &by("agent:a"),
    )
    .unwrap();
    let a = ask(&ws, "", &["src/nosuch.py"], 2000);
    let ids: Vec<&str> = a.result.items.iter().map(|i| i.id.as_str()).collect();
    // The page beside it; not the symbols that page names (relevant only through the
    // page, whose own text holds no question, they are not lifted).
    assert_eq!(ids, ["src/billing.py"], "{:?}", a.result.items);
    assert_eq!(
        a.result.items[0].signals,
        [
            "beside the open file src/nosuch.py (not in the map) +25.0",
            "updated this week +10.0"
        ]
    );
    let note = "open file `src/nosuch.py` is not in the map (no such file, ignored, or not scanned yet): only the memory of `src` and of the files in it scored open-file points";
    assert!(
        a.result.markdown.contains(&format!("> note: {note}\n")),
        "{}",
        a.result.markdown
    );
    assert_eq!(a.capability.notes.last().map(String::as_str), Some(note));
    // A folder with no memory of its own or of its files: nothing to serve.
    let b = ask(&ws, "", &["docs/nosuch.md"], 2000).result;
    assert!(b.abstained, "{:?}", b.items);
    assert!(
        b.markdown.contains("> note: open file `docs/nosuch.md`"),
        "{}",
        b.markdown
    );
}

/// Fault found by a fresh-user trial: with a file open and a question that matches
/// nothing, the page about the file led the answer while fresh, but once stale (−20) it
/// fell below its file's outline and constants, served last as a one-line digest: the
/// page the reader must see, and fix, first. An open file's outline and main symbols now
/// never outrank a stale or contradicted page about it.
#[test]
fn fault_a_stale_page_about_the_open_file_fell_below_its_own_symbols() {
    let (dir, mut ws) = workspace();
    rewrite_billing(dir.path(), &mut ws);
    let a = ask(
        &ws,
        "what should I know before I touch this?",
        &["src/billing.py"],
        2_000,
    )
    .result;
    let items: Vec<(&str, HitKind, Tier, f64, bool)> = a
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.kind, i.tier, i.score, i.stale))
        .collect();
    // 50 (open module) + 10 (updated this week) − 20 (stale) = 40: the outline and the
    // symbols at the open module's 50 are brought down to it, and follow it.
    assert_eq!(
        items[..3],
        [
            ("src/billing.py", HitKind::Memory, Tier::Full, 40.0, true),
            ("src/billing.py", HitKind::File, Tier::Full, 40.0, false),
            (
                "src/billing.py#Invoice@class",
                HitKind::Symbol,
                Tier::Full,
                40.0,
                false
            ),
        ],
        "{items:#?}"
    );
}

/// Fault (README's first command on loci's own repository): the answer to "how does a
/// scan resolve imports" led with a test whose doc comment quotes that question, lifted
/// by the phrase bonus above the code that resolves imports. Test code is served only to
/// a question about tests.
#[test]
fn fault_a_test_quoting_the_question_led_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/scan.rs",
        "/// Resolves the imports a scan found: each module path to the file it names.\npub fn resolve_imports(paths: &[String]) -> usize {\n    paths.len()\n}\n",
    );
    write(
        root,
        "tests/answers.rs",
        "/// Pins the answer to `how does a scan resolve imports` on a small tree.\n#[test]\nfn answer_is_pinned() {\n    assert_eq!(1, 1);\n}\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "how does a scan resolve imports", &[], 2_000).result;
    let ids: Vec<&str> = answer.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids[0], "src/scan.rs#resolve_imports@function", "{ids:?}");
    assert!(
        !ids.contains(&"tests/answers.rs#answer_is_pinned@function"),
        "the question is not about tests: {ids:?}"
    );
}

/// Fault (fresh-user trial): after a rename, a page's claim on the old name still gave the
/// old key "named by memory" +15, and `context` listed a symbol the map no longer has,
/// not marked stale. Symbol items are only what the map holds.
#[test]
fn fault_a_renamed_symbol_that_memory_names_was_listed_as_live() {
    let (dir, mut ws) = workspace();
    let root = dir.path();
    let before = ask(&ws, "refund a paid invoice", &[], 5_000).result;
    assert!(
        before
            .items
            .iter()
            .any(|i| i.id == "src/billing.py#refund_invoice@function"),
        "{:?}",
        before.items.iter().map(|i| &i.id).collect::<Vec<_>>()
    );
    write(
        root,
        "src/billing.py",
        "class Invoice:\n    \"\"\"An invoice with line items and a total.\"\"\"\n    def total(self):\n        return sum(i.amount for i in self.items)\n\ndef reverse_invoice(invoice):\n    \"\"\"Refunds every line item of a paid invoice.\"\"\"\n    return -invoice.total()\n",
    );
    ws.scan(&|_| {}).unwrap();
    let after = ask(&ws, "refund a paid invoice", &[], 5_000).result;
    let ids: Vec<&str> = after.items.iter().map(|i| i.id.as_str()).collect();
    assert!(
        !ids.contains(&"src/billing.py#refund_invoice@function"),
        "{ids:?}"
    );
    assert!(
        ids.contains(&"src/billing.py#reverse_invoice@function"),
        "{ids:?}"
    );
}

/// Fault found by a fresh-user trial: `search --path srv/` (for `src/`) answered "nothing
/// matches", as if the words had found nothing. A path naming no mapped file or folder
/// and no memory's subject is named as the fault; memory about a file since deleted
/// keeps its path searchable.
#[test]
fn fault_a_path_filter_naming_nothing_said_nothing_matches() {
    let (dir, mut ws) = workspace();
    let under = |p: &str| SearchOptions {
        path_prefix: Some(p.into()),
        ..Default::default()
    };
    match ws.search("refund", &under("srv/")) {
        Err(loci_engine::EngineError::NotFound(m)) => assert_eq!(
            m,
            "`srv`: no file or folder of that path in the map, and no memory about one \
             (misspelt, not scanned, ignored, or skipped)"
        ),
        other => panic!("{other:?}"),
    }
    // A real folder with no match is an empty answer, not an error.
    assert!(ws.search("zebra", &under("src")).unwrap().result.is_empty());
    // The file is deleted: its memory is still found under its path.
    std::fs::remove_file(dir.path().join("src/billing.py")).unwrap();
    ws.scan(&|_| {}).unwrap();
    let ids: Vec<String> = ws
        .search("refund", &under("src/billing.py"))
        .unwrap()
        .result
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(ids, ["src/billing.py"]);
}

/// Fault from a fresh-user trial: `remember` printed what a claim fails (missing_path
/// [high]), yet `context` served the page first, in full, with no banner and no −40 until
/// someone ran `loci lint`. The write now records its claims' findings as lint records
/// them, so the contradiction is open at once; lint then finds nothing new, and a
/// revision that corrects the page resolves it at once too.
#[test]
fn fault_memory_a_write_knew_was_false_was_served_without_a_banner_until_lint() {
    let (_dir, mut ws) = workspace();
    let written = ws
        .remember(
            "src/auth.py",
            "`login()` asks `src/mfa/totp.py` for a second factor, then calls `check_hash()`.",
            &by("agent:a"),
        )
        .unwrap()
        .result;
    let findings: Vec<(&str, &str)> = written
        .claims
        .iter()
        .filter_map(|c| Some((c.target.as_str(), c.finding.as_ref()?.kind.as_str())))
        .collect();
    assert_eq!(findings, [("src/mfa/totp.py", "missing_path")]);
    // No lint has run.
    let a = ask(&ws, "what does login check", &["src/auth.py"], 2_000).result;
    assert_eq!(
        a.banners,
        [
            "⚠ memory `src/auth.py` has 1 open contradiction(s) with the code; verify before relying on it (`loci lint`)"
        ]
    );
    let page = a.items.iter().find(|i| i.id == "src/auth.py").unwrap();
    assert_eq!(page.contradictions, 1);
    assert_eq!(
        page.signals.last().map(String::as_str),
        Some("open contradictions -40.0")
    );
    // Lint records the same contradiction: nothing new is opened.
    let report = ws.lint().unwrap().result;
    assert_eq!(
        (report.opened, report.resolved, report.contradictions.len()),
        (0, 0, 1)
    );
    // A revision without the false claim resolves it, again without lint.
    ws.remember(
        "src/auth.py",
        "`login()` calls `check_hash()`.",
        &by("agent:a"),
    )
    .unwrap();
    let a = ask(&ws, "what does login check", &["src/auth.py"], 2_000).result;
    assert!(a.banners.is_empty(), "{:?}", a.banners);
    let page = a.items.iter().find(|i| i.id == "src/auth.py").unwrap();
    assert_eq!(page.contradictions, 0);
    let open = loci_store::audit::contradictions(ws.store().conn(), Some("open")).unwrap();
    assert!(open.is_empty(), "{open:?}");
}

/// Fault from a fresh-user trial: a page relevant through anything but the question's
/// words (here the open file's sibling, +25; there one shared word, "before") lifted every
/// symbol it names by +15 ("named by memory"), at relevance 0, into the answer above what
/// the question found, though boosts never lift an item that is not relevant on its own.
#[test]
fn fault_symbols_named_by_a_page_were_lifted_at_relevance_zero() {
    let (_dir, ws) = workspace();
    let a = ask(
        &ws,
        "what should I know before changing login",
        &["src/auth.py"],
        2_000,
    )
    .result;
    // The symbols served: what the question found and the open file's own; not the two
    // that the sibling file's page names (they would score 15 at relevance 0).
    let symbols: Vec<(&str, String, String)> = a
        .items
        .iter()
        .filter(|i| i.kind == HitKind::Symbol)
        .map(|i| {
            (
                i.id.as_str(),
                format!("{:.1}", i.score),
                format!("{:.1}", i.relevance),
            )
        })
        .collect();
    assert_eq!(
        symbols,
        [
            ("src/auth.py#login@function", "53.4".into(), "53.4".into()),
            (
                "src/auth.py#check_hash@function",
                "50.0".into(),
                "50.0".into()
            ),
        ]
    );
    // The page itself is still served, as a sibling of the open file.
    assert_eq!(
        signals_of(&a, "src/billing.py"),
        [
            "sibling of src/auth.py +25.0",
            "one import hop from a top result +15.0",
            "updated this week +10.0"
        ]
    );
}

/// Fault from a fresh-user trial: a class whose name starts with an acronym (`URLError`,
/// `HTTPConnection`, `JSONDecoder`) was not taken as a symbol the question names — only a
/// lower-case letter before an upper-case one made a word an identifier — so "what does
/// URLError mean" ranked `urllib/error.py#URLError@class` 24th.
#[test]
fn fault_a_class_name_starting_with_an_acronym_was_not_named_in_the_question() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "src/net.py",
        "class URLError(OSError):\n    \"\"\"Raised when a URL cannot be opened.\"\"\"\n\nclass HTTPConnection:\n    \"\"\"One connection to an HTTP server.\"\"\"\n",
    );
    ws.scan(&|_| {}).unwrap();
    for (q, key, name) in [
        (
            "what does URLError mean",
            "src/net.py#URLError@class",
            "URLError",
        ),
        (
            "is an HTTPConnection shared",
            "src/net.py#HTTPConnection@class",
            "HTTPConnection",
        ),
    ] {
        let a = ask(&ws, q, &[], 2_000).result;
        assert_eq!(a.items[0].id, key, "{q}");
        assert!(
            signals_of(&a, key).contains(&format!("named in the question (`{name}`) +15.0")),
            "{q}: {:?}",
            signals_of(&a, key)
        );
    }
    // Plurals of acronyms are words, not names.
    assert_eq!(
        loci_engine::context::search::identifier_tokens("which URLs and APIs does HTTPS use"),
        Vec::<String>::new()
    );
}

/// Fault from a fresh-user trial: a decision whose claim resolves to the open file
/// (`loci decide "…" --subject http/client.py`) was absent from `context --open
/// http/client.py`, whose answer was padded with unrelated files at "import-graph
/// centrality" instead: the decision log was not a candidate there, and its +25 asked for
/// a relevance that an open file alone never gave it. Memory about the open file — its
/// page, and decisions and lessons whose claims resolve into it — now comes first.
#[test]
fn fault_a_decision_about_the_open_file_was_not_served_with_it() {
    let (_dir, mut ws) = workspace();
    ws.decide(
        "Invoices are never refunded twice",
        Some("src/billing.py"),
        &by("agent:a"),
    )
    .unwrap();
    let a = ask(&ws, "", &["src/billing.py"], 1_500).result;
    let items: Vec<(&str, HitKind, Tier, String)> = a
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.kind, i.tier, format!("{:.1}", i.score)))
        .collect();
    assert_eq!(
        items,
        [
            ("decision:1", HitKind::Memory, Tier::Full, "60.0".into()),
            ("src/billing.py", HitKind::Memory, Tier::Full, "60.0".into()),
            (
                "src/billing.py#refund_invoice@function",
                HitKind::Symbol,
                Tier::Full,
                "60.0".into()
            ),
            (
                "src/billing.py#Invoice.total@method",
                HitKind::Symbol,
                Tier::Digest,
                "60.0".into()
            ),
            ("src/billing.py", HitKind::File, Tier::Digest, "50.0".into()),
            (
                "src/billing.py#Invoice@class",
                HitKind::Symbol,
                Tier::Digest,
                "50.0".into()
            ),
        ]
    );
    assert_eq!(
        a.items[0].signals,
        [
            "a claim about an open file +25.0",
            "decisions +25.0",
            "updated this week +10.0"
        ]
    );
    assert!(
        a.items[0]
            .text
            .contains("Invoices are never refunded twice")
    );
    // A decision about another file is not about this one.
    let other = ask(&ws, "", &["src/auth.py"], 1_500).result;
    assert!(
        other.items.iter().all(|i| i.id != "decision:1"),
        "{:?}",
        other.items
    );
}

/// A package shaped like the stdlib's `logging`: a handlers module with a camelCase method.
fn logging_workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "logging/__init__.py",
        "class Handler:\n    def acquire(self):\n        pass\n",
    );
    write(
        root,
        "logging/handlers.py",
        "from logging import Handler\n\nclass RotatingFileHandler(Handler):\n    def doRollover(self):\n        pass\n\n    def shouldRollover(self, record):\n        return False\n",
    );
    write(
        root,
        "http/client.py",
        "class HTTPConnection:\n    def request(self, method, url):\n        pass\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    (dir, ws)
}

/// Fault (fresh-user trial): a lesson quoting `RotatingFileHandler.doRollover()` word for
/// word was not served for "doRollover" nor "RotatingFileHandler.doRollover", and
/// `search rollover --kind memory` found nothing: questions split identifiers (`do` +
/// `rollover`), memory bodies were indexed unsplit (`dorollover`). Memory and docs now
/// carry the symbols' identifier-aware terms.
#[test]
fn fault_memory_quoting_a_camel_case_name_was_not_found_by_its_words() {
    let (_dir, mut ws) = logging_workspace();
    ws.learn(
        "Call `RotatingFileHandler.doRollover()` only while holding the handler lock (`Handler.acquire()`)",
        None,
        &by("human:a"),
    )
    .unwrap();
    for q in ["doRollover", "RotatingFileHandler.doRollover", "rollover"] {
        let a = ask(&ws, q, &[], 2_000).result;
        assert!(!a.abstained, "{q}: {}", a.markdown);
        assert!(
            a.items
                .iter()
                .any(|i| i.kind == HitKind::Memory && i.id == "lesson:1"),
            "{q}: {:?}",
            a.items.iter().map(|i| &i.id).collect::<Vec<_>>()
        );
    }
    let memory = |q: &str| -> Vec<String> {
        ws.search(
            q,
            &SearchOptions {
                kinds: vec![HitKind::Memory],
                ..Default::default()
            },
        )
        .unwrap()
        .result
        .into_iter()
        .map(|h| h.id)
        .collect()
    };
    assert_eq!(memory("rollover"), ["lesson:1"]);
    assert_eq!(memory("doRollover"), ["lesson:1"]);
    assert_eq!(memory("do_rollover"), ["lesson:1"]);
    assert_eq!(memory("RotatingFileHandler.doRollover"), ["lesson:1"]);
    assert_eq!(memory("rotating handler"), ["lesson:1"]);
}

/// Fault (fresh-user trial): `decide … --subject logging` (a folder) wrote "(about
/// `logging`)", which is no path claim, so the decision was linked to nothing: `why
/// logging/handlers.py:1`, `context --open logging/handlers.py` and `search --path
/// logging` never found it. The subject of a decision or lesson is now a claim.
#[test]
fn fault_a_decision_about_a_folder_was_linked_to_nothing() {
    let (_dir, mut ws) = logging_workspace();
    let written = ws
        .decide(
            "Handlers must never block the caller thread",
            Some("logging"),
            &by("human:a"),
        )
        .unwrap();
    let _ = written;
    let shown = ws.show("decisions", None).unwrap().result;
    assert_eq!(
        shown.revision.body,
        "# Decisions\n\n- Handlers must never block the caller thread (about `logging/`) — human:a\n"
    );
    let why = ws.why("logging/handlers.py:1").unwrap().result;
    assert_eq!(
        (why.subject.as_str(), why.matched_by.as_str()),
        ("decision:1", "folder")
    );
    let why = ws.why("logging").unwrap().result;
    assert_eq!(
        (why.subject.as_str(), why.matched_by.as_str()),
        ("decision:1", "folder")
    );
    let a = ask(&ws, "", &["logging/handlers.py"], 2_000).result;
    let decisions = a
        .items
        .iter()
        .find(|i| i.id == "decision:1")
        .unwrap_or_else(|| panic!("{}", a.markdown));
    assert!(
        decisions
            .signals
            .iter()
            .any(|s| s.contains("a claim about an open file")),
        "{:?}",
        decisions.signals
    );
    // Not for a file elsewhere.
    let other = ask(&ws, "", &["http/client.py"], 2_000).result;
    assert!(
        !other.items.iter().any(|i| i.id == "decision:1"),
        "{}",
        other.markdown
    );
    let at = |p: &str| -> Vec<String> {
        ws.search(
            "block caller",
            &SearchOptions {
                kinds: vec![HitKind::Memory],
                path_prefix: Some(p.into()),
                ..Default::default()
            },
        )
        .unwrap()
        .result
        .into_iter()
        .map(|h| h.id)
        .collect()
    };
    assert_eq!(at("logging"), ["decision:1"]);
    assert_eq!(at("logging/handlers.py"), ["decision:1"]);
    assert_eq!(at("http"), Vec::<String>::new());
    // A file subject is written as it is, a claim already.
    ws.learn(
        "Rollover renames files",
        Some("logging/handlers.py"),
        &by("human:a"),
    )
    .unwrap();
    let lessons = ws.show("lessons", None).unwrap().result;
    assert!(
        lessons
            .revision
            .body
            .contains("Rollover renames files (about `logging/handlers.py`)"),
        "{}",
        lessons.revision.body
    );
}

/// Fault (fresh-user trial): `eval` took wrong case files silently: unknown keys
/// (`open_file`, `out_of_scop`) were ignored, a case with both `gold` and `out_of_scope:
/// true` was taken (its gold dropped), a case without `id` was reported as `id: ""`; and
/// undefined figures printed as numbers (recall and MRR 0.000 without in-scope cases,
/// abstention precision 1.00 without abstentions). Such files are refused with file:line
/// and what is wrong; undefined figures are `null` and "n/a".
#[test]
fn fault_eval_accepted_wrong_case_files_and_printed_undefined_figures() {
    let (dir, mut ws) = workspace();
    let cases = [
        (
            "typo.jsonl",
            "{\"id\": \"a\", \"query\": \"refund\", \"gold\": [\"src/billing.py\"]}\n{\"id\": \"b\", \"query\": \"refund\", \"open_file\": [\"src/billing.py\"], \"gold\": [\"src/billing.py\"]}\n",
            "typo.jsonl:2: unknown field `open_file`, expected one of `id`, `query`, `open_files`, `gold`, `out_of_scope`",
        ),
        (
            "scop.jsonl",
            "{\"id\": \"cake\", \"query\": \"bake a cake\", \"out_of_scop\": true}\n",
            "scop.jsonl:1: unknown field `out_of_scop`, expected one of `id`, `query`, `open_files`, `gold`, `out_of_scope`",
        ),
        (
            "both.jsonl",
            "{\"id\": \"x\", \"query\": \"refund\", \"gold\": [\"src/billing.py\"], \"out_of_scope\": true}\n",
            "both.jsonl:1: case `x` is out of scope but names gold: drop `gold`, or `out_of_scope: true`",
        ),
        (
            "noid.jsonl",
            "{\"query\": \"refund\", \"gold\": [\"src/billing.py\"]}\n",
            "noid.jsonl:1: missing field `id`",
        ),
        (
            "emptyid.jsonl",
            "{\"id\": \" \", \"query\": \"refund\", \"gold\": [\"src/billing.py\"]}\n",
            "emptyid.jsonl:1: a case with an empty `id` (each case needs a name of its own)",
        ),
        (
            "memory.jsonl",
            "{\"memory\": {\"subject\": \"src\", \"body\": \"x\", \"sumary\": \"y\"}}\n",
            "memory.jsonl:1: unknown field `sumary`, expected one of `subject`, `body`, `summary`",
        ),
        (
            "memkey.jsonl",
            "{\"memory\": {\"subject\": \"src\", \"body\": \"x\"}, \"id\": \"m\"}\n",
            "memkey.jsonl:1: a memory line holds only `memory`, not `id`",
        ),
    ];
    for (file, text, expected) in cases {
        write(dir.path(), file, text);
        let path = dir.path().join(file);
        assert_eq!(
            ws.eval(&path, 5).unwrap_err().to_string(),
            format!(
                "invalid argument `cases`: {}{}",
                path.display().to_string().strip_suffix(file).unwrap(),
                expected
            ),
            "{file}"
        );
    }
    // Only out-of-scope cases: no recall, MRR or nDCG; abstentions on both cases.
    write(
        dir.path(),
        "out.jsonl",
        "{\"id\": \"cake\", \"query\": \"bake a chocolate cake\", \"out_of_scope\": true}\n",
    );
    let report = ws.eval(&dir.path().join("out.jsonl"), 5).unwrap().result;
    let loci = &report.systems[0];
    assert_eq!(
        (loci.recall_at_k, loci.mrr, loci.ndcg_at_k),
        (None, None, None)
    );
    assert_eq!(
        (loci.abstention_precision, loci.abstention_recall),
        (Some(1.0), Some(1.0))
    );
    let json = serde_json::to_value(loci).unwrap();
    assert_eq!(json["recall_at_k"], serde_json::Value::Null);
    assert!(
        report
            .table()
            .contains("| loci context | n/a | n/a | n/a | 1.00 | 1.00 |"),
        "{}",
        report.table()
    );
    // Only in-scope cases, answered: no abstention, so no abstention precision or recall.
    write(
        dir.path(),
        "in.jsonl",
        "{\"id\": \"refund\", \"query\": \"refund an invoice\", \"gold\": [\"src/billing.py\"]}\n",
    );
    let report = ws.eval(&dir.path().join("in.jsonl"), 5).unwrap().result;
    let loci = &report.systems[0];
    assert!(!report.cases[0].abstained);
    assert_eq!(
        (
            loci.recall_at_k,
            loci.abstention_precision,
            loci.abstention_recall
        ),
        (Some(1.0), None, None)
    );
    assert!(
        report
            .table()
            .contains("| loci context | 1.000 | 1.000 | 1.000 | n/a | n/a |"),
        "{}",
        report.table()
    );
}

/// Fault (fresh-user trial): under a small budget (`--budget 300`) the recap of the last
/// sessions disappeared without a word: nothing in the markdown or the notes said it was
/// left out. The answer now says so, in its notes and as a `> note:` line.
#[test]
fn fault_the_recap_vanished_silently_under_a_small_budget() {
    let (_dir, mut ws) = workspace();
    let long = "migrate the billing ledger ".repeat(20);
    let old = ws
        .session_begin(Some(&long), Some("agent:a"))
        .unwrap()
        .result;
    ws.session_end(old.session_id, Some(&long)).unwrap();
    let note = "the recap of the last sessions was left out: it gets a quarter of the 300-token budget, too little (`loci recap` shows them)";
    let env = ask(&ws, "refund invoice", &[], 300);
    assert_eq!(env.result.recap, "");
    assert_eq!(env.capability.notes.last().map(String::as_str), Some(note));
    assert!(
        env.result
            .markdown
            .starts_with(&format!("> note: {note}\n")),
        "{}",
        env.result.markdown
    );
    assert!(env.limits.truncated);
    // A newer short session fits; the older one is said to be left out.
    let new = ws
        .session_begin(Some("fix refunds"), Some("agent:a"))
        .unwrap()
        .result;
    let env = ask(&ws, "refund invoice", &[], 300);
    assert_eq!(
        env.result.recap,
        format!(
            "## Recent sessions\n- #{} {} (agent:a): fix refunds\n",
            new.session_id,
            &new.started_at[..10]
        )
    );
    assert_eq!(
        env.capability.notes.last().map(String::as_str),
        Some(
            "the recap leaves out 1 older session: it gets a quarter of the 300-token budget, too little (`loci recap` shows them)"
        )
    );
    // A budget that holds it all says nothing.
    let env = ask(&ws, "refund invoice", &[], 4_000);
    assert!(env.result.recap.contains("migrate the billing ledger"));
    assert!(
        !env.capability.notes.iter().any(|n| n.contains("recap")),
        "{:?}",
        env.capability.notes
    );
}

/// Fault (fresh-user trial, stdlib): "what should I know before I touch this?" with
/// `json/encoder.py` open, on a map without memory, was answered by `CookieJar`, whose
/// docstring says "You may not need to know about this class" (just over the floor), and
/// by the files around it in the import graph (`urllib/parse.py`, `http/client.py`), not
/// by the open file. A question that only asks about the code at hand is about the open
/// files, and centrality is personalized to the open files only.
#[test]
fn fault_a_question_about_the_open_file_was_answered_by_a_weak_match_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "web/cookies.py",
        "from web.parse import split\n\nclass CookieJar:\n    \"\"\"You may not need to know about this class: touch it before anything else.\"\"\"\n    def add(self, c):\n        return split(c)\n",
    );
    write(
        root,
        "web/parse.py",
        "def split(s):\n    return s.split(';')\n",
    );
    write(
        root,
        "json/encoder.py",
        "def encode(o):\n    \"\"\"Encodes a value.\"\"\"\n    return floatstr(o)\n\ndef floatstr(o):\n    return repr(o)\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    for q in [
        "what should I know before I touch this?",
        "anything to keep in mind when changing this file?",
    ] {
        let a = ask(&ws, q, &["json/encoder.py"], 2_000).result;
        let items: Vec<(&str, HitKind)> = a.items.iter().map(|i| (i.id.as_str(), i.kind)).collect();
        assert_eq!(
            items,
            [
                ("json/encoder.py", HitKind::File),
                // The most referenced first: `encode` calls `floatstr`.
                ("json/encoder.py#floatstr@function", HitKind::Symbol),
                ("json/encoder.py#encode@function", HitKind::Symbol),
            ],
            "{q}"
        );
    }
    // A question with a topic of its own is still searched for.
    let a = ask(&ws, "what is a cookie jar", &["json/encoder.py"], 2_000).result;
    assert!(
        a.items[0].id.starts_with("web/cookies.py#CookieJar"),
        "{:?}",
        a.items[0].id
    );
}

/// An error message quoted in a question finds the file that raises it: the quoted text
/// is looked up verbatim in the code's text (issue: retrieval that beats plain search).
#[test]
fn an_error_message_quoted_in_a_question_finds_the_file_raising_it() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "src/lexer.py",
        "def read_token(stream):\n    for ch in stream:\n        if ch == '\"':\n            break\n    else:\n        raise ValueError(\"No closing quotation\")\n",
    );
    write(
        dir.path(),
        "src/split.py",
        "def split_line(line):\n    \"\"\"Split a command line into words; raise ValueError on bad input.\"\"\"\n    return line.split()\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "splitting a command line blows up with ValueError: No closing quotation - where is that raised?",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained);
    let first = &a.items[0];
    assert_eq!(
        (first.id.as_str(), first.path.as_deref()),
        ("src/lexer.py#read_token@function", Some("src/lexer.py"))
    );
    assert!(
        first.signals[0].contains("quoted text #1"),
        "{:?}",
        first.signals
    );
}

/// Fault from a fresh-user trial: "What does setting PYTHONASYNCIODEBUG do, and where is
/// it read?" abstained on the stdlib, the one function reading the variable ranked below
/// files full of "read", "reads", "set" and "settings" (BM25 weighs each form of a word
/// as a term of its own). A name written as code that few files hold ranks the chunks
/// holding it as a list of their own.
#[test]
fn fault_a_rare_name_the_question_uses_ranked_below_a_common_words_forms() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "app/coroutines.py",
        "import os\nimport sys\n\n\ndef _is_debug_mode():\n    return sys.flags.dev_mode or bool(os.environ.get('MYAPPDEBUG'))\n\n\ndef iscoroutine(obj):\n    return hasattr(obj, 'send')\n",
    );
    for name in ["archive", "buffer", "stream"] {
        write(
            dir.path(),
            &format!("app/{name}.py"),
            "class Reader:\n    \"\"\"Reads data; settings control how much each read reads.\"\"\"\n\n    def read(self, size=-1):\n        \"\"\"Read and return up to size bytes; reads until EOF by default.\"\"\"\n        return self._read(size)\n\n    def read1(self, size=-1):\n        \"\"\"Read with at most one call; a setting of -1 reads a buffer's worth.\"\"\"\n        return self._read(size)\n\n    def set_settings(self, settings):\n        \"\"\"Set the settings; each setting is set once.\"\"\"\n        self.settings = settings\n",
        );
    }
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "What does setting MYAPPDEBUG do, and where is it read?",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained);
    assert_eq!(
        (a.items[0].id.as_str(), a.items[0].signals[0].as_str()),
        (
            "app/coroutines.py#_is_debug_mode@function",
            "code (67% of the question; file text #1, code chunks #4, rare name #1) +20.0"
        )
    );
}

/// Fault from a fresh-user trial: `_PYTHON_HOST_PLATFORM` (in seven files of the stdlib)
/// was no rare name, its file count taken as its commonest word's bound. A name of several
/// words is counted as the phrase.
#[test]
fn fault_a_name_of_common_words_was_counted_by_its_words() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "build/cross.py",
        "import os\n\n\ndef target():\n    \"\"\"Read the target from an environment variable, else native.\"\"\"\n    return os.environ.get('APP_HOST_PLATFORM', 'native')\n",
    );
    for i in 0..10 {
        write(
            dir.path(),
            &format!("app/part{i}.py"),
            "def app_name():\n    \"\"\"The app's name on this host.\"\"\"\n    return platform_name()\n",
        );
    }
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "Where is the APP_HOST_PLATFORM environment variable read?",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained);
    assert_eq!(
        (
            a.items[0].id.as_str(),
            a.items[0].signals[0].contains("rare name #1")
        ),
        ("build/cross.py#target@function", true),
        "{:?}",
        a.items[0].signals
    );
}

/// A panic message pasted after `with:` is quoted text as much as one after an exception's
/// name: it finds the assertion that formats it, ahead of the file that shares most of
/// the question's words.
#[test]
fn fault_a_panic_message_after_with_was_not_taken_as_quoted() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "src/asserts.rs",
        "pub fn assert_unique(cmd: &str, short: char, a: &str, b: &str) {\n    panic!(\"Command {cmd}: Short option names must be unique for each argument, but '-{short}' is in use by both '{a}' and '{b}'\");\n}\n",
    );
    write(
        dir.path(),
        "src/command.rs",
        "/// A debug build command: every argument needs short names and option names that are\n/// unique; `verbose`, `version`: both in use.\npub fn debug_build_command() -> Vec<String> {\n    vec![\"verbose\".into(), \"version\".into()]\n}\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "Debug build panics with: Command myapp: Short option names must be unique for each argument, but '-v' is in use by both 'verbose' and 'version'. Where is that assertion?",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained);
    assert_eq!(
        (
            a.items[0].id.as_str(),
            a.items[0].signals[0].contains("quoted text #1")
        ),
        ("src/asserts.rs#assert_unique@function", true),
        "{:?}",
        a.items[0]
    );
}

/// A question asking, in words, what breaks if a module changes is answered from the
/// reverse-dependency graph: the module is the best file found, and the files importing
/// it come first.
#[test]
fn an_impact_question_in_words_finds_the_importers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/cmd.py",
        "class Cmd:\n    \"\"\"A simple framework for writing line-oriented command interpreters.\"\"\"\n    def cmdloop(self):\n        return None\n",
    );
    write(
        root,
        "src/pdb.py",
        "from src.cmd import Cmd\n\nclass Pdb(Cmd):\n    def do_break(self):\n        return None\n",
    );
    write(
        root,
        "src/pstats.py",
        "from src.cmd import Cmd\n\nclass Browser(Cmd):\n    def do_sort(self):\n        return None\n",
    );
    write(
        root,
        "src/shell.py",
        "def run(line):\n    \"\"\"Interpret one command line of the interpreter shell.\"\"\"\n    return line\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "Which modules would break if I changed the line-oriented command interpreter framework?",
        &[],
        2_000,
    )
    .result;
    let paths: Vec<&str> = a.items.iter().filter_map(|i| i.path.as_deref()).collect();
    assert_eq!(
        paths[..3],
        ["src/pdb.py", "src/pstats.py", "src/cmd.py"],
        "{paths:?}"
    );
    assert!(
        a.items[0]
            .signals
            .last()
            .is_some_and(|s| s.starts_with("depends directly on `src/cmd.py` +")),
        "{:?}",
        a.items[0].signals
    );
}

/// The embeddings path: the real model (all-MiniLM-L6-v2, as `.ci/setup` unpacks it into
/// `target/ci/models/`) embeds the chunks, and a question sharing no word with the code
/// that answers it finds that file first, through the `embeddings` list of fusion.
#[test]
fn embeddings_rank_a_paraphrased_questions_file_first() {
    let model = std::env::var("LOCI_TEST_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci/models/all-MiniLM-L6-v2")
        });
    assert!(
        model.join("model.safetensors").is_file(),
        "{} has no model: run .ci/setup",
        model.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/shell.py",
        "def quote(s):\n    \"\"\"Return a shell-escaped version of the string s.\"\"\"\n    return \"'\" + s.replace(\"'\", \"'\\\"'\\\"'\") + \"'\"\n",
    );
    write(
        root,
        "src/stats.py",
        "def median_grouped(data, interval=1):\n    \"\"\"Estimate the median of continuous data grouped in classes.\"\"\"\n    return sorted(data)[len(data) // 2]\n",
    );
    write(
        root,
        "src/net.py",
        "def connect(host, port):\n    \"\"\"Open a TCP connection to host:port.\"\"\"\n    return (host, port)\n",
    );
    write(
        root,
        ".loci/config.toml",
        &format!("[embeddings]\nmodel = {:?}\n", model.display().to_string()),
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    // Before `embed`: answered from the text, and the answer says vectors are missing.
    let before = ask(
        &ws,
        "how do I escape text for safe use in a terminal",
        &[],
        2_000,
    );
    assert!(
        before.capability.notes.contains(
            &"embeddings: 0 of 3 code chunks have vectors (`loci embed` adds the rest)".to_string()
        ),
        "{:?}",
        before.capability.notes
    );
    let report = ws
        .embed(&|_| std::ops::ControlFlow::Continue(()))
        .unwrap()
        .result;
    assert_eq!(
        (report.embedded, report.with_vectors, report.chunks),
        (3, 3, 3)
    );
    let a = ask(
        &ws,
        "how do I escape text for safe use in a terminal",
        &[],
        2_000,
    )
    .result;
    assert!(
        !a.abstained,
        "{} {:?} {:?}",
        a.best_relevance, a.unknown_names, a.best_candidate
    );
    assert_eq!(
        a.items[0].path.as_deref(),
        Some("src/shell.py"),
        "{:?}",
        a.items
    );
    assert!(
        a.items[0].signals[0].contains("embeddings #1"),
        "{:?}",
        a.items[0].signals
    );
    // A second run has nothing left to embed.
    assert_eq!(
        ws.embed(&|_| std::ops::ControlFlow::Continue(()))
            .unwrap()
            .result
            .embedded,
        0
    );
    // Vectors are not keyed by chunk row: a scan rewrites every chunk of a file it
    // analyses again, and one edit would embed the whole file again. Only the changed
    // text is embedded, and the vector of text no chunk has is deleted.
    write(
        root,
        "src/stats.py",
        "def median_grouped(data, interval=1):\n    \"\"\"Estimate the median of continuous data grouped in classes.\"\"\"\n    return sorted(data)[len(data) // 2]\n\ndef mode(data):\n    \"\"\"The most common value.\"\"\"\n    return max(set(data), key=data.count)\n",
    );
    write(
        root,
        "src/net.py",
        "def connect(host, port, timeout=5):\n    \"\"\"Open a TCP connection to host:port.\"\"\"\n    return (host, port, timeout)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let vectors = |ws: &Workspace| -> i64 {
        ws.store()
            .conn()
            .query_row("SELECT count(*) FROM text_vectors", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(vectors(&ws), 3, "kept until `loci embed` runs");
    let report = ws
        .embed(&|_| std::ops::ControlFlow::Continue(()))
        .unwrap()
        .result;
    assert_eq!(
        (report.embedded, report.with_vectors, report.chunks),
        (2, 4, 4),
        "`mode` and the new `connect`; `quote` and `median_grouped` kept theirs"
    );
    assert_eq!(vectors(&ws), 4, "the old `connect`'s vector is deleted");
}

/// Fault found by a fresh-user trial: "how does shlex.split work" served `shlex.py`'s
/// `__all__` (its best chunk by BM25: short, holding both words) and left `split`, the
/// definition the question names, 37th with only its +15 (shorter chunks holding both
/// words were the file's best). A named definition in a file the retrieval found gets
/// that file's code relevance too.
#[test]
fn fault_a_dotted_name_served_its_files_best_chunk_not_the_definition() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let body = "    s = s.strip()\n".repeat(20);
    let others = (0..12)
        .map(|i| {
            format!("def helper_{i}(s):\n    \"\"\"The work of a shlex split helper.\"\"\"\n    return s\n\n")
        })
        .collect::<String>();
    write(
        root,
        "shlex.py",
        &format!(
            "__all__ = [\"shlex\", \"split\", \"quote\"]\n\n{others}def split(s, comments=False):\n    \"\"\"Split the string s using shell-like syntax.\"\"\"\n{body}    lex = shlex(s)\n    return list(lex)\n"
        ),
    );
    write(root, "os.py", "def getcwd():\n    return '/'\n");
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "how does shlex.split work", &[], 2_000).result;
    assert_eq!(
        answer.items[0].id,
        "shlex.py#split@function",
        "{:?}",
        answer
            .items
            .iter()
            .map(|i| (&i.id, &i.signals))
            .collect::<Vec<_>>()
    );
}

/// Fault found by a fresh-user trial: a pasted traceback line found the file raising the
/// error but served its other definitions (the exception class, a helper sharing "line"
/// and "column"), not the function whose text holds the message: a file's served chunks
/// came from the question's words alone. The chunks holding quoted text verbatim are now
/// their file's best chunks.
#[test]
fn fault_the_function_raising_a_quoted_error_was_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let filler = "    end = skip(s, end)\n".repeat(30);
    write(
        root,
        "src/decoder.py",
        &format!(
            "def check_one(doc, pos):\n    \"\"\"Expecting a delimiter at this line and column.\"\"\"\n    return ValueError\n\n\
             def check_two(doc, pos):\n    \"\"\"Expecting a delimiter: line, column.\"\"\"\n    return ValueError\n\n\
             def check_three(doc, pos):\n    \"\"\"The line and column, expecting a delimiter.\"\"\"\n    return ValueError\n\n\
             def parse_object(s, end):\n{filler}    raise ValueError(\"Expecting ',' delimiter\", s, end)\n"
        ),
    );
    write(root, "src/other.py", "def unrelated():\n    return 1\n");
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "ValueError: Expecting ',' delimiter: line 1 column 10",
        &[],
        2_000,
    )
    .result;
    assert_eq!(
        a.items[0].id,
        "src/decoder.py#parse_object@function",
        "{:?}",
        a.items
            .iter()
            .map(|i| (&i.id, &i.signals))
            .collect::<Vec<_>>()
    );
}

/// Fault (dev set): `serde_json::Value` named a nested `type Value` of another file: the
/// name's first 20 rows by path were all members of earlier crates, and the enum of
/// `serde_json` (row 31 of 37) was never read.
#[test]
fn fault_a_qualified_name_missed_its_definition_behind_twenty_members_of_that_name() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..25 {
        write(
            dir.path(),
            &format!("aa/m{i:02}.py"),
            &format!("class Holder{i}:\n    class Value:\n        pass\n"),
        );
    }
    write(
        dir.path(),
        "serde_json/value.py",
        "class Widget:\n    class Value:\n        pass\n\nclass Value:\n    \"\"\"Any JSON value.\"\"\"\n",
    );
    let mut ws = Workspace::open(dir.path(), None).unwrap();
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "what is a serde_json::Value", &[], 2000).result;
    let named: Vec<&str> = a
        .items
        .iter()
        .filter(|i| {
            i.signals
                .iter()
                .any(|s| s.starts_with("named in the question"))
        })
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(
        named.first().copied(),
        Some("serde_json/value.py#Value@class"),
        "{named:?}"
    );
}

/// Fault (dev set): "who calls into unlock_notify.rs?" listed `lib.rs` first, whose only
/// edge to it is `mod unlock_notify;`, before the files calling it from inside macros
/// (found by their mentions): a declaration compiles a module, it does not use it.
#[test]
fn fault_a_module_declaration_was_listed_before_the_modules_callers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"db\"\nversion = \"0.1.0\"\n",
    );
    write(
        root,
        "src/lib.rs",
        "mod conn;\nmod stmt;\nmod unlock_notify;\n\npub fn open() {}\n",
    );
    write(
        root,
        "src/unlock_notify.rs",
        "pub fn wait_for_unlock_notify() -> bool {\n    true\n}\n",
    );
    // `stmt.rs` is the longer: BM25 puts the shorter mention first.
    for (file, f) in [
        ("src/stmt.rs", "step_the_statement_once_more_and_then_again"),
        ("src/conn.rs", "prepare"),
    ] {
        write(
            root,
            file,
            // Inside a macro's arguments: token trees, no call the map can link.
            &format!(
                "macro_rules! check {{ ($e:expr) => {{ $e }} }}\n\npub fn {f}() -> bool {{\n    check!(crate::unlock_notify::wait_for_unlock_notify())\n}}\n"
            ),
        );
    }
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "what breaks if I change unlock_notify.rs?", &[], 2_000).result;
    let dependents: Vec<&str> = a
        .items
        .iter()
        .filter(|i| {
            i.signals
                .iter()
                .any(|s| s.starts_with("depends directly on"))
        })
        .filter_map(|i| i.path.as_deref())
        .collect();
    // The callers in their mentions' order (BM25), then the declaration.
    assert_eq!(dependents, ["src/conn.rs", "src/stmt.rs", "src/lib.rs"]);
}

/// Fault: after a function that a page and a lesson name was renamed and the tree scanned,
/// asking about it served neither, with no banner: the name no longer linked them to the
/// question, and their stale mark took the rest.
#[test]
fn fault_memory_false_about_what_the_question_names_was_dropped_from_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let app = |name: &str| {
        format!(
            "def {name}(path):\n    \"\"\"Read the settings file.\"\"\"\n    return open(path).read()\n\ndef other():\n    return 2\n"
        )
    };
    write(root, "app.py", &app("parse_config"));
    write(
        root,
        "main.py",
        "from app import parse_config\n\ndef main():\n    return parse_config(\"x\")\n",
    );
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.remember(
        "app.py",
        "Settings are read by `parse_config()`, which returns the raw text.",
        &by("human:a"),
    )
    .unwrap();
    ws.learn(
        "Never cache `parse_config()` results: the file changes at runtime.",
        None,
        &by("human:a"),
    )
    .unwrap();
    write(root, "app.py", &app("load_settings"));
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "how are settings read by parse_config", &[], 800).result;
    assert!(!a.abstained);
    let served: Vec<&str> = a.items.iter().map(|i| i.id.as_str()).collect();
    assert!(
        served.contains(&"app.py") && served.contains(&"lesson:1"),
        "{served:?}"
    );
    assert_eq!(
        a.banners,
        [
            "⚠ memory `app.py` names `parse_config()`, which the code no longer has: it is false about what you asked until it is corrected (`loci lint`)",
            "⚠ memory `lesson:1` names `parse_config()`, which the code no longer has: it is false about what you asked until it is corrected (`loci lint`)",
        ]
    );
}

/// A question asks in inflections ("where is the date cached"), code names things by the
/// base form (`def cache_date`): the base form finds the file that the inflection alone
/// misses.
#[test]
fn a_question_in_inflections_finds_code_named_by_the_base_form() {
    let (dir, mut ws) = workspace();
    write(
        dir.path(),
        "src/stamp.py",
        "def cache_date(now):\n    return format_header(now)\n",
    );
    write(
        dir.path(),
        "src/wire.py",
        "def send_date(now):\n    \"\"\"Send the date.\"\"\"\n    return now\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "where is the date cached and formatted", &[], 2_000).result;
    assert!(!a.abstained);
    assert_eq!(
        a.items[0].id,
        "src/stamp.py#cache_date@function",
        "{:?}",
        a.items.iter().map(|i| &i.id).collect::<Vec<_>>()
    );
}

/// A call written with its arguments names its callee: `field(default_factory=...)` had
/// been one phrase of every word in it, which no text holds, and the answer abstained
/// with nothing found.
#[test]
fn fault_a_call_with_arguments_in_the_question_found_nothing() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "dataclasses.py",
        "def field(*, default=None, default_factory=None):\n    \"\"\"Return an object to identify dataclass fields.\"\"\"\n    return (default, default_factory)\n",
    );
    write(
        dir.path(),
        "other.py",
        "def describe(obj):\n    \"\"\"Describe what an object does.\"\"\"\n    return repr(obj)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "What does dataclasses.field(default_factory=...) do?",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained, "{:?}", a.best_candidate);
    assert_eq!(a.items[0].id, "dataclasses.py#field@function");
}

/// A bare name that many files define (`__init__`) names no definition: its
/// definitions had led the answer in path order, ahead of the file the question is about.
#[test]
fn fault_a_bare_name_defined_in_many_files_led_the_answer() {
    let (dir, mut ws) = empty_workspace();
    for name in ["a", "b", "c", "d"] {
        write(
            dir.path(),
            &format!("{name}.py"),
            "class Thing:\n    def __init__(self):\n        self.value = 1\n",
        );
    }
    write(
        dir.path(),
        "records.py",
        "def make_record_class(fields):\n    \"\"\"Generate the __init__ method of a record class from its fields' defaults.\"\"\"\n    lines = [f'self.{f} = {f}' for f in fields]\n    return 'def __init__(self):\\n' + '\\n'.join(lines)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "How does a record class generate the __init__ method from its field defaults?",
        &[],
        2_000,
    )
    .result;
    assert_eq!(a.items[0].id, "records.py#make_record_class@function");
    assert_nothing_named(&a);
}

/// "Who calls X?" about a definition the question names is answered from the references
/// resolved to it: the dependents of the best file found (a file full of `call`s) had been
/// served instead.
#[test]
fn fault_who_calls_a_named_function_served_another_files_dependents() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "shlex.py",
        "def quote(s):\n    \"\"\"Return a shell-escaped version of the string s.\"\"\"\n    return \"'\" + s + \"'\"\n\ndef join(words):\n    return ' '.join(quote(w) for w in words)\n",
    );
    write(
        dir.path(),
        "pipes.py",
        "import shlex\n\ndef command(file):\n    return 'cat ' + shlex.quote(file)\n",
    );
    write(
        dir.path(),
        "mock.py",
        "def call(*args):\n    \"\"\"Record who calls a mock: every call, the calls of calls.\"\"\"\n    return args\n\ndef calls():\n    return call(call())\n",
    );
    write(dir.path(), "user.py", "import mock\n\nmock.calls()\n");
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "who calls shlex.quote?", &[], 2_000).result;
    let served: Vec<(&str, &str)> = a
        .items
        .iter()
        .filter(|i| i.kind == HitKind::File)
        .map(|i| (i.id.as_str(), i.text.as_str()))
        .collect();
    assert_eq!(
        served,
        [(
            "pipes.py",
            "`pipes.py` refers to `shlex.quote` (1 reference)"
        )],
        "{:?}",
        a.items
    );
}

/// What breaks if a definition changes is the code using it, first; its own file is what
/// changes: the definition (45 points, named in the question) had come before its users,
/// and its file had been listed among them for the references inside it.
#[test]
fn fault_an_impact_answer_served_the_changed_definition_before_what_uses_it() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/byte_str.rs",
        "pub struct ByteStr { bytes: Vec<u8> }\n\nimpl ByteStr {\n    pub fn new() -> ByteStr { ByteStr { bytes: Vec::new() } }\n}\n",
    );
    write(
        dir.path(),
        "src/uri/path.rs",
        "use crate::byte_str::ByteStr;\n\npub struct PathAndQuery { data: ByteStr }\n\npub fn empty() -> PathAndQuery { PathAndQuery { data: ByteStr::new() } }\n",
    );
    write(
        dir.path(),
        "src/header/name.rs",
        "use crate::byte_str::ByteStr;\n\npub struct Custom(ByteStr);\n",
    );
    write(
        dir.path(),
        "src/lib.rs",
        "mod byte_str;\nmod uri;\nmod header;\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "what breaks if I change ByteStr", &[], 2_000).result;
    let paths: Vec<&str> = a.items.iter().filter_map(|i| i.path.as_deref()).collect();
    assert_eq!(
        paths[..3],
        ["src/uri/path.rs", "src/header/name.rs", "src/byte_str.rs"],
        "{:?}",
        a.items
    );
}

/// "Where are the tests for shlex.split" asks for the tests: the definition it names had
/// come first (+15 for being named, on top of its code), its tests second.
#[test]
fn fault_a_tests_question_served_the_named_definition_before_its_tests() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "shlex.py",
        "def split(s, comments=False, posix=True):\n    \"\"\"Split the string s using shell-like syntax.\"\"\"\n    return s.split()\n",
    );
    write(
        dir.path(),
        "test/test_shlex.py",
        "import shlex\nimport unittest\n\nclass ShlexTest(unittest.TestCase):\n    def testSplitPosix(self):\n        self.assertEqual(shlex.split('a b'), ['a', 'b'])\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "where are the tests for shlex.split", &[], 2_000).result;
    let paths: Vec<&str> = a.items.iter().filter_map(|i| i.path.as_deref()).collect();
    assert_eq!(paths.first(), Some(&"test/test_shlex.py"), "{:?}", a.items);
    assert!(paths.contains(&"shlex.py"), "{:?}", a.items);
}

/// A name inside a message the question quotes is a word of the message: `Registry` in
/// "I/O source already registered with a `Registry`" had been served as named (+15), the
/// `Registry` struct before the code raising the message.
#[test]
fn fault_a_name_inside_a_quoted_message_was_served_as_named() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/poll.rs",
        "/// Registers I/O sources with the poll.\npub struct Registry { id: usize }\n\nimpl Registry {\n    pub fn register(&self) -> usize { self.id }\n}\n",
    );
    write(
        dir.path(),
        "src/io_source.rs",
        "use std::io;\n\npub fn associate(registered: bool) -> io::Result<()> {\n    if registered {\n        return Err(io::Error::new(io::ErrorKind::AlreadyExists, \"I/O source already registered with a `Registry`\"));\n    }\n    Ok(())\n}\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        r#"Custom { kind: AlreadyExists, error: "I/O source already registered with a `Registry`" }"#,
        &[],
        2_000,
    )
    .result;
    assert_eq!(
        a.items.first().and_then(|i| i.path.as_deref()),
        Some("src/io_source.rs"),
        "{:?}",
        a.items
    );
    assert_nothing_named(&a);
}

/// A module's member it does not have is a name nothing holds: `typing.override` (new in
/// a later Python) had been answered from `typing.py`, since the module and the word are
/// there. A member a star import brings (`collections.abc.Mapping`) or may bring from a
/// module the map lacks (`os.stat`, from C) is not missing.
#[test]
fn fault_a_member_its_module_lacks_was_answered_from_the_module() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "typing.py",
        "import sys\n\ndef cast(typ, val):\n    \"\"\"Cast a value to a type; subclasses override nothing.\"\"\"\n    return val\n\ndef final(f):\n    \"\"\"A decorator marking a method that subclasses must not override.\"\"\"\n    return f\n",
    );
    write(
        dir.path(),
        "_collections_abc.py",
        "class Mapping:\n    \"\"\"A read-only mapping.\"\"\"\n",
    );
    write(
        dir.path(),
        "collections/abc.py",
        "from _collections_abc import *\n",
    );
    write(
        dir.path(),
        "os.py",
        "from posix import *\n\ndef walk(top):\n    \"\"\"Walk a tree, calling stat on each entry.\"\"\"\n    return stat(top)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "where is the typing.override decorator defined that marks a method as an override",
        &[],
        2_000,
    )
    .result;
    assert!(a.abstained, "{:?}", a.items);
    assert_eq!(a.unknown_names, ["typing.override"]);
    for q in [
        "how does typing.final mark a method subclasses must not override",
        "what is collections.abc.Mapping, a read-only mapping",
        "how does os.stat get called when os.walk walks a tree",
    ] {
        let a = ask(&ws, q, &[], 2_000).result;
        assert!(a.unknown_names.is_empty(), "{q}: {:?}", a.unknown_names);
    }
}

/// A Rust module's module-level text is its docs, imports and `mod` lines: the docs of
/// `fmt/mod.rs`, rich in the question's words, had come before the definition answering
/// it.
#[test]
fn fault_a_rust_modules_docs_came_before_the_definition_answering_the_question() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/fmt/mod.rs",
        "//! Formatting log events: each event, each line, json or plain; events print as lines.\n//! A json formatter prints an event as a json object; a plain one prints text lines.\n//! Log events, json objects, lines: see the formatters.\nuse std::fmt;\n",
    );
    write(
        dir.path(),
        "src/fmt/format/json.rs",
        "/// Prints each log event as one JSON object per line.\npub struct Json { flatten: bool }\n\nimpl Json {\n    /// Writes the event's fields as a JSON object.\n    pub fn format_event(&self) -> String { String::new() }\n}\n",
    );
    write(
        dir.path(),
        "src/fmt/writer.rs",
        "/// Writes the lines a formatter prints for each event.\npub fn write_line(line: &str) -> usize { line.len() }\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "the bit that prints each log event as one json object per line",
        &[],
        2_000,
    )
    .result;
    assert_eq!(
        a.items.first().and_then(|i| i.path.as_deref()),
        Some("src/fmt/format/json.rs"),
        "{:?}",
        a.items
    );
}

/// A dependents question naming a module and definitions of it ("if I change reprlib
/// (Repr / recursive_repr)") is about the module: only the users of the named definitions
/// had been served, not the modules importing it for the rest.
#[test]
fn fault_a_dependents_question_naming_a_module_and_its_definitions_served_only_their_users() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "reprlib.py",
        "class Repr:\n    def repr(self, x):\n        return str(x)\n\ndef recursive_repr(fillvalue='...'):\n    return lambda f: f\n\naRepr = Repr()\n\ndef repr(x):\n    return aRepr.repr(x)\n",
    );
    write(
        dir.path(),
        "functools.py",
        "from reprlib import recursive_repr\n\nclass partial:\n    @recursive_repr()\n    def __repr__(self):\n        return 'partial'\n",
    );
    write(
        dir.path(),
        "bdb.py",
        "import reprlib\n\ndef format_stack_entry(frame):\n    return reprlib.repr(frame)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "if I change reprlib (Repr / recursive_repr) which modules are affected",
        &[],
        2_000,
    )
    .result;
    let dependents: Vec<&str> = a
        .items
        .iter()
        .filter(|i| i.text.contains("depends directly on"))
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(dependents, ["bdb.py", "functools.py"], "{:?}", a.items);
}

/// A name nothing in the code holds makes a question out of scope, but not beside a
/// qualified name the map resolves: "in my Flask app, how does json.dumps …" is about
/// `json.dumps`.
#[test]
fn fault_a_product_name_beside_a_qualified_name_abstained() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "json/__init__.py",
        "def dumps(obj, *, sort_keys=False):\n    \"\"\"Serialize obj to a JSON formatted str; sort_keys sorts the keys.\"\"\"\n    return str(sorted(obj) if sort_keys else obj)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "In my Flask app, how does json.dumps handle sort_keys?",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained, "{:?}", a.unknown_names);
    assert_eq!(a.items[0].id, "json/__init__.py#dumps@function");
    // Without the qualified name, the unknown product is what the question is about.
    let a = ask(&ws, "How does my Flask app sort keys?", &[], 2_000).result;
    assert!(a.abstained);
    assert_eq!(a.unknown_names, ["Flask"]);
}

/// A question asking for the tests of something it describes in words finds that code,
/// then the tests named after it (`tests/zero.rs` for `src/flavors/zero.rs`): a test file
/// using the channel everywhere had led, and the zero-capacity channel's own tests, long
/// and sharing few of the question's words, came after code that is not tests.
#[test]
fn fault_the_tests_named_after_the_code_found_ranked_below_other_tests() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/flavors/zero.rs",
        "//! Zero-capacity channel: a rendezvous channel where a send waits for a receive.\n\npub struct Channel {\n    waiting: usize,\n}\n\nimpl Channel {\n    /// Sends through the rendezvous channel, waiting for a receiver.\n    pub fn send(&self) {}\n}\n",
    );
    let mut golang =
        String::from("//! Channel tests ported from Go: zero-capacity and buffered channels.\n");
    for i in 0..6 {
        golang.push_str(&format!(
            "\n#[test]\nfn channel_{i}() {{\n    // a rendezvous channel of zero capacity, then a buffered channel\n    let c = make_channel(0);\n    drop(c);\n}}\n"
        ));
    }
    write(dir.path(), "tests/golang.rs", &golang);
    let mut zero = String::from("//! Tests for the zero flavor.\n");
    for i in 0..40 {
        zero.push_str(&format!(
            "\n#[test]\nfn send_recv_{i}() {{\n    let (s, r) = bounded(0);\n    s.send({i}).unwrap();\n    assert_eq!(r.recv(), Ok({i}));\n}}\n"
        ));
    }
    write(dir.path(), "tests/zero.rs", &zero);
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "where are the tests for the zero-capacity rendezvous channel",
        &[],
        4_000,
    )
    .result;
    let mut files: Vec<&str> = Vec::new();
    for p in a.items.iter().filter_map(|i| i.path.as_deref()) {
        if !files.contains(&p) {
            files.push(p);
        }
    }
    assert_eq!(files[0], "tests/zero.rs", "{:?}", a.items);
    let signals = &a
        .items
        .iter()
        .find(|i| i.path.as_deref() == Some("tests/zero.rs"))
        .unwrap()
        .signals;
    assert!(
        signals
            .iter()
            .any(|s| s.contains("tests named after the code found #1")),
        "{signals:?}"
    );
}

/// Fault from a fresh-user trial: "where are the tests for the bisect module" served the
/// tests of `unittest/loader.py` first: the tests were looked for after the code the
/// question's other words found ("tests", "module"), not after the module it names.
#[test]
fn fault_a_tests_question_naming_a_module_served_the_tests_of_other_code() {
    let (dir, mut ws) = empty_workspace();
    files(
        dir.path(),
        r#"
//- bisect.py
"""Bisection algorithms."""

def insort(a, x):
    """Insert item x in list a, and keep it sorted."""
    a.insert(bisect(a, x), x)

def bisect(a, x):
    """Return the index where to insert item x in list a."""
    return len([v for v in a if v <= x])
//- unittest/loader.py
"""Loading unittests: find the tests of a module, kept sorted by the bisect module."""

class TestLoader:
    """Loads the tests of a module, the tests of a test case, the tests a name gives."""

    def loadTestsFromModule(self, module):
        """Return a suite of all the tests of the module."""
        return [t for t in dir(module) if t.startswith("test")]
//- unittest/main.py
"""Run the tests of a module from the command line (a bisect module of its own)."""

class TestProgram:
    """Runs the tests of a module: the tests a test module holds, the module's tests."""

    def runTests(self, module):
        return module
//- test/test_loader.py
import unittest

class LoaderTests(unittest.TestCase):
    def test_module(self):
        self.assertTrue(unittest.loader.TestLoader().loadTestsFromModule(unittest))
//- test/test_main.py
import unittest

class MainTests(unittest.TestCase):
    def test_module(self):
        self.assertTrue(unittest.main.TestProgram().runTests(unittest))
//- test/test_bisect.py
import unittest
import bisect

class TestBisect(unittest.TestCase):
    def test_insort(self):
        a = [1, 3]
        bisect.insort(a, 2)
        self.assertEqual(a, [1, 2, 3])

    def test_bisect(self):
        self.assertEqual(bisect.bisect([1, 3], 2), 1)
"#,
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "where are the tests for the bisect module", &[], 4_000).result;
    let first = &a.items[0];
    assert_eq!(
        first.path.as_deref(),
        Some("test/test_bisect.py"),
        "{:?}",
        a.items
    );
    assert!(
        first
            .signals
            .iter()
            .any(|s| s.contains("tests named after the code found #1")),
        "{:?}",
        first.signals
    );
}

/// Acronyms side by side are a protocol and its commands: "FTP PASV" had been one name,
/// which no code holds verbatim, so the question abstained with ftplib's `makepasv` its
/// best match.
#[test]
fn fault_a_protocol_and_its_command_were_one_unknown_name() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "ftplib.py",
        "class FTP:\n    \"\"\"An FTP client.\"\"\"\n    def makepasv(self):\n        \"\"\"Send PASV and parse the reply into a host and port for passive mode.\"\"\"\n        return self.sendcmd('PASV')\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "how does FTP PASV mode work", &[], 2_000).result;
    assert!(!a.abstained, "{:?}", a.unknown_names);
    assert!(a.unknown_names.is_empty(), "{:?}", a.unknown_names);
    assert_eq!(a.items[0].path.as_deref(), Some("ftplib.py"));
}

/// The files using a named definition answer "which files use X, what would I break": doc
/// sections holding the question's other words ("files", "use") had come first.
#[test]
fn fault_doc_sections_sharing_a_dependents_questions_words_came_before_the_dependents() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/lazy_buffer.rs",
        "/// A buffer filled from an iterator on demand.\npub struct LazyBuffer {\n    items: Vec<u8>,\n}\n",
    );
    write(
        dir.path(),
        "src/combinations.rs",
        "use crate::lazy_buffer::LazyBuffer;\n\npub struct Combinations {\n    pool: LazyBuffer,\n}\n",
    );
    write(
        dir.path(),
        "README.md",
        "# Tools\n\n## Usage\n\nTo use these files, copy the files into your project and use them from there; the files would break if changed.\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "which files use LazyBuffer, what would I break by changing it",
        &[],
        4_000,
    )
    .result;
    let at = |id: &str| a.items.iter().position(|i| i.id == id);
    let user = at("src/combinations.rs").expect("the user is served");
    let doc = at("README.md#Usage").expect("the doc section is served");
    assert!(user < doc, "{:?}", a.items);
}

/// A capitalized word inside a sentence that a type is named ("the Teddy SIMD prefilter")
/// names that type; the file richest in the question's other words ("prefilter") had led.
/// A variant or constant of that name is not named: `Unicode` in a question is the word.
#[test]
fn fault_a_type_named_as_a_proper_noun_was_not_named() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/packed/teddy/generic.rs",
        "/// The Teddy SIMD searcher for a few short patterns.\npub struct Teddy {\n    masks: Vec<u8>,\n}\n",
    );
    write(
        dir.path(),
        "src/util/prefilter.rs",
        "//! Prefilter: a prefilter picks a prefilter strategy; every prefilter is a prefilter.\n\npub enum Strategy {\n    Unicode,\n    Teddy,\n}\n\npub fn prefilter() -> Strategy {\n    Strategy::Unicode\n}\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "where is the Teddy SIMD prefilter implemented",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained, "{} {:?}", a.best_relevance, a.unknown_names);
    assert_eq!(
        a.items[0].id, "src/packed/teddy/generic.rs#Teddy@struct",
        "{:?}",
        a.items
    );
    let a = ask(&ws, "how is Unicode handled by the prefilter", &[], 2_000).result;
    assert_nothing_named(&a);
}

/// A protocol's version is a name of its own: "HTTP/2" had been checked as "HTTP", which
/// any HTTP code holds, so a question about HTTP/2 server push was answered from an HTTP/1.1
/// server.
#[test]
fn fault_a_protocol_version_in_the_question_was_checked_as_the_bare_protocol() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "http/server.py",
        "class HTTPServer:\n    \"\"\"An HTTP/1.1 server: push the response headers, then the body.\"\"\"\n    def push_headers(self, headers):\n        return headers\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "how do I enable HTTP/2 server push", &[], 2_000).result;
    assert!(a.abstained, "{:?}", a.items);
    assert_eq!(a.unknown_names, ["HTTP/2"]);
    // Abstaining above the floor says why: not "relevant enough … at relevance 16.8,
    // floor 10.5", which reads as a contradiction.
    let last = a.markdown.lines().last().unwrap_or_default();
    assert!(a.best_relevance >= 10.5, "{}", a.best_relevance);
    assert_eq!(
        last,
        format!(
            "Nothing in memory, code or docs answers `how do I enable HTTP/2 server push`: it names what they do not hold; the best candidate, `{}` at relevance {:.1}, is about something else. Read the code directly.",
            a.best_candidate.as_deref().unwrap_or_default(),
            a.best_relevance
        )
    );
    // The version the code holds is no unknown name.
    let a = ask(&ws, "how does the HTTP/1.1 server push headers", &[], 2_000).result;
    assert!(a.unknown_names.is_empty(), "{:?}", a.unknown_names);
    assert_eq!(a.items[0].path.as_deref(), Some("http/server.py"));
}

/// A question about what depends on a file asks in words of its own ("would break if I
/// changed"): after the dependents, code that happened to hold those words had been
/// served (`filename_changed_hook`, `get_break`).
#[test]
fn fault_a_dependents_question_served_code_holding_its_cue_words() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "quopri.py",
        "def encodestring(s):\n    \"\"\"Encode a string as quoted-printable.\"\"\"\n    return s\n",
    );
    write(
        dir.path(),
        "encoders.py",
        "import quopri\n\ndef encode_quopri(msg):\n    return quopri.encodestring(msg)\n",
    );
    write(
        dir.path(),
        "hooks.py",
        "def filename_changed_hook(changed):\n    \"\"\"Would break when the file changed.\"\"\"\n    if changed:\n        return 'break'\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "Which modules would break if I changed quopri.py?",
        &[],
        2_000,
    )
    .result;
    assert_eq!(a.items[0].id, "encoders.py");
    assert!(
        a.items
            .iter()
            .all(|i| i.path.as_deref() != Some("hooks.py")),
        "{:?}",
        a.items.iter().map(|i| &i.id).collect::<Vec<_>>()
    );
}

/// A question about the tests of a definition it names is answered by the tests using it:
/// "where are the tests for shlex.split in POSIX mode?" had served the test file richest
/// in "posix", "mode" and "tests" before the one calling `shlex.split`.
#[test]
fn fault_the_tests_of_a_named_function_ranked_after_tests_sharing_its_words() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "shlex.py",
        "def split(s, comments=False, posix=True):\n    \"\"\"Split the string s using shell-like syntax.\"\"\"\n    return s.split()\n",
    );
    write(
        dir.path(),
        "test/test_shlex.py",
        "import shlex\n\nclass ShlexTest:\n    def testSplit(self):\n        self.assertEqual(shlex.split('a b'), ['a', 'b'])\n\n    def testCompat(self):\n        self.assertEqual(shlex.split('a \"b\"', posix=False), ['a', '\"b\"'])\n",
    );
    write(
        dir.path(),
        "test/test_posix.py",
        "import os\n\nclass PosixTester:\n    \"\"\"Tests of POSIX mode: the posix mode bits, posix tests of mode changes.\"\"\"\n\n    def test_mode(self):\n        # posix mode tests: chmod sets the mode in POSIX mode\n        os.chmod('f', 0o644)\n\n    def test_posix_mode(self):\n        self.assertTrue(os.stat('f').st_mode)\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "Where are the tests for shlex.split in POSIX mode?",
        &[],
        2_000,
    )
    .result;
    let tests: Vec<&str> = a
        .items
        .iter()
        .filter_map(|i| i.path.as_deref())
        .filter(|p| p.starts_with("test/"))
        .collect();
    assert_eq!(tests.first(), Some(&"test/test_shlex.py"), "{:?}", a.items);
}

/// Text that asks nothing is pasted (an error, a log line): its sentences are searched
/// verbatim and the names in it are not what it asks about. Tokio's "timers are disabled.
/// Call `enable_time` on the runtime builder" had served `Builder::enable_time` first,
/// for its name, before the code raising the message.
#[test]
fn fault_a_pasted_message_served_the_function_it_names_before_the_code_raising_it() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/runtime/builder.rs",
        "pub struct Builder { enable_time: bool }\n\nimpl Builder {\n    /// Enables the time driver: timers, sleeps and timeouts on the runtime.\n    pub fn enable_time(&mut self) -> &mut Self {\n        self.enable_time = true;\n        self\n    }\n\n    /// Enables the I/O driver of the runtime.\n    pub fn enable_io(&mut self) -> &mut Self {\n        self\n    }\n}\n",
    );
    write(
        dir.path(),
        "src/runtime/driver.rs",
        "pub struct Handle { time: Option<TimeHandle> }\n\nimpl Handle {\n    pub fn time(&self) -> &TimeHandle {\n        self.time\n            .as_ref()\n            .expect(\"A Tokio 1.x context was found, but timers are disabled. Call `enable_time` on the runtime builder to enable timers.\")\n    }\n}\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "A Tokio 1.x context was found, but timers are disabled. Call `enable_time` on the runtime builder to enable timers.",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained, "{}", a.markdown);
    assert_eq!(
        a.items.first().map(|i| i.id.as_str()),
        Some("src/runtime/driver.rs#Handle.time@method"),
        "{:?}",
        a.items
    );
}

/// A question about dependents that names a module by its bare name is about that
/// module: "what depends on fnmatch in the standard library" had listed the dependents of
/// the file best matching "standard library" instead of fnmatch's importers.
#[test]
fn fault_a_dependents_question_naming_a_module_by_name_served_another_files_dependents() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "fnmatch.py",
        "def fnmatch(name, pat):\n    return name == pat\n",
    );
    write(
        dir.path(),
        "glob.py",
        "import fnmatch\n\ndef glob(pat):\n    return fnmatch.fnmatch('a', pat)\n",
    );
    write(
        dir.path(),
        "shutil.py",
        "import fnmatch\n\ndef ignore_patterns(*pats):\n    return [fnmatch.fnmatch('a', p) for p in pats]\n",
    );
    write(
        dir.path(),
        "distutils/sdist.py",
        "\"\"\"Add the standard files of the standard library: standard library defaults.\n\nThe standard library's fnmatch patterns select the standard files.\n\"\"\"\n\ndef add_defaults_standards(files):\n    \"\"\"The standard library's standard files.\"\"\"\n    return files\n",
    );
    write(
        dir.path(),
        "distutils/bdist.py",
        "from distutils import sdist\n\ndef run():\n    return sdist.add_defaults_standards([])\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "what depends on fnmatch in the standard library",
        &[],
        2_000,
    )
    .result;
    let dependents: Vec<&str> = a
        .items
        .iter()
        .filter(|i| i.text.contains("depends directly on"))
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(dependents, ["glob.py", "shutil.py"], "{:?}", a.items);
}

/// A path written out in a question is text the code holds verbatim: "where does chrono
/// find the local timezone on Linux (/etc/localtime)" had served the code richest in
/// "find", "local" and "timezone" before the code reading `/etc/localtime`.
#[test]
fn fault_a_path_written_in_the_question_was_not_searched_verbatim() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/offset/local/tz_data.rs",
        "/// Finds the local timezone in the Android tzdata: the local timezone index, found by name.\npub fn find_timezone(name: &str) -> Option<usize> {\n    // find the local timezone; Linux and Android timezone lookups find local zones\n    name.find(\"timezone\")\n}\n",
    );
    write(
        dir.path(),
        "src/offset/local/unix.rs",
        "pub fn current_zone() -> Option<Vec<u8>> {\n    std::fs::read(\"/etc/localtime\").ok()\n}\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "where does chrono find the local timezone on Linux (/etc/localtime)",
        &[],
        2_000,
    )
    .result;
    assert_eq!(
        a.items.first().and_then(|i| i.path.as_deref()),
        Some("src/offset/local/unix.rs"),
        "{:?}",
        a.items
    );
}

/// Fault from a fresh-user trial: every answer in a corpus of three crates opened with
/// "doc `anyhow/README.md#Details` has 1 open contradiction(s)", questions about the other
/// crates included: the banner was given for a candidate the answer did not serve.
#[test]
fn fault_a_banner_warned_about_a_doc_the_answer_did_not_serve() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    files(
        root,
        r#"
//- globs/src/set.rs
/// Matches one path against many glob patterns at once.
pub fn match_many(path: &str, patterns: &[&str]) -> Vec<usize> {
    patterns.iter().enumerate().filter(|(_, p)| path.ends_with(*p)).map(|(i, _)| i).collect()
}
//- errors/README.md
# errors

## Details

Errors wrap a path and the patterns that failed; see `errors/src/wrap.rs`.
"#,
    );
    // Eight more functions the question matches better than the doc.
    for i in 0..8 {
        write(
            root,
            &format!("globs/src/m{i}.rs"),
            &format!(
                "/// Matches one path against many patterns, variant {i}.\npub fn match_{i}(path: &str, patterns: &[&str]) -> bool {{\n    patterns.contains(&path)\n}}\n"
            ),
        );
    }
    let mut ws = Workspace::open(root, Some(&root.join("loci.db"))).unwrap();
    ws.scan(&|_| {}).unwrap();
    ws.lint().unwrap();
    let a = ask(
        &ws,
        "how is one path matched against many patterns",
        &[],
        2_000,
    )
    .result;
    let served: Vec<&str> = a.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(served.len(), 10);
    assert_eq!(served.last(), Some(&"errors/README.md#Details"));
    assert_eq!(
        a.banners,
        [
            "⚠ doc `errors/README.md#Details` has 1 open contradiction(s) with the code; verify before relying on it (`loci lint`)"
        ]
    );
    // A budget that leaves the doc out gives no banner about it.
    let a = ask(
        &ws,
        "how is one path matched against many patterns",
        &[],
        80,
    )
    .result;
    let served: Vec<&str> = a.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(served.len(), 1, "{served:?}");
    assert!(served[0].starts_with("globs/src/m"), "{served:?}");
    assert!(a.banners.is_empty(), "{:?}", a.banners);
    assert!(!a.markdown.contains("errors/README.md"), "{}", a.markdown);
}

/// Fault from a fresh-user trial: "convert an RGB colour to hue/lightness/saturation"
/// abstained on the stdlib (9.4 < 10.5) while the same question spelled "color" found
/// `colorsys.py`: a word in the other English spelling matched nothing.
#[test]
fn fault_a_question_in_british_spelling_matched_nothing_of_the_american_code() {
    let (dir, mut ws) = empty_workspace();
    files(
        dir.path(),
        r#"
//- colorsys.py
"""Conversion functions between RGB and other color systems."""

def rgb_to_hls(r, g, b):
    """Convert an RGB color to hue, lightness and saturation."""
    return (r, g, b)
//- paint.py
def fill(canvas, rgb):
    """Fill the canvas with one RGB value."""
    return canvas
"#,
    );
    ws.scan(&|_| {}).unwrap();
    let answer = |q: &str| {
        let a = ask(&ws, q, &[], 2_000).result;
        (a.items[0].id.clone(), a.best_relevance)
    };
    let american = answer("convert an RGB color to hue and saturation");
    assert_eq!(american.0, "colorsys.py#rgb_to_hls@function");
    assert_eq!(
        answer("convert an RGB colour to hue and saturation"),
        american
    );
}

/// Fault from a fresh-user trial: "codecs StreamReader readline when a \r\n is split across
/// two reads" served `encodings/uu_codec.py`'s `StreamReader`: a name defined in a hundred
/// files names none of them, though the question's "codecs" names the module of one.
#[test]
fn fault_a_name_of_many_definitions_ignored_the_word_naming_its_module() {
    let (dir, mut ws) = empty_workspace();
    let mut fixture = String::from(
        r#"
//- codecs.py
class StreamReader:
    def readline(self, size=None):
        """Read one line; a CR at the end of one read and LF at the start of the next are one line end."""
        return self.read(size)
"#,
    );
    for name in ["ascii", "latin_1", "uu_codec", "utf_8", "cp1252"] {
        fixture.push_str(&format!(
            "//- encodings/{name}.py\nimport codecs\n\nclass StreamReader(codecs.StreamReader):\n    \"\"\"The {name} codec's reader: reads and decodes.\"\"\"\n"
        ));
    }
    files(dir.path(), &fixture);
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "codecs StreamReader readline when a line end is split across two reads",
        &[],
        2_000,
    )
    .result;
    assert_eq!(
        a.items[0].id, "codecs.py#StreamReader@class",
        "{:?}",
        a.items
    );
    assert!(
        a.items[0]
            .signals
            .iter()
            .any(|s| s.starts_with("named in the question (`StreamReader`)")),
        "{:?}",
        a.items[0].signals
    );
}

/// Fault from a fresh-user trial: `re.compile raises error "unterminated character set"
/// where is this thrown` served `re.compile` first (+15, named), the code raising the
/// message third: a definition named beside a message the code holds is context.
#[test]
fn fault_a_named_definition_beside_a_quoted_message_came_before_the_code_raising_it() {
    let (dir, mut ws) = empty_workspace();
    files(
        dir.path(),
        r#"
//- re/__init__.py
from . import _parser

def compile(pattern, flags=0):
    """Compile a regular expression pattern, returning a Pattern object."""
    return _parser.parse(pattern, flags)
//- re/_parser.py
class error(Exception):
    pass

def parse(source, flags):
    if source.endswith("["):
        raise error("unterminated character set")
    return source
"#,
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "re.compile raises error \"unterminated character set\" where is this thrown",
        &[],
        2_000,
    )
    .result;
    assert_eq!(
        a.items[0].path.as_deref(),
        Some("re/_parser.py"),
        "{:?}",
        a.items
    );
    let compile = a
        .items
        .iter()
        .find(|i| i.id == "re/__init__.py#compile@function")
        .unwrap();
    assert!(
        !compile
            .signals
            .iter()
            .any(|s| s.starts_with("named in the question")),
        "{:?}",
        compile.signals
    );
}

/// Fault from a fresh-user trial: "tomllib TOMLDecodeError Cannot overwrite a value" and
/// "why does the base64 DecoderReader hold bytes back" abstained at relevance 41.7 and 38.9
/// (floor 10.5): a class written beside a capitalized word made one name with it, held
/// nowhere. A word that names a definition is no word of a longer name; a name of two
/// characters (`when='W0'`) is too short to be unknown; a run of words none of which is
/// defined still is (`JSON Schema`).
#[test]
fn fault_a_class_beside_a_capitalized_word_was_one_unknown_name() {
    let (dir, mut ws) = empty_workspace();
    files(
        dir.path(),
        r#"
//- tomllib/_parser.py
class TOMLDecodeError(ValueError):
    """An error raised if a document is not valid TOML."""

def key_value_rule(src, pos, out):
    """Parse one key/value pair into the output tables."""
    if out.flags.is_(key, "frozen"):
        raise TOMLDecodeError("Cannot overwrite a value")
    return pos

def rollover(when):
    """The next rollover of a rotating handler: W0 to W6 are weekdays."""
    return when
//- json/decoder.py
def decode(document):
    """Decode a JSON document; no schema is validated."""
    return document
"#,
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "tomllib TOMLDecodeError Cannot overwrite a value when same key defined in two tables",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained, "{:?}", a.unknown_names);
    assert_eq!(a.items[0].path.as_deref(), Some("tomllib/_parser.py"));
    let a = ask(
        &ws,
        "a rotating handler with when='X9', what is its next rollover",
        &[],
        2_000,
    )
    .result;
    assert!(!a.abstained, "{:?}", a.unknown_names);
    let a = ask(
        &ws,
        "validate a JSON document against a JSON Schema",
        &[],
        2_000,
    )
    .result;
    assert!(a.abstained);
    assert_eq!(a.unknown_names, ["JSON Schema"]);
}

/// Fault from a fresh-user trial: "which modules depend on email._header_value_parser"
/// abstained (best candidate 3.7) though `email/_header_value_parser.py` written as a path
/// answered it: a dotted Python module name named no file.
#[test]
fn fault_a_dotted_module_name_named_no_file() {
    let (dir, mut ws) = empty_workspace();
    files(
        dir.path(),
        r#"
//- email/_header_value_parser.py
class TokenList(list):
    """A list of tokens."""
//- email/headerregistry.py
from email import _header_value_parser as parser

def parse(value):
    return parser.TokenList(value)
//- email/__init__.py
//- smtpd.py
from email._header_value_parser import TokenList
//- mailbox.py
import email
"#,
    );
    ws.scan(&|_| {}).unwrap();
    for q in [
        "which modules depend on email._header_value_parser",
        "which modules depend on `email._header_value_parser`?",
    ] {
        let a = ask(&ws, q, &[], 2_000).result;
        let dependents: Vec<&str> = a
            .items
            .iter()
            .filter(|i| i.text.contains("depends directly on"))
            .map(|i| i.id.as_str())
            .collect();
        assert_eq!(
            dependents,
            ["email/headerregistry.py", "smtpd.py"],
            "{q}: {:?}",
            a.items
        );
    }
}

/// Fault from a fresh-user trial: "which modules depend on email/_header_value_parser.py"
/// listed its three dependents, then a dozen index lines at score 4 (floor 10.5):
/// `_sysconfigdata`'s build variables, a README's headings, `modulefinder` methods, each
/// matching one word. A candidate relevant at less than half the floor is no pointer.
#[test]
fn fault_pointers_far_below_the_floor_followed_the_answer() {
    let (dir, mut ws) = empty_workspace();
    files(
        dir.path(),
        r#"
//- email/_header_value_parser.py
class TokenList(list):
    """A list of tokens."""
//- email/headerregistry.py
from email import _header_value_parser as parser

def parse(value):
    return parser.TokenList(value)
//- modulefinder.py
class ModuleFinder:
    def find_all_modules(self):
        """Every module of a path."""
        return []
//- _sysconfigdata.py
build_time_vars = {'MODLIBS': 'modules of the build', 'DEPENDS': 'parser headers value'}
"#,
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "which modules depend on email/_header_value_parser.py",
        &[],
        2_000,
    )
    .result;
    let items: Vec<(&str, f64)> = a
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.relevance))
        .collect();
    assert!(a.floor > 0.0);
    assert_eq!(items[0].0, "email/headerregistry.py");
    assert!(
        items.iter().all(|(_, r)| *r >= a.floor / 2.0),
        "floor {}: {items:?}",
        a.floor
    );
}

/// Fault from a fresh-user trial: "if I change resolve_enclosed's parameters, which call
/// sites need updating" answered with the dependents of `compression.rs` (its
/// `InstantiationParameters`): a bare name's possessive was taken for a crate's and named
/// nothing.
#[test]
fn fault_a_functions_possessive_named_nothing() {
    let (dir, mut ws) = empty_workspace();
    files(
        dir.path(),
        r#"
//- zip/src/read.rs
pub fn resolve_enclosed(path: &str) -> String {
    path.to_string()
}
//- zip/src/extract.rs
use crate::read::resolve_enclosed;

pub fn extract(path: &str) -> String {
    resolve_enclosed(path)
}
//- zip/src/compression.rs
/// The parameters a compression method is instantiated with.
pub struct InstantiationParameters {
    level: u8,
}
"#,
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "if I change resolve_enclosed's parameters, which call sites need updating",
        &[],
        2_000,
    )
    .result;
    assert_eq!(a.items[0].id, "zip/src/extract.rs", "{:?}", a.items);
}

/// Fault from a fresh-user trial: "I'm reworking tokenizers' utils/cache.rs. Which files
/// depend on it directly?" listed the dependents of another file: a path written from a
/// folder inside the repository named no file in a question, where `loci impact
/// utils/cache.rs` found the one mapped path ending in it.
#[test]
fn fault_a_partial_path_in_a_question_named_no_file() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "tok/utils/cache.py",
        "class Cache:\n    \"\"\"Words already tokenized.\"\"\"\n",
    );
    write(
        dir.path(),
        "tok/models/bpe.py",
        "from tok.utils.cache import Cache\n\ndef model():\n    return Cache()\n",
    );
    write(
        dir.path(),
        "proto/reflect/building.py",
        "\"\"\"Reworking files: building depends on the reworked files directly.\"\"\"\nfrom proto.reflect.cache import Cache\n\ndef rework_files():\n    return Cache()\n",
    );
    write(
        dir.path(),
        "proto/reflect/cache.py",
        "class Cache:\n    \"\"\"Reworked files, directly.\"\"\"\n",
    );
    write(
        dir.path(),
        "proto/reflect/dynamic.py",
        "from proto.reflect.building import rework_files\n\ndef f():\n    return rework_files()\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(
        &ws,
        "I'm reworking tokenizers' utils/cache.py. Which files depend on it directly?",
        &[],
        2_000,
    )
    .result;
    let dependents: Vec<&str> = a
        .items
        .iter()
        .filter(|i| i.text.contains("depends directly on"))
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(dependents, ["tok/models/bpe.py"], "{:?}", a.items);
}

/// Fault from a fresh-user trial: a question quoting rand's "p=1.5 is outside range [0.0,
/// 1.0]" found `rng.rs` and served its test of that panic, not `random_bool`, which
/// raises it: a file's tests (a Rust `mod tests`) come after its other chunks unless the
/// question is about tests.
#[test]
fn fault_a_files_own_test_was_served_before_the_code_raising_the_message() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "src/rng.rs",
        "/// A bool that is true with probability `p`.\npub fn random_bool(p: f64) -> bool {\n    assert!(p <= 1.0, \"p={p} is outside range [0.0, 1.0]\");\n    p > 0.5\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    #[should_panic(expected = \"p=1.5 is outside range [0.0, 1.0]\")]\n    fn test_random_bool_outside_range_panics_for_p() {\n        // p=1.5 is outside range [0.0, 1.0]: the range panics\n        super::random_bool(1.5);\n    }\n}\n",
    );
    ws.scan(&|_| {}).unwrap();
    let a = ask(&ws, "p=1.5 is outside range [0.0, 1.0]", &[], 2_000).result;
    let ids: Vec<&str> = a.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(
        ids.first(),
        Some(&"src/rng.rs#random_bool@function"),
        "{ids:?}"
    );
    let about_tests = ask(
        &ws,
        "which test checks p=1.5 is outside range [0.0, 1.0]",
        &[],
        2_000,
    )
    .result;
    let ids: Vec<&str> = about_tests.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(
        ids.first(),
        Some(&"src/rng.rs#tests.test_random_bool_outside_range_panics_for_p@function"),
        "{ids:?}"
    );
}

/// Fault from a fresh-user trial: "where is NoSuchClass.method defined" answered at full
/// relevance with whatever held its words: a name of several words counted as held where
/// prose has them side by side ("if no such class is registered"). It is held only where
/// its joined form is, as every identifier of the index has it (`NoSuchClass`,
/// `no_such_class`).
#[test]
fn fault_a_made_up_class_name_was_held_by_prose_of_its_words() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "registry.py",
        "def lookup_method(name):\n    \"\"\"Raise if no such class is registered: where the method is defined.\"\"\"\n    raise KeyError(name)\n\nclass RegistryClass:\n    def method(self):\n        return lookup_method('x')\n",
    );
    ws.scan(&|_| {}).unwrap();
    let made_up = ask(&ws, "where is NoSuchClass.method defined", &[], 2_000).result;
    assert!(made_up.abstained, "{:?}", made_up.items);
    assert_eq!(made_up.unknown_names, ["NoSuchClass"]);
    let real = ask(&ws, "where is RegistryClass.method defined", &[], 2_000).result;
    assert!(!real.abstained);
    assert!(real.unknown_names.is_empty());
}

/// Fault from a fresh-user trial: "where is `crypt.METHOD_BLOWFISH` defined" abstained as
/// naming what the code does not hold, with `crypt.py` its best candidate at three times
/// the floor: `crypt.py` builds its `METHOD_*` names at run time, and only tests read them.
/// A name code reads on a module it imports is one that module provides.
#[test]
fn fault_a_name_a_module_builds_at_run_time_was_an_unknown_name() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "crypt.py",
        "methods = []\n\ndef _add_method(name, *args):\n    \"\"\"Register a hashing method and export it as a module constant.\"\"\"\n    method = (name, args)\n    globals()['METHOD_' + name] = method\n    methods.append(method)\n\n_add_method('BLOWFISH', '2b', 22)\n",
    );
    write(
        dir.path(),
        "test/test_crypt.py",
        "import crypt\n\ndef test_blowfish():\n    assert crypt.METHOD_BLOWFISH in crypt.methods\n",
    );
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "where is crypt.METHOD_BLOWFISH defined", &[], 2_000).result;
    assert!(
        answer.unknown_names.is_empty(),
        "{:?}",
        answer.unknown_names
    );
    let made_up = ask(&ws, "where is crypt.METHOD_TWOFISH defined", &[], 2_000).result;
    assert_eq!(
        made_up.unknown_names,
        ["crypt.METHOD_TWOFISH", "METHOD_TWOFISH"]
    );
}

/// Fault from a fresh-user trial: "If I change the transform/capitalize/lowercase helpers
/// in heck's lib.rs, which files break?" answered that ring's `target.h` depends directly
/// on `asm_base.h`: `lib.rs`, which every crate has, named no file, so the best text hit
/// became the target, and a C header naming another in a comment ("include those
/// headers") was taken for a dependent. A file name many paths end in names the one below a
/// folder another word of the question names; a C or C++ file's name in another file's
/// text is no dependent (they are used through `#include`s, and named in comments).
#[test]
fn fault_a_possessive_crate_file_and_a_header_in_a_comment_made_a_false_dependent() {
    let (dir, mut ws) = empty_workspace();
    let root = dir.path();
    write(
        root,
        "heck/src/lib.rs",
        "mod kebab;\npub fn transform(s: &str) -> String {\n    s.to_lowercase()\n}\n",
    );
    write(
        root,
        "heck/src/kebab.rs",
        "use crate::transform;\npub fn kebab(s: &str) -> String {\n    transform(s)\n}\n",
    );
    write(
        root,
        "ring/src/lib.rs",
        "mod digest;\npub fn helpers() {}\n",
    );
    write(
        root,
        "ring/src/digest.rs",
        "pub fn helpers_lowercase_transform() {}\n",
    );
    write(
        root,
        "ring/include/asm_base.h",
        "#include <ring/target.h>\nvoid transform_capitalize_lowercase_helpers(void);\n",
    );
    write(
        root,
        "ring/include/target.h",
        "// Prefer to include asm_base.h and base.h.\nint lowercase_helpers;\n",
    );
    ws.scan(&|_| {}).unwrap();
    let dependents = |question: &str| -> Vec<String> {
        let a = ask(&ws, question, &[], 2_000).result;
        a.items
            .iter()
            .filter(|i| i.text.contains("depends directly on"))
            .map(|i| i.id.clone())
            .collect()
    };
    assert_eq!(
        dependents(
            "If I change the transform/capitalize/lowercase helpers in heck's lib.rs, which files break?"
        ),
        ["heck/src/kebab.rs"]
    );
    assert_eq!(
        dependents("If I change asm_base.h what breaks?"),
        Vec::<String>::new()
    );
}

/// Fault from a fresh-user trial: "what does the less-safe-getrandom-espidf feature turn
/// on?" abstained, while `less-safe-getrandom-espidf` alone answered at relevance 30: two
/// files hold `espidf` and lead the whole-file index, but the files full of the common
/// word lead the fusion, and only the first three fused files' share of the question set
/// the answer's relevance. The file an index ranks first counts too.
#[test]
fn fault_a_rare_word_beside_a_common_one_abstained() {
    let (dir, mut ws) = empty_workspace();
    let root = dir.path();
    // `espidf` in one long doc comment (last in the chunk index, first in the whole-file
    // one); `cpu` in short definitions of twelve files; a hundred files of neither.
    let table: String = (0..60)
        .map(|i| format!("//! <tr><td><code>option-{i}</code></td><td>enables item {i} of the table</td></tr>\n"))
        .collect();
    write(
        root,
        "src/lib.rs",
        &format!("{table}//! espidf: the espidf backend, as espidf names it\nmod fill0;\n"),
    );
    let cpu: String = (0..30)
        .map(|j| format!("/// cpu\npub fn f{j}() {{}}\n"))
        .collect();
    for i in 0..12 {
        write(root, &format!("src/cpu{i}.rs"), &cpu);
    }
    for i in 0..100 {
        write(
            root,
            &format!("src/fill{i}.rs"),
            &format!("pub fn g{i}() {{}}\n"),
        );
    }
    ws.scan(&|_| {}).unwrap();
    let answer = ask(&ws, "espidf cpu", &[], 2_000).result;
    assert!(
        !answer.abstained,
        "{} {:?}",
        answer.best_relevance, answer.best_candidate
    );
}

/// Fault from a fresh-user trial: "where does the case conversion crate decide where one
/// word ends …, or inside an acronym like XMLHttp?" abstained as naming what the code does
/// not hold, its best candidate the right file at 17.2: heck's tests hold
/// `XMLHttpRequest`, which the question cut short. A name of seven or more letters is held
/// where an identifier starts with it.
#[test]
fn fault_a_name_cut_short_in_a_question_was_an_unknown_name() {
    let (dir, mut ws) = empty_workspace();
    write(
        dir.path(),
        "heck/src/lib.rs",
        "/// Splits `s` into words at case changes.\npub fn transform(s: &str) -> Vec<String> {\n    vec![s.to_string()]\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn acronym() {\n        super::transform(\"XMLHttpRequest\");\n    }\n}\n",
    );
    ws.scan(&|_| {}).unwrap();
    let cut = ask(
        &ws,
        "where are words split inside an acronym like XMLHttp?",
        &[],
        2_000,
    )
    .result;
    assert!(cut.unknown_names.is_empty(), "{:?}", cut.unknown_names);
    let made_up = ask(
        &ws,
        "where are words split inside an acronym like XMLRpcProxy?",
        &[],
        2_000,
    )
    .result;
    assert_eq!(made_up.unknown_names, ["XMLRpcProxy"]);
}

/// Fault from the crates development set: "where are the spellings that count as true or
/// false for boolean-ish argument values (y/yes/on/1 and friends)" and "the table that
/// maps file type names like 'rust' or 'py' to filename globs" missed the table holding
/// them (`str_to_bool.rs`, `default_types.rs`): the files richest in the common words led
/// every index. Values a question lists are held together by the file that answers it.
#[test]
fn fault_values_a_question_lists_were_words_apart() {
    let (dir, mut ws) = empty_workspace();
    let root = dir.path();
    write(
        root,
        "src/util/str_to_bool.rs",
        "pub const TRUE_LITERALS: [&str; 4] = [\"y\", \"yes\", \"on\", \"1\"];\n\
         pub const FALSE_LITERALS: [&str; 4] = [\"n\", \"no\", \"off\", \"0\"];\n",
    );
    // Files full of the question's words, each holding some of the values apart.
    let words: String = (0..20)
        .map(|j| {
            format!(
                "/// The CLI argument value parser: true or false, yes, spellings count.\n\
                 pub fn value_{j}(on: bool) -> bool {{ on }}\n"
            )
        })
        .collect();
    for i in 0..8 {
        write(root, &format!("src/parser/arg{i}.rs"), &words);
    }
    ws.scan(&|_| {}).unwrap();
    // The ranking is asked, whatever the relevance of so small a corpus.
    let answer = ws
        .context(&ContextRequest {
            query: "Where are the spellings that count as true or false for boolean-ish argument values (y/yes/on/1 and friends) in the CLI parser?".into(),
            open_files: Vec::new(),
            budget: Some(4_000),
            floor: Some(-1000.0),
        })
        .unwrap()
        .result;
    let paths: Vec<&str> = answer
        .items
        .iter()
        .filter_map(|i| i.path.as_deref())
        .collect();
    assert_eq!(paths.first(), Some(&"src/util/str_to_bool.rs"), "{paths:?}");
}
