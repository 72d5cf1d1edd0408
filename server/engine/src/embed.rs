//! Optional dense retrieval: vectors of the code chunks from a local sentence-embedding
//! model (`[embeddings] model`, or `LOCI_EMBEDDINGS_MODEL`), and the files nearest a
//! question among them, for `context`'s fusion (`crate::retrieve`).
//!
//! `loci embed` fills the vectors incrementally: the chunks without a vector of the
//! configured model, a batch at a time, each batch in its own short transaction, so it
//! can be stopped and resumed and never holds the write lock long. A chunk's text as the
//! model sees it: its file's path, its definition's name and its lines, cut at
//! `[embeddings] max_tokens` word pieces. Test, example and vendored code is not embedded
//! ([`embeddable`]). Rewriting a file drops its chunks' vectors with
//! them; the next `loci embed` makes new ones. Answers say when vectors are missing or
//! partial (envelope notes), never silently.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use loci_embed::{Embedder, Quantized};
use serde::Serialize;

use crate::{EngineError, Result, Workspace};

/// The environment variable naming the model directory; it overrides `[embeddings] model`.
pub const MODEL_ENV: &str = "LOCI_EMBEDDINGS_MODEL";

/// Chunks embedded per transaction by [`Workspace::embed`], and between two calls of its
/// progress callback: about 2 s on 2 cores, so a language server that stops embedding for
/// a scan (after a save) starts the scan that soon (256 had made a save wait ~15 s).
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
    /// Chunks to embed in the map ([`embeddable`] files').
    pub chunks: u64,
    /// Wall time, ms (model load included).
    pub duration_ms: u64,
}

