//! Conversions at the protocol edge (style.md rule 1): loci's plain data with byte spans
//! to LSP types, through the negotiated encoding.

use std::sync::Arc;

use loci_core::{FileAnalysis, SymbolKind};
use loci_engine::map::FileSymbol;
use serde_json::{Value, json};
use tower_lsp_server::ls_types::{
    self as lsp, Diagnostic, DiagnosticSeverity, DocumentSymbol, NumberOrString, Range,
};

use crate::findings::{Finding, Severity};
use crate::position::{Encoding, LineIndex};

/// Where a [`View`]'s symbols come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The open document's overlay (its current buffer).
    Overlay,
    /// The stored map (the file as last scanned), positioned on `View::text`.
    Map,
}

/// One symbol of a [`View`], with byte spans into `View::text`.
#[derive(Clone, Debug)]
pub(crate) struct ViewSymbol {
    pub key: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: SymbolKind,
    pub span: (u32, u32),
    pub name_span: (u32, u32),
    pub signature: String,
    pub doc: Option<String>,
    pub parent: Option<usize>,
}

/// A use of a name, with its byte span.
#[derive(Clone, Debug)]
pub(crate) struct ViewRef {
    pub name: String,
    pub span: (u32, u32),
}

/// What one document holds, from the overlay or the map, on one text.
#[derive(Clone, Debug)]
pub(crate) struct View {
    pub source: Source,
    pub text: Arc<str>,
    pub index: LineIndex,
    pub symbols: Vec<ViewSymbol>,
    pub refs: Vec<ViewRef>,
    /// The language name, for code fences.
    pub language: Option<&'static str>,
    /// Set when the analysis is incomplete (parse timeout, too deep).
    pub degraded: Option<String>,
}

impl View {
    /// The view of an overlay analysis.
    pub(crate) fn from_analysis(
        text: Arc<str>,
        index: LineIndex,
        analysis: &FileAnalysis,
        language: Option<&'static str>,
    ) -> View {
        let symbols = analysis
            .symbols
            .iter()
            .map(|s| ViewSymbol {
                key: s.key.clone(),
                name: s.name.clone(),
                qualified_name: s.qualified_name.clone(),
                kind: s.kind,
                span: (s.span.start, s.span.end),
                name_span: (s.name_span.start, s.name_span.end),
                signature: s.signature.clone(),
                doc: s.doc.clone(),
                parent: s.parent.map(|p| p as usize),
            })
            .collect();
        let refs = analysis
            .refs
            .iter()
            .map(|r| ViewRef {
                name: r.name.clone(),
                span: (r.span.start, r.span.end),
            })
            .collect();
        View {
            source: Source::Overlay,
            text,
            index,
            symbols,
            refs,
            language,
            degraded: analysis.degraded.as_ref().map(degraded_reason),
        }
    }

    /// The view of the map's symbols of a file, positioned on `text`. Symbols whose name
    /// is not at their recorded name span in `text` are dropped (the text changed since
    /// the scan): an honest gap beats a wrong position.
    pub(crate) fn from_map(
        text: Arc<str>,
        index: LineIndex,
        symbols: &[FileSymbol],
        language: Option<&'static str>,
    ) -> View {
        let kept: Vec<&FileSymbol> = symbols
            .iter()
            .filter(|s| {
                text.get(s.name_start_byte as usize..s.name_end_byte as usize)
                    == Some(s.name.as_str())
                    && s.start_byte <= s.name_start_byte
                    && s.name_end_byte <= s.end_byte
            })
            .collect();
        let position = |key: &str| kept.iter().position(|s| s.key == key);
        let symbols = kept
            .iter()
            .map(|s| ViewSymbol {
                key: s.key.clone(),
                name: s.name.clone(),
                qualified_name: s.qualified_name.clone(),
                kind: SymbolKind::parse(&s.kind),
                span: (s.start_byte, s.end_byte),
                name_span: (s.name_start_byte, s.name_end_byte),
                signature: s.signature.clone(),
                doc: s.doc.clone(),
                parent: s.parent_key.as_deref().and_then(position),
            })
            .collect();
        View {
            source: Source::Map,
            text,
            index,
            symbols,
            refs: Vec::new(),
            language,
            degraded: None,
        }
    }

    /// The LSP range of a byte span.
    pub(crate) fn range(&self, (start, end): (u32, u32), encoding: Encoding) -> Range {
        Range {
            start: self.index.position(&self.text, start, encoding),
            end: self.index.position(&self.text, end, encoding),
        }
    }

