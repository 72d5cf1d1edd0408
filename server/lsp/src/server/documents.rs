//! Open documents: applying their edits in order, sharing unsaved text with the engine,
//! the debounced analysis of each document into an overlay, the findings published for
//! it, and the view a request reads (text, index and overlay of one version).

use super::*;

impl Inner {
    pub(super) fn open(self: &Arc<Self>, params: DidOpenTextDocumentParams) {
        let item = params.text_document;
        let location = document::locate(&item.uri, &self.root_paths());
        let doc = Document::new(location.clone(), &item.language_id, item.text, item.version);
        self.docs.insert(item.uri.clone(), doc);
        self.set_cursor(&item.uri, Position::new(0, 0));
        self.schedule_analysis(&item.uri);
        self.check_head(&location);
    }

    /// Applies a `didChange` synchronously (style.md rule 4). Returns false when the
    /// document is not open (the change is dropped).
    pub(super) fn change(self: &Arc<Self>, params: DidChangeTextDocumentParams) -> bool {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        {
            let Some(mut doc) = self.docs.get_mut(&uri) else {
                return false;
            };
            if let Some(range) = params.content_changes.last().and_then(|c| c.range) {
                self.set_cursor(&uri, range.start);
            }
            for change in params.content_changes {
                doc.apply(change, encoding);
            }
            doc.version = params.text_document.version;
        }
        self.schedule_analysis(&uri);
        true
    }

    /// Shares the analysed text of a code document with agents through the store, or
    /// stops when it matches the disk ([`Workspace::share_unsaved`]); never a secret's.
    /// Off the async threads: writes of one document may land out of order, and the next
    /// analysis writes the newest.
    pub(super) fn share_unsaved(&self, location: &Location, overlay: &Arc<Overlay>) {
        if overlay.secret.is_some() || findings::is_markdown(&location.key_path) {
            return;
        }
        let Some(root) = self.root_of(location) else {
            return;
        };
        let (path, version, text) = (
            location.key_path.clone(),
            i64::from(overlay.version),
            overlay.text.clone(),
        );
        tokio::task::spawn_blocking(move || {
            if let Some(mut ws) = root.workspace()
                && let Err(e) = ws.share_unsaved(&path, version, &text)
            {
                tracing::warn!("sharing the unsaved buffer of {path}: {e}");
            }
        });
    }

    /// [`Self::stop_sharing_unsaved`] for one document, off the async threads (a busy
    /// store waits there, not in the notification).
    pub(super) fn stop_sharing_unsaved_later(self: &Arc<Self>, location: Location) {
        let inner = self.clone();
        tokio::task::spawn_blocking(move || inner.stop_sharing_unsaved(Some(&location)));
    }

    /// Stops sharing `location`'s buffer (saved or closed), or with `None` every buffer
    /// of this server in every root.
    pub(super) fn stop_sharing_unsaved(&self, location: Option<&Location>) {
        let (roots, path) = match location {
            Some(l) => (
                self.root_of(l).into_iter().collect(),
                Some(l.key_path.clone()),
            ),
            None => (self.roots(), None),
        };
        for root in roots {
            if let Some(mut ws) = root.workspace()
                && let Err(e) = ws.stop_sharing_unsaved(path.as_deref())
            {
                tracing::warn!("dropping shared unsaved buffers: {e}");
            }
        }
    }

    pub(super) async fn close(self: &Arc<Self>, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        if let Some(doc) = self.docs.get(&uri) {
            let location = doc.location.clone();
            drop(doc);
            self.stop_sharing_unsaved_later(location);
        }
        // Cleared whenever anything was published: the client may have dropped the last
        // (empty) publish as out of date and still show an older set.
        if let Some((_, doc)) = self.docs.remove(&uri)
            && doc.published_version.is_some()
        {
            self.client.publish_diagnostics(uri, Vec::new(), None).await;
        }
    }

