//! Optional dense-retrieval embeddings: a sentence-transformers BERT model (such as
//! all-MiniLM-L6-v2) run on the CPU with candle, from a model directory on local disk.
//!
//! An [`Embedder`] turns texts into unit-length `f32` vectors: WordPiece tokens truncated to
//! [`Embedder::max_tokens`], a BERT forward pass, the mean of the last hidden states over the
//! real (unpadded) tokens, then L2 normalisation — the `Transformer → Pooling(mean) →
//! Normalize` pipeline sentence-transformers declares in the model's `modules.json`. Since
//! every vector has unit length, [`dot`] of two vectors is their cosine similarity.
//!
//! Nothing here touches the network: [`Embedder::load`] reads `config.json`,
//! `tokenizer.json` and `model.safetensors` from the directory it is given, and fails with an
//! [`EmbedError`] naming the file when one is missing or malformed.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::bert::{Bert, Config};

mod bert;
mod weights;

/// What went wrong loading a model directory or embedding texts.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model directory itself is not there (or is not a directory).
    #[error(
        "model directory {0} does not exist: it must hold config.json, tokenizer.json and model.safetensors"
    )]
    MissingDir(PathBuf),
    /// A model file could not be read (most often: it is missing).
    #[error("cannot read model file {path}: {source}")]
    Read {
        /// The file, inside the model directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A model file was read but its content is not what a BERT model directory holds.
    #[error("malformed model file {path}: {message}")]
    Malformed {
        /// The file, inside the model directory.
        path: PathBuf,
        /// What is wrong with it, as the parser or loader said.
        message: String,
    },
    /// [`Embedder::set_max_tokens`], [`Embedder::set_batch_size`] or [`Embedder::set_threads`]
    /// got a value out of range.
    #[error("{setting} {requested} is out of range: it must be in {min}..={max}")]
    OutOfRange {
        /// The setting's name: `max_tokens`, `batch_size` or `threads`.
        setting: &'static str,
        /// The value asked for.
        requested: usize,
        /// The smallest value allowed.
        min: usize,
        /// The largest value allowed.
        max: usize,
    },
    /// The tokenizer refused a text.
    #[error("cannot tokenize text {index}: {message}")]
    Tokenize {
        /// The text's index in the slice given to [`Embedder::embed`].
        index: usize,
        /// The tokenizer's message.
        message: String,
    },
    /// The forward pass failed (a tensor shape or allocation error: a bug or exhausted memory).
    #[error("embedding forward pass failed: {0}")]
    Compute(String),
}

/// The number of word pieces (counting `[CLS]` and `[SEP]`) a text is truncated to when the
/// model directory's `sentence_bert_config.json` does not say: all-MiniLM-L6-v2's
/// `max_seq_length`, which it was trained with.
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// The number of texts run through the model in one forward pass by default. Measured on 2
/// cores over Python functions (docs/benchmarks.md, "Embeddings"): batches of 8 to 32 cost
/// about the same CPU per text, batch 1 a third more; 32 held 1.6× the peak memory of 16
/// (attention is `batch × 12 heads × tokens²` floats).
pub const DEFAULT_BATCH_SIZE: usize = 16;

/// A loaded sentence-transformers BERT model and its tokenizer, ready to embed texts.
///
/// Loading reads the safetensors file's tensors into memory (the workspace forbids `unsafe`, so
/// no mmap): about 90 MB for all-MiniLM-L6-v2, held as `f32` tensors for the embedder's life.
/// [`Embedder::embed`] takes `&self`, so one embedder can serve several threads; it computes
/// on a thread pool of its own ([`Embedder::set_threads`]), never on rayon's global pool.
pub struct Embedder {
    model: Bert,
    tokenizer: Tokenizer,
    device: Device,
    /// Hidden size: the length of every vector.
    dim: usize,
    /// `max_position_embeddings`: no text can be longer, in word pieces.
    max_positions: usize,
    pad_id: u32,
    max_tokens: usize,
    batch_size: usize,
    /// The threads [`Embedder::embed`] runs on: its own pool, so embedding neither waits for
    /// nor starves work on rayon's global pool (loci's scan), and its size is this
    /// embedder's own setting rather than process-wide.
    pool: rayon::ThreadPool,
    /// `<dir name>@<hash>`, without the `:<max_tokens>` suffix of `model_id`.
    model_label: String,
    /// `<model_label>:<max_tokens>`, kept in step by [`Embedder::set_max_tokens`].
    model_id: String,
}

#[derive(serde::Deserialize)]
struct SentenceBertConfig {
    max_seq_length: usize,
}