/// Progress of [`Workspace::embed`]: chunks with a vector, of the chunks to embed.
#[derive(Clone, Copy, Debug)]
pub struct EmbedProgress {
    /// Chunks with a vector of the model.
    pub done: u64,
    /// Chunks to embed ([`embeddable`] files').
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
    /// Chunks to embed when `vectors` were read ([`embeddable`] files').
    chunks: u64,
}

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
        /// Chunks to embed ([`embeddable`] files').
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
        let dir = self.embeddings_model_dir().ok_or_else(|| EngineError::InvalidArgument {
            name: "embeddings.model".into(),
            message: format!(
                "no embedding model is configured: set `[embeddings] model = \"PATH\"` in .loci/config.toml or {MODEL_ENV}=PATH (a local directory with config.json, tokenizer.json and model.safetensors)"
            ),
        })?;
        let mut dense = self.dense.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(m), Some(d)) = (&dense.model, &dense.dir)
            && *d == dir
        {
            return Ok(m.clone());
        }
        let mut model = Embedder::load(&dir).map_err(|e| EngineError::InvalidArgument {
            name: "embeddings.model".into(),
            message: e.to_string(),
        })?;
        let invalid = |e: loci_embed::EmbedError| EngineError::InvalidArgument {
            name: "embeddings".into(),
            message: e.to_string(),
        };
        model
            .set_max_tokens(self.config.embeddings.max_tokens)
            .map_err(invalid)?;
        model
            .set_threads(self.config.embeddings.threads)
            .map_err(invalid)?;
        let model = Arc::new(model);
        *dense = Dense {
            model: Some(model.clone()),
            dir: Some(dir),
            ..Default::default()
        };
        Ok(model)
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
        let (total, mut done) = self.embeddable_chunks(&id)?;
        let mut embedded = 0u64;
        let mut after = 0;
        loop {
            let batch = match progress(EmbedProgress { done, total }) {
                ControlFlow::Continue(()) => self.unembedded_after(&id, &mut after)?,
                ControlFlow::Break(()) => Vec::new(),
            };
            if batch.is_empty() {
                let report = EmbedReport {
                    model: id,
                    embedded,
                    with_vectors: done,
                    chunks: total,
                    duration_ms: started.elapsed().as_millis() as u64,
                };
                return self.envelope(report, Vec::new());
            }
            let mut texts: Vec<String> = Vec::with_capacity(batch.len());
            let mut file: Option<(String, Vec<String>)> = None;
            for c in &batch {
                if file.as_ref().is_none_or(|(p, _)| *p != c.path) {
                    let lines = self
                        .read_served_as_scanned(&c.path)
                        .map(|(t, _)| t.lines().map(str::to_string).collect())
                        .unwrap_or_default();
                    file = Some((c.path.clone(), lines));
                }
                let lines = file.as_ref().map(|(_, l)| l.as_slice()).unwrap_or_default();
                let body: Vec<&str> = lines
                    .iter()
                    .skip(c.start_line as usize)
                    .take((c.end_line + 1).saturating_sub(c.start_line) as usize)
                    .map(String::as_str)
                    .collect();
                texts.push(chunk_text(&c.path, &c.name, &body.join("\n")));
            }
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = model
                .embed(&refs)
                .map_err(|e| EngineError::InvalidArgument {
                    name: "embeddings".into(),
                    message: e.to_string(),
                })?;
            let rows: Vec<(i64, f32, Vec<i8>)> = batch
                .iter()
                .zip(vectors)
                .map(|(c, v)| {
                    let q = Quantized::new(&v);
                    (c.chunk_id, q.scale, q.values)
                })
                .collect();
            self.store
                .write(|tx| loci_store::map::insert_vectors(tx, &id, &rows))?;
            embedded += rows.len() as u64;
            done += rows.len() as u64;
        }
    }

    /// The next chunks after `after` (a `chunk_id`, moved past them) that [`embeddable`]
    /// files have and that have no vector of `model`; empty at the end.
    fn unembedded_after(
        &self,
        model: &str,
        after: &mut i64,
    ) -> Result<Vec<loci_store::map::UnembeddedChunk>> {
        loop {
            let rows =
                loci_store::map::unembedded_chunks(self.store.conn(), model, *after, EMBED_BATCH)?;
            let Some(last) = rows.last() else {
                return Ok(rows);
            };
            *after = last.chunk_id;
            let rows: Vec<_> = rows.into_iter().filter(|c| embeddable(&c.path)).collect();
            if !rows.is_empty() {
                return Ok(rows);
            }
        }
    }

    /// The chunks [`Workspace::embed`] embeds (those of [`embeddable`] files), and how many
    /// of them have a vector of `model`.
    fn embeddable_chunks(&self, model: &str) -> Result<(u64, u64)> {
        Ok(loci_store::map::chunk_counts(self.store.conn(), model)?
            .into_iter()
            .filter(|(path, _, _)| embeddable(path))
            .fold((0, 0), |(t, d), (_, chunks, with)| (t + chunks, d + with)))
    }

    /// The files nearest `query` by their chunks' vectors, best first (a file at its best
    /// chunk), or why there are none. Vectors are read once per version of the store's data.
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
        let model = self.embedder()?;
        let id = model.model_id().to_string();
        let stamp = self.store.data_stamp()?;
        let (vectors, chunks, embedded) = {
            let mut dense = self.dense.lock().unwrap_or_else(|p| p.into_inner());
            if dense.stamp != Some(stamp) {
                let rows = loci_store::map::chunk_vectors(self.store.conn(), &id)?;
                dense.vectors = Arc::new(
                    rows.into_iter()
                        .map(|(file, scale, values)| (file, Quantized { values, scale }))
                        .collect(),
                );
                dense.embedded = Arc::new(dense.vectors.iter().map(|(f, _)| *f).collect());
                (dense.chunks, _) = self.embeddable_chunks(&id)?;
                dense.stamp = Some(stamp);
            }
            (dense.vectors.clone(), dense.chunks, dense.embedded.clone())
        };
        let done = vectors.len() as u64;
        let q = model
            .embed(&[query])
            .map_err(|e| EngineError::InvalidArgument {
                name: "embeddings".into(),
                message: e.to_string(),
            })?;
        let q = Quantized::new(&q[0]);
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
}

/// Whether a file's chunks are embedded: all but test, example and vendored code, which
/// every ranked list puts after the rest unless the question asks for it (lexical search
/// still finds it), and which is most of a large repository's chunks (69% of the
/// stdlib's): embedding costs what the answers use.
pub fn embeddable(path: &str) -> bool {
    loci_core::secondary::secondary_code(path).is_none()
}

/// The text of a chunk as the model sees it: its path, its definition's name, its lines.
pub fn chunk_text(path: &str, name: &str, body: &str) -> String {
    if name.is_empty() {
        format!("{path}\n{body}")
    } else {
        format!("{path} {name}\n{body}")
    }
}