    /// Starts the analysis task of `uri` unless one runs (it then runs once more).
    pub(super) fn schedule_analysis(self: &Arc<Self>, uri: &Uri) {
        let start = match self.docs.get_mut(uri) {
            Some(mut doc) => {
                if doc.analysis_running {
                    doc.analysis_pending = true;
                    false
                } else {
                    doc.analysis_running = true;
                    doc.analysis_pending = false;
                    true
                }
            }
            None => false,
        };
        if start {
            let inner = self.clone();
            let uri = uri.clone();
            tokio::spawn(async move {
                let panicked =
                    guard_notification("analysis", inner.clone().analysis_loop(uri.clone())).await;
                // A panic left the flag set: clear it so later changes analyse again.
                if panicked && let Some(mut doc) = inner.docs.get_mut(&uri) {
                    doc.analysis_running = false;
                }
            });
        }
    }

    pub(super) async fn analysis_loop(self: Arc<Self>, uri: Uri) {
        let debounce = self.session().init.debounce_ms;
        loop {
            if debounce > 0 {
                tokio::time::sleep(Duration::from_millis(debounce)).await;
            }
            let (snapshot, location, keys_before) = {
                let Some(mut doc) = self.docs.get_mut(&uri) else {
                    return;
                };
                doc.analysis_pending = false;
                let before = doc.overlay.clone();
                (doc.snapshot(), doc.location.clone(), before)
            };
            match self.analyse(&uri, snapshot).await {
                Ok(overlay) => {
                    self.publish_findings(&uri, &overlay, &location).await;
                    self.share_unsaved(&location, &overlay);
                    if !findings::is_markdown(&location.key_path)
                        && keys_before.is_none_or(|b| symbol_keys(&b) != symbol_keys(&overlay))
                    {
                        self.republish_markdown(&location).await;
                    }
                    if self.session().init.analyzed_notifications {
                        self.client
                            .send_notification::<Analyzed>(AnalyzedParams {
                                uri: uri.clone(),
                                version: overlay.version,
                                symbols: overlay.analysis.symbols.len(),
                                micros: overlay.micros,
                                degraded: overlay
                                    .analysis
                                    .degraded
                                    .as_ref()
                                    .map(proto::degraded_reason),
                            })
                            .await;
                    }
                }
                Err(e) => tracing::error!("analysing {}: {e}", uri.as_str()),
            }
            let again = match self.docs.get_mut(&uri) {
                Some(mut doc) => {
                    if doc.analysis_pending {
                        true
                    } else {
                        doc.analysis_running = false;
                        false
                    }
                }
                None => false,
            };
            if !again {
                self.analysed.notify_waiters();
                // Once per burst of changes: did a commit move HEAD meanwhile?
                self.check_head(&location);
                return;
            }
        }
    }

    /// Parses (incrementally, from the snapshot's edited tree) and extracts one version on
    /// a blocking thread; stores the overlay and tree when the document is still at it.
    pub(super) async fn analyse(
        &self,
        uri: &Uri,
        snapshot: Snapshot,
    ) -> std::result::Result<Arc<Overlay>, String> {
        let options = AnalyzeOptions {
            timeout_ms: self.session().init.parse_timeout_ms,
            ..AnalyzeOptions::default()
        };
        let secrets = self.secret_rules(&self.location_of(uri));
        let (tree, overlay) =
            tokio::task::spawn_blocking(move || analyse_snapshot(snapshot, &options, &secrets))
                .await
                .map_err(join_error)?;
        let overlay = Arc::new(overlay);
        if let Some(mut doc) = self.docs.get_mut(uri)
            && doc.location.key_path == overlay.key_path
        {
            // The tree only when it is the document's current text (older trees lack
            // the edits since); the overlay whenever it is the newest analysed, so requests
            // waiting for this version find it.
            if doc.version == overlay.version && tree.is_some() {
                doc.tree = tree;
            }
            if doc
                .overlay
                .as_ref()
                .is_none_or(|o| o.version <= overlay.version || o.key_path != overlay.key_path)
            {
                doc.overlay = Some(overlay.clone());
            }
        }
        self.analysed.notify_waiters();
        Ok(overlay)
    }