impl Embedder {
    /// Loads the model in `dir`: `config.json` (a Hugging Face BERT config), `tokenizer.json`
    /// (a Hugging Face tokenizers file) and `model.safetensors` (`f32` weights, or `f16`/`bf16`
    /// widened to `f32`; tensor names with or without a `bert.` prefix). `sentence_bert_config.json` is read if present for `max_seq_length`,
    /// the default [`Embedder::max_tokens`]; otherwise [`DEFAULT_MAX_TOKENS`] applies, capped
    /// at the model's `max_position_embeddings`.
    ///
    /// Only these local files are read; there is no download and no cache.
    ///
    /// # Errors
    /// [`EmbedError::MissingDir`] when `dir` is not a directory, [`EmbedError::Read`] naming the
    /// file that cannot be read, [`EmbedError::Malformed`] naming the file whose content is
    /// wrong (bad JSON, missing fields, missing or mis-shaped tensors).
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        if !dir.is_dir() {
            return Err(EmbedError::MissingDir(dir.to_path_buf()));
        }
        let config_path = dir.join("config.json");
        let config_bytes = read(&config_path)?;
        let config: Config =
            serde_json::from_slice(&config_bytes).map_err(|e| malformed(&config_path, e))?;
        if let Some(message) = config.unsupported() {
            return Err(EmbedError::Malformed {
                path: config_path,
                message,
            });
        }
        let pad_id = u32::try_from(config.pad_token_id).map_err(|_| EmbedError::Malformed {
            path: config_path.clone(),
            message: format!("pad_token_id {} does not fit in u32", config.pad_token_id),
        })?;

        let max_tokens = match read_optional(&dir.join("sentence_bert_config.json"))? {
            Some((path, bytes)) => {
                let st: SentenceBertConfig =
                    serde_json::from_slice(&bytes).map_err(|e| malformed(&path, e))?;
                st.max_seq_length
            }
            None => DEFAULT_MAX_TOKENS,
        }
        .clamp(MIN_TOKENS, config.max_position_embeddings.max(MIN_TOKENS));

        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer_bytes = read(&tokenizer_path)?;
        let weights_path = dir.join("model.safetensors");
        let device = Device::Cpu;
        // Parsing tokenizer.json (~20 ms: a 30,522-word vocabulary) overlaps reading the
        // weights (~35 ms for 90 MB); errors are still reported in file order.
        let (tokenizer, weights) = std::thread::scope(|scope| {
            let tokenizer = scope.spawn(|| Tokenizer::from_bytes(&tokenizer_bytes));
            let weights = weights::read_f32_tensors(&weights_path, &device);
            (tokenizer.join(), weights)
        });
        let mut tokenizer = match tokenizer {
            Ok(parsed) => parsed.map_err(|e| malformed(&tokenizer_path, e))?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        // tokenizer.json files often carry the exporter's fixed padding (all-MiniLM-L6-v2's pads
        // every text to 128): padding is done here, per batch, to the longest text.
        tokenizer.with_padding(None);
        let (tensors, weights_len) = weights.map_err(|e| match e {
            weights::Error::Io(source) => EmbedError::Read {
                path: weights_path.clone(),
                source,
            },
            weights::Error::Format(message) => EmbedError::Malformed {
                path: weights_path.clone(),
                message,
            },
        })?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let model =
            Bert::load(vb, &config).map_err(|e| malformed(&weights_path, candle_message(&e)))?;

        // The label changes whenever anything that shapes a vector does: the architecture
        // (config.json), the vocabulary and normalisation (tokenizer.json), the weights (their
        // byte length: hashing 90 MB would cost ~20 ms on every load).
        let mut hasher = blake3::Hasher::new();
        hasher.update(&(config_bytes.len() as u64).to_le_bytes());
        hasher.update(&config_bytes);
        hasher.update(&(tokenizer_bytes.len() as u64).to_le_bytes());
        hasher.update(&tokenizer_bytes);
        hasher.update(&weights_len.to_le_bytes());
        let hash = hasher.finalize().to_hex();
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "model".to_owned());
        let model_label = format!("{name}@{}", &hash[..12]);

