//! The server's lifecycle: `initialize` (roots, capabilities, the position encoding),
//! `initialized` (opening each root's store, the first scan, git and team listeners),
//! scans and syncs requested in the background and what follows them, and the edits made
//! outside the editor (watched files, workspace folders).

use super::*;

impl Inner {
    pub(super) async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref());
        let (encoding, announced) = crate::position::negotiate(offered);
        let mut messages = Vec::new();
        let init = match params.initialization_options {
            // Lua's `{}` is encoded as an empty array.
            None | Some(Value::Null) => InitializationOptions::default(),
            Some(Value::Array(a)) if a.is_empty() => InitializationOptions::default(),
            Some(value) => match serde_json::from_value(value) {
                Ok(init) => init,
                Err(e) => {
                    messages.push((
                        MessageType::WARNING,
                        format!("loci: ignoring initializationOptions: {e}"),
                    ));
                    InitializationOptions::default()
                }
            },
        };
        let caps = &params.capabilities;
        let session = Session {
            encoding,
            hierarchical_symbols: caps
                .text_document
                .as_ref()
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|d| d.hierarchical_document_symbol_support)
                .unwrap_or(false),
            work_done_progress: caps
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
            dynamic_watchers: caps
                .workspace
                .as_ref()
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.dynamic_registration)
                .unwrap_or(false),
            relative_watchers: caps
                .workspace
                .as_ref()
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.relative_pattern_support)
                .unwrap_or(false),
            code_lens_refresh: caps
                .workspace
                .as_ref()
                .and_then(|w| w.code_lens.as_ref())
                .and_then(|c| c.refresh_support)
                .unwrap_or(false),
            show_document: caps
                .window
                .as_ref()
                .and_then(|w| w.show_document.as_ref())
                .is_some_and(|s| s.support),
            init,
        };

        // Roots: workspace folders, else rootUri, else rootPath; none is single-file mode
        // (never walk the current directory instead).
        #[allow(deprecated)]
        let folders: Vec<PathBuf> = match &params.workspace_folders {
            Some(folders) if !folders.is_empty() => folders
                .iter()
                .filter_map(|f| document::file_path(&f.uri))
                .collect(),
            _ => match (&params.root_uri, &params.root_path) {
                (Some(uri), _) => document::file_path(uri).into_iter().collect(),
                (None, Some(path)) if !path.is_empty() => vec![PathBuf::from(path)],
                _ => Vec::new(),
            },
        };
        let mut roots = Vec::new();
        for folder in folders {
            if !folder.is_dir() {
                messages.push((
                    MessageType::WARNING,
                    format!(
                        "loci: workspace folder {} is not a directory; ignoring it",
                        folder.display()
                    ),
                ));
                continue;
            }
            let root = self
                .open_root(&folder, &session.init, &mut messages)
                .await?;
            roots.push(root);
        }
        if roots.is_empty() {
            messages.push((
                MessageType::LOG,
                "loci: no workspace folder: single-file mode (open documents only, no map)".into(),
            ));
        }
        *self.roots.write().unwrap_or_else(|p| p.into_inner()) = roots;
        if let Ok(mut m) = self.startup_messages.lock() {
            m.extend(messages);
        }
        let _ = self.session.set(session);
        Ok(InitializeResult {
            capabilities: capabilities(announced),
            server_info: Some(ServerInfo {
                name: "loci".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    /// Opens one root's store on a blocking thread, with the home-directory cap.
    pub(super) async fn open_root(
        &self,
        folder: &Path,
        init: &InitializationOptions,
        messages: &mut Vec<(MessageType, String)>,
    ) -> Result<Arc<Root>> {
        let canonical = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf());
        let is_home = self
            .options
            .home_dir
            .as_ref()
            .map(|h| h.canonicalize().unwrap_or_else(|_| h.clone()))
            .is_some_and(|h| h == canonical);
        let cap = init
            .max_files
            .or(is_home.then_some(self.options.home_max_files));
        if is_home {
            messages.push((
                MessageType::WARNING,
                format!(
                    "loci: the workspace folder {} is your home directory: indexing at most {} \
                     files. Open a project folder instead, or set initializationOptions.maxFiles.",
                    canonical.display(),
                    cap.unwrap_or(self.options.home_max_files)
                ),
            ));
        }
        let root = blocking("opening the store", move || {
            Arc::new(Root::open(&canonical, cap))
        })
        .await?;
        if let Some(error) = &root.error {
            messages.push((
                MessageType::ERROR,
                format!(
                    "loci: cannot open the store of {}: {error}; answering from open documents only",
                    root.path.display()
                ),
            ));
        }
        Ok(root)
    }

    pub(super) async fn initialized(self: &Arc<Self>) {
        let messages = self
            .startup_messages
            .lock()
            .map(|mut m| std::mem::take(&mut *m))
            .unwrap_or_default();
        for (level, message) in messages {
            if level == MessageType::LOG || level == MessageType::INFO {
                self.client.log_message(level, message).await;
            } else {
                self.client.show_message(level, message).await;
            }
        }
        if self.session().dynamic_watchers {
            // Everything under the roots (their `.git/HEAD` and `.git/refs/heads/` among
            // it); a root whose git directories lie outside it (a linked worktree, a
            // separate git dir) gets them watched too, for the sync after a commit.
            let mut watchers = vec![json!({ "globPattern": "**/*" })];
            if self.session().relative_watchers {
                for root in self.roots() {
                    let Some((git_dir, common_dir)) = root.git_dirs() else {
                        continue;
                    };
                    for (dir, pattern) in [
                        (git_dir, "HEAD"),
                        (common_dir, "{refs/heads/**,packed-refs}"),
                    ] {
                        if dir.starts_with(&root.path) {
                            continue;
                        }
                        if let Some(base) = Uri::from_file_path(&dir) {
                            watchers.push(
                                json!({ "globPattern": { "baseUri": base, "pattern": pattern } }),
                            );
                        }
                    }
                }
            }
            let registration = Registration {
                id: "loci-watched-files".into(),
                method: "workspace/didChangeWatchedFiles".into(),
                register_options: Some(json!({ "watchers": watchers })),
            };
            if let Err(e) = self.client.register_capability(vec![registration]).await {
                tracing::warn!("the client refused the file watcher registration: {e}");
            }
        }
        if self.session().init.scan {
            for root in self.roots() {
                self.request_scan(&root);
            }
        }
        for root in self.roots() {
            self.start_team_listener(&root);
        }
        // Commits made while no editor was open: HEAD is not where the last sync left it.
        for root in self.roots() {
            if root.head_moved() {
                self.request_sync(&root);
            } else {
                let r = root.clone();
                if let Ok(Some(behind)) = blocking("reading the pages behind the code", move || {
                    r.recorded_behind()
                })
                .await
                    && behind.count > 0
                {
                    self.tell_behind(&root, &behind).await;
                }
            }
        }
    }

    /// Whether `HEAD` of the root of `location` moved (a commit, checkout, merge or pull
    /// made outside the editor): a few file reads ([`Root::head_moved`]); when it did, a
    /// sync runs in the background. For clients that do not watch files (Neovim on Linux):
    /// called on opens, saves and after each burst of changes.
    pub(super) fn check_head(self: &Arc<Self>, location: &Location) {
        if let Some(root) = self.root_of(location)
            && root.head_moved()
        {
            self.request_sync(&root);
        }
    }

    /// A sync of `root` in the background (coalesced with a running one), then its count
    /// told to the editor ([`Inner::after_sync`]).
    pub(super) fn request_sync(self: &Arc<Self>, root: &Arc<Root>) {
        let inner = self.clone();
        root.request_sync(
            self.client.clone(),
            self.session().work_done_progress,
            move |root, outcome| {
                let inner = inner.clone();
                async move { inner.after_sync(&root, outcome).await }
            },
        );
    }

    /// After a sync: open documents' findings and lenses again (the stale marks moved),
    /// then the count of pages behind the code told to the editor. A failed background
    /// sync is logged.
    pub(super) async fn after_sync(
        self: &Arc<Self>,
        root: &Arc<Root>,
        outcome: std::result::Result<Behind, Failure>,
    ) {
        match outcome {
            Ok(behind) => {
                if behind.synced.is_some() {
                    self.after_scan(root).await;
                }
                self.tell_behind(root, &behind).await;
            }
            Err(e) => {
                tracing::warn!("{}: sync: {e}", root.path.display());
                self.log(
                    MessageType::WARNING,
                    format!(
                        "loci: {}: sync after HEAD moved failed: {e}",
                        root.path.display()
                    ),
                )
                .await;
            }
        }
    }

    /// Tells the editor how many pages are behind the code: `$/loci/pagesBehind` always,
    /// and when the server shows results itself (Helix, plain clients) and some are
    /// behind, a `window/showMessage` saying what to run.
    pub(super) async fn tell_behind(&self, root: &Root, behind: &Behind) {
        let Some(uri) = Uri::from_file_path(&root.path) else {
            return;
        };
        let message = behind_message(behind.count);
        self.client
            .send_notification::<PagesBehind>(PagesBehindParams {
                root: uri,
                head: behind.head.clone(),
                count: behind.count,
                pages: behind.pages.clone(),
                message: message.clone(),
            })
            .await;
        if behind.count > 0 && self.shows_results() {
            let at = behind
                .head
                .as_deref()
                .map(|h| format!(" at {}", &h[..h.len().min(12)]))
                .unwrap_or_default();
            let them = if behind.count == 1 { "it" } else { "them" };
            self.client
                .show_message(
                    MessageType::INFO,
                    format!(
                        "loci: {message}{at} — run the command loci.synthesize to redraft \
                         {them} (loci.sync lists {them})"
                    ),
                )
                .await;
        }
    }

    /// A background scan of `root`, then a refresh of its open documents' diagnostics.
    pub(super) fn request_scan(self: &Arc<Self>, root: &Arc<Root>) {
        let inner = self.clone();
        root.request_scan(
            self.client.clone(),
            self.session().work_done_progress,
            move |root| {
                let inner = inner.clone();
                async move { inner.after_scan(&root).await }
            },
        );
    }

    /// Team memory: for a root whose store is team-backed, a thread keeps a
    /// connection that `LISTEN`s for the team server's events; each is pulled into the
    /// store at once and the root's open documents get their findings and lenses again,
    /// as after a scan, so a colleague's write shows here within a second or two. The
    /// thread ends with the server.
    pub(super) fn start_team_listener(self: &Arc<Self>, root: &Arc<Root>) {
        /// How often a lost connection to the team server is tried again.
        const TEAM_RETRY: Duration = Duration::from_secs(5);
        let weak = Arc::downgrade(self);
        let root = root.clone();
        let handle = tokio::runtime::Handle::current();
        let spawned = std::thread::Builder::new()
            .name("loci-team".into())
            .spawn(move || {
                if !root.workspace().is_some_and(|w| w.team_configured()) {
                    return;
                }
                let path = root.path.clone();
                loci_engine::memory::team::listen_at(&path, None, TEAM_RETRY, |pulled| {
                    let Some(inner) = weak.upgrade() else {
                        return false;
                    };
                    if pulled > 0 {
                        let root = root.clone();
                        handle.spawn(async move { inner.after_scan(&root).await });
                    }
                    true
                });
            });
        if let Err(e) = spawned {
            tracing::warn!("the team listener did not start: {e}");
        }
    }

    pub(super) async fn after_scan(self: &Arc<Self>, root: &Arc<Root>) {
        let uris: Vec<Uri> = self
            .docs
            .iter()
            .filter(|d| d.location.root.as_ref() == Some(&root.path))
            .map(|d| d.key().clone())
            .collect();
        for uri in uris {
            let current = self
                .docs
                .get(&uri)
                .map(|d| (d.current_overlay(), d.location.clone()));
            match current {
                Some((Some(overlay), location)) => {
                    self.publish_findings(&uri, &overlay, &location).await
                }
                Some((None, _)) => self.schedule_analysis(&uri),
                None => {}
            }
        }
        if self.session().code_lens_refresh {
            let _ = self.client.code_lens_refresh().await;
        }
    }

    pub(super) fn watched_files_changed(self: &Arc<Self>, params: DidChangeWatchedFilesParams) {
        let mut roots: Vec<Arc<Root>> = Vec::new();
        let mut heads: Vec<Arc<Root>> = Vec::new();
        for change in params.changes {
            let Some(path) = document::file_path(&change.uri) else {
                continue;
            };
            // loci's own database and git's internals change under every scan and commit;
            // of git's, `HEAD` and the branches say a commit, checkout, merge or pull
            // moved `HEAD`.
            if path.components().any(|c| c.as_os_str() == ".loci") {
                continue;
            }
            if path.components().any(|c| c.as_os_str() == ".git")
                || self.roots().iter().any(|r| {
                    r.git_dirs()
                        .is_some_and(|(g, c)| path.starts_with(&g) || path.starts_with(&c))
                })
            {
                if is_head_or_branch(&path) {
                    for root in self.roots() {
                        if !heads.iter().any(|r| Arc::ptr_eq(r, &root))
                            && root
                                .git_dirs()
                                .is_some_and(|(g, c)| path.starts_with(&g) || path.starts_with(&c))
                        {
                            heads.push(root);
                        }
                    }
                }
                continue;
            }
            if let Some(root) = self.root_containing(&path)
                && !roots.iter().any(|r| Arc::ptr_eq(r, &root))
            {
                roots.push(root);
            }
        }
        for root in roots {
            self.request_scan(&root);
        }
        for root in heads {
            if root.head_moved() {
                self.request_sync(&root);
            }
        }
    }

    pub(super) async fn folders_changed(self: &Arc<Self>, params: DidChangeWorkspaceFoldersParams) {
        let removed: Vec<PathBuf> = params
            .event
            .removed
            .iter()
            .filter_map(|f| document::file_path(&f.uri))
            .map(|p| p.canonicalize().unwrap_or(p))
            .collect();
        if let Ok(mut roots) = self.roots.write() {
            roots.retain(|r| !removed.contains(&r.path));
        }
        let init = self.session().init.clone();
        let mut messages = Vec::new();
        let mut added = Vec::new();
        for folder in params.event.added {
            let Some(path) = document::file_path(&folder.uri).filter(|p| p.is_dir()) else {
                continue;
            };
            match self.open_root(&path, &init, &mut messages).await {
                Ok(root) => added.push(root),
                Err(e) => tracing::error!("{}", e.message),
            }
        }
        if let Ok(mut roots) = self.roots.write() {
            roots.extend(added.iter().cloned());
        }
        // Documents move between roots (or into single-file mode).
        let paths = self.root_paths();
        let mut moved = Vec::new();
        for mut doc in self.docs.iter_mut() {
            let location = document::locate(doc.key(), &paths);
            if location != doc.location {
                // Symbol keys embed the path: the overlay must be rebuilt.
                doc.location = location;
                doc.overlay = None;
                moved.push(doc.key().clone());
            }
        }
        for uri in moved {
            self.schedule_analysis(&uri);
        }
        if init.scan {
            for root in &added {
                self.request_scan(root);
            }
        }
        for (level, message) in messages {
            self.client.show_message(level, message).await;
        }
    }
}

/// Whether a changed file under a git directory says `HEAD` may have moved: `HEAD` itself,
/// a branch (`refs/heads/…`), or `packed-refs`.
pub(super) fn is_head_or_branch(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name == "HEAD" || name == "packed-refs" {
        return true;
    }
    let parts: Vec<&str> = path
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    parts.windows(2).any(|w| w == ["refs", "heads"])
}