    /// The overlay of the document as it is now, when the request arrives: requests see
    /// every change sent before them and none sent after (snapshot semantics). The stored
    /// overlay when it is for this version, else the one the running analysis task
    /// produces for it (waited for, up to the parse time limit), else one analysed now
    /// from a snapshot taken before any await. `None` when the document is not open.
    pub(super) async fn current_overlay(
        &self,
        uri: &Uri,
    ) -> Option<(Arc<Overlay>, Location, Option<Language>)> {
        // Everything up to the first await runs before later notifications are applied.
        let (snapshot, running, location, language) = {
            let doc = self.docs.get(uri)?;
            if let Some(overlay) = doc.current_overlay() {
                return Some((overlay, doc.location.clone(), doc.language));
            }
            (
                doc.snapshot(),
                doc.analysis_running,
                doc.location.clone(),
                doc.language,
            )
        };
        let version = snapshot.version;
        if running {
            let wait_limit = Duration::from_millis(self.session().init.parse_timeout_ms + 500);
            let deadline = tokio::time::Instant::now() + wait_limit;
            loop {
                let notified = self.analysed.notified();
                tokio::pin!(notified);
                // Registered before the check, so a store between the check and the wait
                // wakes us.
                notified.as_mut().enable();
                let (latest, still_running) = {
                    let doc = self.docs.get(uri)?;
                    (
                        doc.overlay
                            .clone()
                            .filter(|o| o.key_path == location.key_path),
                        doc.analysis_running,
                    )
                };
                match latest {
                    Some(o) if o.version == version => return Some((o, location, language)),
                    // The task moved past this version (coalesced it): analyse it here.
                    Some(o) if o.version > version => break,
                    _ => {}
                }
                if !still_running || tokio::time::timeout_at(deadline, notified).await.is_err() {
                    break;
                }
            }
        }
        let overlay = self.analyse(uri, snapshot).await.ok()?;
        Some((overlay, location, language))
    }

    /// Computes the document's findings and publishes them for its current version (see
    /// the rule inside).
    pub(super) async fn publish_findings(
        &self,
        uri: &Uri,
        overlay: &Arc<Overlay>,
        location: &Location,
    ) {
        let root = self.root_of(location);
        let encoding = self.encoding();
        let severities = self.session().init.severities();
        let o = overlay.clone();
        let key_path = location.key_path.clone();
        // A markdown document's claims are checked against the open code documents'
        // unsaved definitions too.
        let open = if findings::is_markdown(&key_path) {
            self.open_code_overlays(location)
        } else {
            Vec::new()
        };
        let diagnostics = blocking("computing findings", move || {
            if o.secret.is_some() {
                return Vec::new();
            }
            let ws = root.as_ref().and_then(|r| r.workspace());
            let open: Vec<(&str, &str, &[loci_core::Symbol])> = open
                .iter()
                .map(|o| (o.key_path.as_str(), &*o.text, o.analysis.symbols.as_slice()))
                .collect();
            findings::findings_for_document(
                ws.as_deref(),
                &key_path,
                &o.text,
                &o.analysis.symbols,
                &open,
                &severities,
            )
            .iter()
            .map(|f| proto::diagnostic(f, &o.text, &o.index, encoding))
            .collect::<Vec<_>>()
        })
        .await;
        let diagnostics = match diagnostics {
            Ok(d) => d,
            Err(e) => {
                tracing::error!("{}", e.message);
                return;
            }
        };
        // Rule: publish for the document's current version only (an older analysis is
        // superseded by the one the change scheduled), and whenever the diagnostics differ
        // from the last publish or that publish carried an older version. A client may drop
        // a publish older than its document (Helix: "Version (2) is out of date ...
        // dropping"), and it cannot tell us: a burst of typing that ends with the same
        // diagnostics as it began would otherwise leave the client with none. Before the
        // first publish the client holds nothing, so an empty set is not sent.
        let changed = match self.docs.get_mut(uri) {
            Some(mut doc)
                if doc.version == overlay.version
                    && (doc.published != diagnostics
                        || doc.published_version.is_some_and(|v| v != overlay.version)) =>
            {
                doc.published = diagnostics.clone();
                doc.published_version = Some(overlay.version);
                true
            }
            _ => false,
        };
        if changed {
            self.client
                .publish_diagnostics(uri.clone(), diagnostics, Some(overlay.version))
                .await;
            // The lenses count what the diagnostics report, from the same overlay: a
            // client asks for them again only when told (else a lens could say "0 stale"
            // over a function the diagnostic calls stale).
            if self.session().code_lens_refresh {
                let _ = self.client.code_lens_refresh().await;
            }
        }
    }