        let mut embedder = Embedder {
            model,
            tokenizer,
            device,
            dim: config.hidden_size,
            max_positions: config.max_position_embeddings,
            pad_id,
            max_tokens,
            batch_size: DEFAULT_BATCH_SIZE,
            pool: thread_pool(DEFAULT_THREADS)?,
            model_id: String::new(),
            model_label,
        };
        embedder.set_max_tokens(max_tokens)?;
        Ok(embedder)
    }

    /// The length of every vector [`Embedder::embed`] returns (the model's hidden size:
    /// 384 for all-MiniLM-L6-v2).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// A stable label for where a vector came from: `<model directory name>@<12 hex digits>:
    /// <max_tokens>`, e.g. `all-MiniLM-L6-v2@3f1c0a9d2b7e:256`. The digits hash `config.json`,
    /// `tokenizer.json` and the byte length of `model.safetensors`; the suffix is the
    /// truncation length. Vectors stored under one label are comparable with each other and
    /// with queries embedded under the same label, and with nothing else.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The most word pieces of a text the model sees, counting `[CLS]` and `[SEP]`; the rest
    /// of a longer text is cut off before embedding.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Sets [`Embedder::max_tokens`]. Shorter truncation is faster (attention is quadratic in
    /// it) but embeds less of a long text; it changes [`Embedder::model_id`].
    ///
    /// # Errors
    /// [`EmbedError::OutOfRange`] unless `3 <= max_tokens <= max_position_embeddings` (512 for
    /// all-MiniLM-L6-v2): `[CLS]`, one word piece and `[SEP]` at the least.
    pub fn set_max_tokens(&mut self, max_tokens: usize) -> Result<(), EmbedError> {
        if !(MIN_TOKENS..=self.max_positions).contains(&max_tokens) {
            return Err(EmbedError::OutOfRange {
                setting: "max_tokens",
                requested: max_tokens,
                min: MIN_TOKENS,
                max: self.max_positions,
            });
        }
        self.tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| EmbedError::Compute(e.to_string()))?;
        self.max_tokens = max_tokens;
        self.model_id = format!("{}:{max_tokens}", self.model_label);
        Ok(())
    }

    /// How many texts [`Embedder::embed`] runs through the model in one forward pass
    /// ([`DEFAULT_BATCH_SIZE`] unless set).
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Sets [`Embedder::batch_size`]. It changes speed and peak memory, never the vectors.
    ///
    /// # Errors
    /// [`EmbedError::OutOfRange`] unless `1 <= batch_size <= 1024`.
    pub fn set_batch_size(&mut self, batch_size: usize) -> Result<(), EmbedError> {
        if !(1..=MAX_BATCH_SIZE).contains(&batch_size) {
            return Err(EmbedError::OutOfRange {
                setting: "batch_size",
                requested: batch_size,
                min: 1,
                max: MAX_BATCH_SIZE,
            });
        }
        self.batch_size = batch_size;
        Ok(())
    }

    /// How many threads [`Embedder::embed`] computes on.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Sets [`Embedder::threads`]: the embedder's own thread pool is replaced by one of
    /// `threads` threads. It changes speed and CPU use, never the vectors.
    ///
    /// # Errors
    /// [`EmbedError::OutOfRange`] unless `1 <= threads <= 256`; [`EmbedError::Compute`] when
    /// the operating system refuses to start the threads.
    pub fn set_threads(&mut self, threads: usize) -> Result<(), EmbedError> {
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(EmbedError::OutOfRange {
                setting: "threads",
                requested: threads,
                min: 1,
                max: MAX_THREADS,
            });
        }
        self.pool = thread_pool(threads)?;
        Ok(())
    }

    /// Embeds `texts`: one vector of [`Embedder::dim`] `f32`s per text, in the same order,
    /// each of unit L2 length (an empty text embeds `[CLS] [SEP]`, which has a vector too).
    ///
    /// Texts are sorted by token count and run [`Embedder::batch_size`] at a time, each batch
    /// padded to its longest text; padding is masked out of attention and pooling, so a
    /// text's vector does not depend on what it was batched with (to float rounding, ~1e-6).
    ///
    /// # Errors
    /// [`EmbedError::Tokenize`] naming the text the tokenizer refused, [`EmbedError::Compute`]
    /// when the forward pass fails.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch_fast(texts.to_vec(), true)
            .map_err(|e| {
                // The batch call does not say which text failed: find it.
                let index = texts
                    .iter()
                    .position(|t| self.tokenizer.encode_fast(*t, true).is_err())
                    .unwrap_or(0);
                EmbedError::Tokenize {
                    index,
                    message: e.to_string(),
                }
            })?;
        let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();

        // Similar lengths together: the least padding, so the least wasted work.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());

        // The batches run side by side on our pool (candle's matrix products also split
        // their work over the current rayon pool, but most of a forward pass is not matrix
        // products: one batch at a time kept 2 threads 57% busy).
        let batches: Vec<&[usize]> = order.chunks(self.batch_size).collect();
        let pooled: Vec<Vec<Vec<f32>>> = self.pool.install(|| {
            use rayon::prelude::*;
            batches
                .par_iter()
                .map(|chunk| {
                    let batch: Vec<&[u32]> = chunk.iter().map(|&i| ids[i]).collect();
                    self.forward(&batch)
                        .map_err(|e| EmbedError::Compute(candle_message(&e)))
                })
                .collect::<Result<_, _>>()
        })?;
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); ids.len()];
        for (chunk, pooled) in batches.iter().zip(pooled) {
            for (&i, v) in chunk.iter().zip(pooled) {
                vectors[i] = v;
            }
        }
        Ok(vectors)
    }

    /// One forward pass over token id sequences (already truncated, with `[CLS]`/`[SEP]`):
    /// pads them to the longest with the model's pad id, and returns the masked mean of the
    /// last hidden states, L2-normalised, one `Vec` of `dim` per sequence.
    fn forward(&self, batch: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let rows = batch.len();
        let width = batch.iter().map(|s| s.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for seq in batch {
            ids.extend_from_slice(seq);
            ids.extend(std::iter::repeat_n(self.pad_id, width - seq.len()));
            mask.extend(std::iter::repeat_n(1u32, seq.len()));
            mask.extend(std::iter::repeat_n(0u32, width - seq.len()));
        }
        let ids = Tensor::from_vec(ids, (rows, width), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, width), &self.device)?;
        let hidden = self.model.forward(&ids, &mask)?; // rows × width × dim

        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // rows × width × 1
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // rows × dim
        let counts = mask.sum(1)?; // rows × 1: every row has [CLS] and [SEP], so ≥ 2
        let mean = summed.broadcast_div(&counts)?;
        let mut out = mean.to_vec2::<f32>()?;
        for v in &mut out {
            normalize(v);
        }
        Ok(out)
    }
}

