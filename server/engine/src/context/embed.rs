//! Optional dense retrieval: vectors of the code chunks from a local sentence-embedding
//! model (`[embeddings] model`, or `LOCI_EMBEDDINGS_MODEL`), and the files nearest a
//! question among them, for `context`'s fusion (`super::retrieve`).
//!
//! `loci embed` fills the vectors incrementally: the chunks without a vector of the
//! configured model, a batch at a time, each batch in its own short transaction, so it
//! can be stopped and resumed and never holds the write lock long. A chunk's text as the
//! model sees it: its file's path, its definition's name and its lines, cut at
//! `[embeddings] max_tokens` word pieces. Test, example and vendored code is not embedded
//! (`code_chunks.secondary`): lexical search still finds it, every ranked list puts it
//! after the rest unless the question asks for it, and it is most of a large repository's
//! chunks (69% of the stdlib's), so embedding costs what answers use. A vector is stored
//! under the hash of the text the model embedded (`code_chunks.embed_hash`,
//! `loci_core::chunks::embed_hash`): a chunk whose text is unchanged keeps its vector
//! when its file is rewritten or a new analysis version rewrites every file, so an edit
//! costs the chunks it changed; `loci embed` first deletes the vectors no chunk's text has.
//! Answers say when vectors are missing or partial (envelope notes), never silently.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use loci_embed::{Embedder, Quantized};
use serde::Serialize;

use crate::{EngineError, Result, Workspace};

/// The environment variable naming the model directory; it overrides `[embeddings] model`.
pub const MODEL_ENV: &str = "LOCI_EMBEDDINGS_MODEL";

/// Chunks embedded per transaction by [`Workspace::embed`], and between two calls of its
/// progress callback: about 2 s on 2 cores, so a language server that stops embedding for
/// a scan (after a save) starts the scan that soon (256 make a save wait ~15 s).
const EMBED_BATCH: u32 = 32;

/// Chunks the vector search returns per question (their files, best first, are the
/// `embeddings` list of fusion).
pub const DENSE_CHUNKS: usize = 300;

/// What [`Workspace::embed`] did.
#[derive(Clone, Debug, Serialize)]
pub struct EmbedReport {
    /// The model's id (`loci_embed::Embedder::model_id`).
    pub model: String,
    /// Chunks embedded by this run.
    pub embedded: u64,
    /// Chunks with a vector of the model now.
    pub with_vectors: u64,
    /// Chunks to embed in the map (not test, example or vendored code).
    pub chunks: u64,
    /// Wall time, ms (model load included).
    pub duration_ms: u64,
}

/// Progress of [`Workspace::embed`]: chunks with a vector, of the chunks to embed.
#[derive(Clone, Copy, Debug)]
pub struct EmbedProgress {
    /// Chunks with a vector of the model.
    pub done: u64,
    /// Chunks to embed (not test, example or vendored code).
    pub total: u64,
}

/// The loaded model and the vectors of one version of the store's data (the workspace
/// keeps them between questions: a language or MCP server loads the model once).
#[derive(Default)]
pub struct Dense {
    model: Option<Arc<Embedder>>,
    /// Which directory `model` was loaded from.
    dir: Option<PathBuf>,
    stamp: Option<loci_store::DataStamp>,
    /// `(file_id, vector)` of every chunk with a vector of the model.
    vectors: Arc<Vec<(i64, Quantized)>>,
    /// The files with at least one vector.
    embedded: Arc<HashSet<i64>>,
    /// Chunks to embed when `vectors` were read (not test, example or vendored code).
    chunks: u64,
}

/// The vectors of one model (`(file_id, vector)` per chunk), the chunks to embed, and the
/// files with a vector.
type DenseVectors = (Arc<Vec<(i64, Quantized)>>, u64, Arc<HashSet<i64>>);