    /// The innermost symbol whose name contains byte `offset` (an offset just past the
    /// name counts: the cursor sits after the last character).
    pub(crate) fn symbol_named_at(&self, offset: u32) -> Option<usize> {
        self.symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| s.name_span.0 <= offset && offset <= s.name_span.1)
            .min_by_key(|(_, s)| s.span.1 - s.span.0)
            .map(|(i, _)| i)
    }

    /// The reference whose name contains byte `offset`.
    pub(crate) fn ref_at(&self, offset: u32) -> Option<&ViewRef> {
        self.refs
            .iter()
            .find(|r| r.span.0 <= offset && offset <= r.span.1)
    }

    /// The symbols as a `textDocument/documentSymbol` tree.
    pub(crate) fn document_symbols(&self, encoding: Encoding) -> Vec<DocumentSymbol> {
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.symbols.len()];
        let mut top = Vec::new();
        for (i, s) in self.symbols.iter().enumerate() {
            match s.parent.filter(|p| *p < i) {
                Some(p) => children[p].push(i),
                None => top.push(i),
            }
        }
        // Iterative post-order build: children before parents, no recursion.
        let mut built: Vec<Option<DocumentSymbol>> = vec![None; self.symbols.len()];
        let mut order = Vec::with_capacity(self.symbols.len());
        let mut stack: Vec<usize> = top.clone();
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(children[i].iter().copied());
        }
        for &i in order.iter().rev() {
            let kids: Vec<DocumentSymbol> = children[i]
                .iter()
                .filter_map(|c| built[*c].take())
                .collect();
            built[i] = Some(self.document_symbol(i, kids, encoding));
        }
        top.iter().filter_map(|i| built[*i].take()).collect()
    }

    fn document_symbol(
        &self,
        i: usize,
        children: Vec<DocumentSymbol>,
        encoding: Encoding,
    ) -> DocumentSymbol {
        let s = &self.symbols[i];
        let range = self.range(s.span, encoding);
        let selection_range = self.range(s.name_span, encoding);
        #[allow(deprecated)]
        DocumentSymbol {
            name: s.name.clone(),
            detail: (!s.signature.is_empty()).then(|| s.signature.clone()),
            kind: symbol_kind(s.kind),
            tags: None,
            deprecated: None,
            range,
            selection_range,
            children: (!children.is_empty()).then_some(children),
        }
    }
}

/// The words for a degraded analysis.
pub(crate) fn degraded_reason(d: &loci_core::Degraded) -> String {
    match d {
        loci_core::Degraded::ParseTimeout { limit_ms } => {
            format!("parse stopped after {limit_ms} ms of parse work")
        }
        loci_core::Degraded::WallClockGuard { after_ms } => {
            format!("parse stopped by the wall-clock guard after {after_ms} ms")
        }
        loci_core::Degraded::TooDeep { limit } => {
            format!("nesting deeper than {limit} nodes was not read")
        }
    }
}

/// loci's symbol kind as an LSP symbol kind.
pub(crate) fn symbol_kind(kind: SymbolKind) -> lsp::SymbolKind {
    match kind {
        SymbolKind::Function | SymbolKind::Macro => lsp::SymbolKind::FUNCTION,
        SymbolKind::Method => lsp::SymbolKind::METHOD,
        SymbolKind::Class => lsp::SymbolKind::CLASS,
        SymbolKind::Struct | SymbolKind::Union => lsp::SymbolKind::STRUCT,
        SymbolKind::Enum => lsp::SymbolKind::ENUM,
        SymbolKind::Trait => lsp::SymbolKind::INTERFACE,
        SymbolKind::Interface => lsp::SymbolKind::INTERFACE,
        SymbolKind::Module => lsp::SymbolKind::MODULE,
        SymbolKind::Constant => lsp::SymbolKind::CONSTANT,
        SymbolKind::Type => lsp::SymbolKind::TYPE_PARAMETER,
        SymbolKind::Other => lsp::SymbolKind::VARIABLE,
    }
}

/// A finding as a diagnostic: `data` carries the finding's data and its actions, so a
/// code action needs nothing from server memory (style.md rule 8).
pub(crate) fn diagnostic(
    finding: &Finding,
    text: &str,
    index: &LineIndex,
    encoding: Encoding,
) -> Diagnostic {
    let severity = match finding.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Information => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    };
    Diagnostic {
        range: Range {
            start: index.position(text, finding.span.0, encoding),
            end: index.position(text, finding.span.1, encoding),
        },
        severity: Some(severity),
        code: Some(NumberOrString::String(finding.code.clone())),
        source: Some("loci".into()),
        message: finding.message.clone(),
        data: Some(json!({
            "finding": finding.data,
            "actions": finding.actions,
        })),
        ..Diagnostic::default()
    }
}

/// The text replacement a diagnostic's finding suggests (`finding.replace`), with the
/// action's title: "Replace with NEW/PATH" for a renamed path.
pub(crate) fn diagnostic_replacement(diagnostic: &Diagnostic) -> Option<(String, String)> {
    let new_text = diagnostic
        .data
        .as_ref()?
        .get("finding")?
        .get("replace")?
        .as_str()?
        .to_string();
    Some((format!("loci: replace with `{new_text}`"), new_text))
}

/// The actions a diagnostic's `data` carries (see [`diagnostic`]).
pub(crate) fn diagnostic_actions(diagnostic: &Diagnostic) -> Vec<(String, String, Value)> {
    let Some(actions) = diagnostic
        .data
        .as_ref()
        .and_then(|d| d.get("actions"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    actions
        .iter()
        .filter_map(|a| {
            Some((
                a.get("title")?.as_str()?.to_string(),
                a.get("command")?.as_str()?.to_string(),
                a.get("arguments")?.clone(),
            ))
        })
        .collect()
}