    /// The overlay `view` was built from, when it was (not the map's view of a file that
    /// is not open, nor of a degraded analysis).
    pub(super) fn view_overlay(&self, uri: &Uri, view: &View) -> Option<Arc<Overlay>> {
        if view.source == Source::Map {
            return None;
        }
        self.docs
            .get(uri)
            .and_then(|d| d.current_overlay())
            .filter(|o| o.secret.is_none() && *o.text == *view.text)
    }

    /// The newest overlays of the open code documents (not markdown, not secret) of the
    /// root holding `location`.
    pub(super) fn open_code_overlays(&self, location: &Location) -> Vec<Arc<Overlay>> {
        let Some(root) = location.root.as_ref() else {
            return Vec::new();
        };
        self.docs
            .iter()
            .filter(|d| d.location.root.as_ref() == Some(root))
            .filter(|d| !findings::is_markdown(&d.location.key_path))
            // The newest analysed, even while a later change is being analysed: that
            // analysis publishes the markdown again only if the definitions change.
            .filter_map(|d| {
                d.overlay
                    .clone()
                    .filter(|o| o.key_path == d.location.key_path)
            })
            .filter(|o| o.secret.is_none())
            .collect()
    }

    /// Publishes the findings of the open markdown documents of the root holding
    /// `location` again: a code document's definitions changed, and what their claims
    /// name may have been deleted or renamed in it (or defined again).
    pub(super) async fn republish_markdown(&self, location: &Location) {
        let Some(root) = location.root.as_ref() else {
            return;
        };
        let docs: Vec<(Uri, Arc<Overlay>, Location)> = self
            .docs
            .iter()
            .filter(|d| d.location.root.as_ref() == Some(root))
            .filter(|d| findings::is_markdown(&d.location.key_path))
            .filter_map(|d| Some((d.key().clone(), d.current_overlay()?, d.location.clone())))
            .collect();
        for (uri, overlay, location) in docs {
            self.publish_findings(&uri, &overlay, &location).await;
        }
    }

    /// What the document holds: the overlay when it is open (falling back to the map's
    /// symbols, checked against the buffer, when the overlay could not be built), else the
    /// map's symbols positioned on the file on disk.
    pub(super) async fn view(&self, uri: &Uri) -> Option<View> {
        if let Some((overlay, location, language)) = self.current_overlay(uri).await {
            if let Some(reason) = &overlay.secret {
                tracing::debug!("{}: not served: {reason}", uri.as_str());
                return None;
            }
            let name = language.map(Language::name);
            let view = View::from_analysis(
                overlay.text.clone(),
                overlay.index.clone(),
                &overlay.analysis,
                name,
            );
            if overlay.analysis.degraded.is_some()
                && let Some(root) = self.root_of(&location)
            {
                let key_path = location.key_path.clone();
                let symbols = blocking("reading the map", move || {
                    root.workspace()
                        .and_then(|ws| ws.file_symbols(&key_path).ok())
                        .map(|env| env.result)
                        .unwrap_or_default()
                })
                .await
                .unwrap_or_default();
                if !symbols.is_empty() {
                    let mut map_view =
                        View::from_map(overlay.text.clone(), overlay.index.clone(), &symbols, name);
                    map_view.degraded = view.degraded;
                    return Some(map_view);
                }
            }
            return Some(view);
        }
        // Not open: the map, positioned on the file as it is on disk.
        let path = document::file_path(uri)?;
        let root = self.root_containing(&path)?;
        let location = document::locate(uri, std::slice::from_ref(&root.path));
        let language = Language::from_path(&location.key_path).map(Language::name);
        // Read through the engine: not through links out of the root, never a secret.
        let key_path = location.key_path.clone();
        let r = root.clone();
        let text = blocking("reading the file", move || {
            r.workspace().and_then(|ws| ws.read_served(&key_path))
        })
        .await
        .ok()??;
        let key_path = location.key_path.clone();
        let r = root.clone();
        let (symbols, stale) = blocking("reading the map", move || {
            r.workspace()
                .and_then(|ws| ws.file_symbols(&key_path).ok())
                .map(|env| (env.result, !env.stale_warnings.is_empty()))
                .unwrap_or_default()
        })
        .await
        .ok()?;
        let symbols = if stale {
            // Refresh on read: the file changed since it was scanned.
            if let Err(e) = root
                .scan(&self.client, self.session().work_done_progress)
                .await
            {
                tracing::warn!("{e}");
            }
            let key_path = location.key_path.clone();
            let r = root.clone();
            blocking("reading the map", move || {
                r.workspace()
                    .and_then(|ws| ws.file_symbols(&key_path).ok())
                    .map(|env| env.result)
                    .unwrap_or_default()
            })
            .await
            .ok()?
        } else {
            symbols
        };
        let text: Arc<str> = Arc::from(text);
        let index = crate::position::LineIndex::new(&text);
        Some(View::from_map(text, index, &symbols, language))
    }
}