/// How dense retrieval stands for one answer: what the capability notes say.
#[derive(Clone, Debug, PartialEq)]
pub enum DenseState {
    /// No model configured.
    Off,
    /// Configured, and the files nearest the question by chunk, best first; `missing` is
    /// the number of chunks without a vector (0: complete).
    Ready {
        /// File ids, best first.
        files: Vec<i64>,
        /// The best chunk's cosine with the question.
        best: f64,
        /// Chunks without a vector.
        missing: u64,
        /// Chunks to embed (not test, example or vendored code).
        chunks: u64,
        /// The files with at least one vector: the others are not in `files` because
        /// they cannot be, not because they are far from the question.
        embedded: Arc<HashSet<i64>>,
    },
    /// Configured but unusable (the model did not load): why.
    Failed(String),
}

impl Workspace {
    /// The configured model directory, if any: `LOCI_EMBEDDINGS_MODEL`, else
    /// `[embeddings] model`, relative paths from the workspace root.
    pub fn embeddings_model_dir(&self) -> Option<PathBuf> {
        let named = std::env::var(MODEL_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .or_else(|| self.config.embeddings.model.clone())?;
        let p = PathBuf::from(named);
        Some(if p.is_absolute() {
            p
        } else {
            self.root.join(p)
        })
    }

    /// The loaded model (loading it on first use).
    fn embedder(&self) -> Result<Arc<Embedder>> {
        let dir = self.configured_model_dir()?;
        if let Some(model) = self.loaded_embedder(&dir) {
            return Ok(model);
        }
        let model = Arc::new(load_embedder(&dir, &self.config.embeddings)?);
        self.keep_embedder(dir, model.clone());
        Ok(model)
    }

    /// [`Workspace::embeddings_model_dir`], or the error saying how to configure one.
    fn configured_model_dir(&self) -> Result<PathBuf> {
        self.embeddings_model_dir().ok_or_else(|| EngineError::InvalidArgument {
            name: "embeddings.model".into(),
            message: format!(
                "no embedding model is configured: set `[embeddings] model = \"PATH\"` in .loci/config.toml or {MODEL_ENV}=PATH (a local directory with config.json, tokenizer.json and model.safetensors)"
            ),
        })
    }

    /// The model loaded from `dir`, if it is.
    fn loaded_embedder(&self, dir: &Path) -> Option<Arc<Embedder>> {
        let dense = self.dense.lock().unwrap_or_else(|p| p.into_inner());
        match (&dense.model, &dense.dir) {
            (Some(m), Some(d)) if d == dir => Some(m.clone()),
            _ => None,
        }
    }

    /// Keeps `model`, loaded from `dir`, for the next questions (the vectors read for
    /// another model are dropped).
    fn keep_embedder(&self, dir: PathBuf, model: Arc<Embedder>) {
        let mut dense = self.dense.lock().unwrap_or_else(|p| p.into_inner());
        if dense.dir.as_ref() != Some(&dir) {
            *dense = Dense {
                model: Some(model),
                dir: Some(dir),
                ..Default::default()
            };
        }
    }

    /// Embeds every code chunk that has no vector of the configured model yet, in batches,
    /// reporting progress before each; `progress` returning [`ControlFlow::Break`] stops
    /// the run there (a language server stops it when a scan is due). Resumable: what a
    /// stopped run wrote stays.
    ///
    /// Errors: [`EngineError::InvalidArgument`] when no model is configured or it does not
    /// load (the message names the file); store errors.
    pub fn embed(
        &mut self,
        progress: &dyn Fn(EmbedProgress) -> ControlFlow<()>,
    ) -> Result<crate::Envelope<EmbedReport>> {
        let started = Instant::now();
        let model = self.embedder()?;
        let id = model.model_id().to_string();
        // The vectors of texts no chunk has any more (edited or deleted code) go first.
        self.store.write(loci_store::map::delete_orphan_vectors)?;
        let (total, mut done) = loci_store::map::primary_chunk_counts(self.store.conn(), &id)?;
        let mut embedded = 0u64;
        let mut after = 0;
        loop {
            let batch = match progress(EmbedProgress { done, total }) {
                ControlFlow::Continue(()) => self.unembedded_after(&id, &mut after)?,
                ControlFlow::Break(()) => Vec::new(),
            };
            if batch.is_empty() {
                let (chunks, with_vectors) =
                    loci_store::map::primary_chunk_counts(self.store.conn(), &id)?;
                let report = EmbedReport {
                    model: id,
                    embedded,
                    with_vectors,
                    chunks,
                    duration_ms: started.elapsed().as_millis() as u64,
                };
                return self.envelope(report, Vec::new());
            }
            // One text per hash; a chunk whose file changed since the scan is left for
            // the next scan to hash again (its vector would be stored under the old text).
            let mut texts: Vec<(String, String)> = Vec::with_capacity(batch.len());
            let mut file: Option<(String, Option<Vec<String>>)> = None;
            for c in &batch {
                if file.as_ref().is_none_or(|(p, _)| *p != c.path) {
                    let lines = self
                        .read_served_as_scanned(&c.path)
                        .filter(|(_, as_scanned)| *as_scanned)
                        .map(|(t, _)| t.lines().map(str::to_string).collect());
                    file = Some((c.path.clone(), lines));
                }
                let Some(lines) = file.as_ref().and_then(|(_, l)| l.as_deref()) else {
                    continue;
                };
                let body: Vec<&str> = lines
                    .iter()
                    .skip(c.start_line as usize)
                    .take((c.end_line + 1).saturating_sub(c.start_line) as usize)
                    .map(String::as_str)
                    .collect();
                let text = loci_core::chunks::embed_text(&c.path, &c.name, &body.join("\n"));
                if !texts.iter().any(|(h, _)| *h == c.embed_hash) {
                    texts.push((c.embed_hash.clone(), text));
                }
            }
            if texts.is_empty() {
                continue;
            }
            let refs: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = model
                .embed(&refs)
                .map_err(|e| EngineError::InvalidArgument {
                    name: "embeddings".into(),
                    message: e.to_string(),
                })?;
            let rows: Vec<(String, f32, Vec<i8>)> = texts
                .into_iter()
                .zip(vectors)
                .map(|((hash, _), v)| {
                    let q = Quantized::new(&v);
                    (hash, q.scale, q.values)
                })
                .collect();
            self.store
                .write(|tx| loci_store::map::insert_vectors(tx, &id, &rows))?;
            embedded += rows.len() as u64;
            done += batch
                .iter()
                .filter(|c| rows.iter().any(|(h, ..)| *h == c.embed_hash))
                .count() as u64;
        }
    }

    /// The next chunks to embed after `after` (a `chunk_id`, moved past them) that have
    /// no vector of `model`; empty at the end.
    fn unembedded_after(
        &self,
        model: &str,
        after: &mut i64,
    ) -> Result<Vec<loci_store::map::UnembeddedChunk>> {
        let rows =
            loci_store::map::unembedded_chunks(self.store.conn(), model, *after, EMBED_BATCH)?;
        if let Some(last) = rows.last() {
            *after = last.chunk_id;
        }
        Ok(rows)
    }

    /// The files nearest `query` by their chunks' vectors, best first (a file at its best
    /// chunk), or why there are none. Vectors are read once per version of the store's data.
    #[tracing::instrument(level = "debug", skip_all)]
    pub(crate) fn dense_files(&self, query: &str) -> DenseState {
        if self.embeddings_model_dir().is_none() {
            return DenseState::Off;
        }
        match self.dense_files_or_error(query) {
            Ok(state) => state,
            Err(e) => DenseState::Failed(e.to_string()),
        }
    }

    fn dense_files_or_error(&self, query: &str) -> Result<DenseState> {
        let dir = self.configured_model_dir()?;
        let embed_query = |model: &Embedder| {
            model
                .embed(&[query])
                .map(|mut v| v.swap_remove(0))
                .map_err(|e| EngineError::InvalidArgument {
                    name: "embeddings".into(),
                    message: e.to_string(),
                })
        };
        // A first question loads the model and embeds itself on another thread while this
        // one reads the vectors: the two costs overlap. The model's id is known only once
        // it loads, so every vector is read and those of other models dropped.
        let (q, (vectors, chunks, embedded)) = std::thread::scope(|scope| {
            let loaded = self.loaded_embedder(&dir);
            let (config, dir) = (&self.config.embeddings, &dir);
            let embed_query = &embed_query;
            let loading = loaded.is_none().then(|| {
                scope.spawn(move || {
                    let model = load_embedder(dir, config)?;
                    let q = embed_query(&model)?;
                    Ok::<_, EngineError>((Arc::new(model), q))
                })
            });
            let read = self.vectors_read();
            let (model, q) = match (loaded, loading) {
                (Some(m), _) => {
                    let q = embed_query(&m)?;
                    (m, q)
                }
                (None, Some(handle)) => match handle.join() {
                    Ok(loaded) => loaded?,
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                (None, None) => unreachable!("the model is loaded or loading"),
            };
            let id = model.model_id().to_string();
            // Kept before the vectors: keeping a newly loaded model resets what is kept.
            self.keep_embedder(dir.clone(), model);
            let vectors = self.vectors_of(&id, read?)?;
            Ok::<_, EngineError>((q, vectors))
        })?;
        let done = vectors.len() as u64;
        let q = Quantized::new(&q);
        let mut scored: Vec<(f32, i64)> = vectors.iter().map(|(f, v)| (q.dot(v), *f)).collect();
        let keep = DENSE_CHUNKS.min(scored.len());
        if keep > 0 {
            scored.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0));
            scored.truncate(keep);
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let best = scored.first().map_or(0.0, |s| f64::from(s.0));
        let mut files = Vec::new();
        for (_, f) in scored {
            if !files.contains(&f) {
                files.push(f);
            }
        }
        Ok(DenseState::Ready {
            files,
            best,
            missing: chunks.saturating_sub(done),
            chunks,
            embedded,
        })
    }

    /// Every stored vector with its model, unless the vectors of this version of the
    /// store's data are already read (`None`).
    fn vectors_read(&self) -> Result<Option<Vec<loci_store::map::ChunkVector>>> {
        let stamp = self.store.data_stamp()?;
        let dense = self.dense.lock().unwrap_or_else(|p| p.into_inner());
        if dense.stamp == Some(stamp) {
            return Ok(None);
        }
        drop(dense);
        Ok(Some(loci_store::map::chunk_vectors(self.store.conn())?))
    }

    /// The vectors of `model` (from `read`, else those kept), the chunks to embed and the
    /// files with a vector; what is read is kept for the next question.
    fn vectors_of(
        &self,
        model: &str,
        read: Option<Vec<loci_store::map::ChunkVector>>,
    ) -> Result<DenseVectors> {
        // Read again when a model loaded meanwhile dropped what was kept.
        let read = match read {
            Some(rows) => Some(rows),
            None => self.vectors_read()?,
        };
        let mut dense = self.dense.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(rows) = read {
            dense.vectors = Arc::new(
                rows.into_iter()
                    .filter(|(m, ..)| m == model)
                    .map(|(_, file, scale, values)| (file, Quantized { values, scale }))
                    .collect(),
            );
            dense.embedded = Arc::new(dense.vectors.iter().map(|(f, _)| *f).collect());
            dense.chunks = loci_store::map::primary_chunk_count(self.store.conn())?;
            dense.stamp = Some(self.store.data_stamp()?);
        }
        Ok((dense.vectors.clone(), dense.chunks, dense.embedded.clone()))
    }
}

/// Loads the model at `dir` with the `[embeddings]` settings.
fn load_embedder(dir: &Path, config: &crate::config::EmbeddingsConfig) -> Result<Embedder> {
    let mut model = Embedder::load(dir).map_err(|e| EngineError::InvalidArgument {
        name: "embeddings.model".into(),
        message: e.to_string(),
    })?;
    let invalid = |e: loci_embed::EmbedError| EngineError::InvalidArgument {
        name: "embeddings".into(),
        message: e.to_string(),
    };
    model.set_max_tokens(config.max_tokens).map_err(invalid)?;
    model.set_threads(config.threads).map_err(invalid)?;
    Ok(model)
}