/// The dot product of two vectors of equal length; for two vectors from
/// [`Embedder::embed`] it is their cosine similarity, in `[-1, 1]`.
///
/// # Panics
/// When the lengths differ (vectors from different models must never be compared).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "dot of vectors of different lengths");
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A vector stored in one byte per component: `values[i] as f32 * scale` approximates the
/// original component. A 384-dimension vector takes 384 bytes and a 4-byte scale instead of
/// 1,536 bytes; cosines computed from it differ from the `f32` ones by about 1e-3.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    /// The components, each `round(x / scale)`, in `-127..=127`.
    pub values: Vec<i8>,
    /// The largest absolute component divided by 127 (`0.0` for an all-zero vector).
    pub scale: f32,
}

impl Quantized {
    /// Quantizes `v` symmetrically: the component of largest magnitude maps to ±127.
    pub fn new(v: &[f32]) -> Quantized {
        let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if max == 0.0 {
            return Quantized {
                values: vec![0; v.len()],
                scale: 0.0,
            };
        }
        let scale = max / 127.0;
        let values = v
            .iter()
            // In range by construction: |x| / scale <= 127.
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
            .collect();
        Quantized { values, scale }
    }

    /// The approximate dot product with another quantized vector: the integer dot product
    /// (exact in `i32`: 384 × 127² fits) times both scales.
    ///
    /// # Panics
    /// When the lengths differ.
    pub fn dot(&self, other: &Quantized) -> f32 {
        assert_eq!(
            self.values.len(),
            other.values.len(),
            "dot of vectors of different lengths"
        );
        let sum: i32 = self
            .values
            .iter()
            .zip(&other.values)
            .map(|(&a, &b)| i32::from(a) * i32::from(b))
            .sum();
        sum as f32 * self.scale * other.scale
    }
}

/// `[CLS]`, one word piece, `[SEP]`.
const MIN_TOKENS: usize = 3;

const MAX_BATCH_SIZE: usize = 1024;

const MAX_THREADS: usize = 256;

/// The number of threads an embedder computes on until [`Embedder::set_threads`]: one, so
/// that embedding a query next to other work (a scan, an editor) takes one core and no more.
/// A second thread did not speed up batches on a 2-core machine that was busy with other
/// work; on an idle many-core machine, bulk embedding may gain from more.
pub const DEFAULT_THREADS: usize = 1;

fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, EmbedError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("loci-embed-{i}"))
        .build()
        .map_err(|e| EmbedError::Compute(format!("cannot start {threads} embedding threads: {e}")))
}

/// Scales `v` to unit length; a zero vector stays zero (as torch's `F.normalize`, whose
/// denominator is clamped at 1e-12).
fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    for x in v {
        *x /= norm;
    }
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(path).map_err(|source| EmbedError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a file that a model directory may lack: `None` when it is not there.
fn read_optional(path: &Path) -> Result<Option<(PathBuf, Vec<u8>)>, EmbedError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some((path.to_path_buf(), bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(EmbedError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// A candle error's message without the backtrace candle attaches when `RUST_BACKTRACE` is
/// set (dozens of lines that would bury what went wrong).
fn candle_message(e: &candle_core::Error) -> String {
    match e {
        candle_core::Error::WithBacktrace { inner, .. } => candle_message(inner),
        candle_core::Error::Context { inner, context } => {
            format!("{context}: {}", candle_message(inner))
        }
        candle_core::Error::WithPath { inner, path } => {
            format!("{}: {}", path.display(), candle_message(inner))
        }
        e => e.to_string(),
    }
}

fn malformed(path: &Path, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Malformed {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