/// Documents up to this many bytes whose incremental reparse has errors are parsed again
/// from scratch (see `analyse_snapshot`). A fresh parse of 32 KiB of Python takes about
/// 2 ms here; of `typing.py` (110 KiB), 15 ms — the keystroke benchmark's p50 went from
/// 6 to 25 ms when every broken keystroke paid it.
const FRESH_REPARSE_MAX_BYTES: usize = 32 * 1024;

/// Parse (reusing the edited tree) and extract one snapshot. Runs on a blocking thread.
pub(super) fn analyse_snapshot(
    snapshot: Snapshot,
    options: &AnalyzeOptions,
    secrets: &SecretRules,
) -> (Option<loci_core::tree_sitter::Tree>, Overlay) {
    let started = Instant::now();
    // A secret is not parsed at all (and so never reaches the overlay, hover or symbols).
    let secret = secrets.file_reason(&snapshot.key_path, Some(&snapshot.text));
    let (tree, analysis) = match snapshot.language {
        _ if secret.is_some() => (None, FileAnalysis::default()),
        None => (None, FileAnalysis::default()),
        Some(language) => {
            let (mut tree, mut degraded) = loci_core::analyze::parse(
                language,
                &snapshot.text,
                snapshot.tree.as_ref(),
                options,
            );
            // Error recovery depends on which subtrees an incremental parse reuses: on
            // broken code, the reparsed tree can differ from a fresh parse of the same
            // text (fault found by tests/tests/it/edit_fuzz.rs: a Python `:` annotation
            // recovered as `ERROR` after an empty edit). A tree with errors is parsed
            // again from scratch, so what loci serves for a text never depends on the
            // edits that led to it; error-free trees keep the incremental parse. Only up
            // to [`FRESH_REPARSE_MAX_BYTES`]: almost every keystroke leaves code broken,
            // and a full parse of a large module on each would blow the keystroke budget.
            if snapshot.tree.is_some()
                && snapshot.text.len() <= FRESH_REPARSE_MAX_BYTES
                && tree.as_ref().is_some_and(|t| t.root_node().has_error())
            {
                (tree, degraded) =
                    loci_core::analyze::parse(language, &snapshot.text, None, options);
            }
            let analysis = match &tree {
                Some(tree) => loci_core::analyze::extract(
                    &snapshot.key_path,
                    language,
                    &snapshot.text,
                    tree,
                    options,
                ),
                None => FileAnalysis {
                    degraded,
                    ..FileAnalysis::default()
                },
            };
            (tree, analysis)
        }
    };
    let overlay = Overlay {
        version: snapshot.version,
        key_path: snapshot.key_path,
        text: snapshot.text,
        index: snapshot.index,
        analysis,
        micros: started.elapsed().as_micros() as u64,
        secret,
    };
    (tree, overlay)
}

/// The keys of an overlay's definitions, in document order.
fn symbol_keys(overlay: &Overlay) -> Vec<&str> {
    overlay
        .analysis
        .symbols
        .iter()
        .map(|s| s.key.as_str())
        .collect()
}
