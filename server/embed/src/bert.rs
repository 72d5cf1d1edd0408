//! The BERT encoder (Devlin et al. 2019) as Hugging Face `transformers` runs it for
//! `BertModel`, inference only: embeddings, then `num_hidden_layers` of self-attention and
//! feed-forward blocks, each closed by a residual sum and a LayerNorm. It returns the last
//! hidden states; pooling is the caller's.
//!
//! Written here on candle-nn's layers rather than taken from candle-transformers, whose one
//! crate holds about 120 models (83,000 lines): compiling it took 135 s of CPU (35 s of a
//! clean release build's wall time on 2 cores) for this one file's worth. Dropout is absent (inference), and so are the pooler
//! and the heads: sentence-transformers models do not use them. Checked against an
//! independent numpy implementation by server/embed/tests/it/embed.rs.

use candle_core::{DType, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};

/// The fields of a Hugging Face BERT `config.json` this encoder reads.
#[derive(Debug, Clone, serde::Deserialize)]
pub(crate) struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    pub pad_token_id: usize,
    /// Only `absolute` (the default) is implemented.
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

impl Config {
    /// What in the config this encoder cannot run, if anything.
    pub(crate) fn unsupported(&self) -> Option<String> {
        if self.hidden_size == 0
            || self.num_attention_heads == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            return Some(format!(
                "hidden_size {} is not a positive multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        if Activation::parse(&self.hidden_act).is_none() {
            return Some(format!(
                "hidden_act {:?} is not one of gelu, gelu_new, gelu_pytorch_tanh, relu",
                self.hidden_act
            ));
        }
        match self.position_embedding_type.as_deref() {
            None | Some("absolute") => None,
            Some(other) => Some(format!(
                "position_embedding_type {other:?} is not supported: only \"absolute\""
            )),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Activation {
    /// `gelu` in transformers: the exact, erf-based GELU.
    GeluErf,
    /// `gelu_new` / `gelu_pytorch_tanh`: the tanh approximation.
    GeluTanh,
    Relu,
}

impl Activation {
    fn parse(name: &str) -> Option<Activation> {
        match name {
            "gelu" => Some(Activation::GeluErf),
            "gelu_new" | "gelu_pytorch_tanh" => Some(Activation::GeluTanh),
            "relu" => Some(Activation::Relu),
            _ => None,
        }
    }

    fn apply(self, xs: &Tensor) -> Result<Tensor> {
        match self {
            Activation::GeluErf => xs.gelu_erf(),
            Activation::GeluTanh => xs.gelu(),
            Activation::Relu => xs.relu(),
        }
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The encoder with its weights.
pub(crate) struct Bert {
    word_embeddings: Embedding,
    position_embeddings: Embedding,
    token_type_embeddings: Embedding,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_size: usize,
    activation: Activation,
}

impl Bert {
    /// Loads the weights under `vb` (tensor names as transformers saves them:
    /// `embeddings.word_embeddings.weight`, `encoder.layer.0.attention.self.query.weight`, …,
    /// with or without a leading `bert.`). `config` must have passed
    /// [`Config::unsupported`].
    pub(crate) fn load(vb: VarBuilder, config: &Config) -> Result<Bert> {
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let h = config.hidden_size;
        let eps = config.layer_norm_eps;
        let emb = vb.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let attention = l.pp("attention");
                Ok(Layer {
                    query: candle_nn::linear(h, h, attention.pp("self.query"))?,
                    key: candle_nn::linear(h, h, attention.pp("self.key"))?,
                    value: candle_nn::linear(h, h, attention.pp("self.value"))?,
                    attention_out: candle_nn::linear(h, h, attention.pp("output.dense"))?,
                    attention_norm: candle_nn::layer_norm(
                        h,
                        eps,
                        attention.pp("output.LayerNorm"),
                    )?,
                    intermediate: candle_nn::linear(
                        h,
                        config.intermediate_size,
                        l.pp("intermediate.dense"),
                    )?,
                    output: candle_nn::linear(config.intermediate_size, h, l.pp("output.dense"))?,
                    output_norm: candle_nn::layer_norm(h, eps, l.pp("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert {
            word_embeddings: candle_nn::embedding(config.vocab_size, h, emb.pp("word_embeddings"))?,
            position_embeddings: candle_nn::embedding(
                config.max_position_embeddings,
                h,
                emb.pp("position_embeddings"),
            )?,
            token_type_embeddings: candle_nn::embedding(
                config.type_vocab_size,
                h,
                emb.pp("token_type_embeddings"),
            )?,
            embeddings_norm: candle_nn::layer_norm(h, eps, emb.pp("LayerNorm"))?,
            layers,
            heads: config.num_attention_heads,
            head_size: h / config.num_attention_heads,
            activation: Activation::parse(&config.hidden_act).unwrap_or(Activation::GeluErf),
        })
    }

    /// The last hidden states, `batch × tokens × hidden_size`, for `ids` (`batch × tokens`
    /// `u32` word-piece ids, all of token type 0) and `mask` (same shape, `u32`: 1 for a
    /// real token, 0 for padding; padding is never attended to).
    pub(crate) fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (batch, tokens) = ids.dims2()?;
        let positions = Tensor::arange(0u32, tokens as u32, ids.device())?;
        let type_ids = Tensor::zeros(tokens, DType::U32, ids.device())?;
        let xs = self
            .word_embeddings
            .forward(ids)?
            .broadcast_add(&self.position_embeddings.forward(&positions)?)?
            .broadcast_add(&self.token_type_embeddings.forward(&type_ids)?)?;
        let mut xs = self.embeddings_norm.forward(&xs)?;

        // Added to the attention scores: 0 where a key is a real token, the lowest f32 where
        // it is padding, so its softmax weight is exactly 0 (as transformers does).
        let bias = ((mask.to_dtype(DType::F32)? - 1.0)? * f64::from(f32::MAX))?
            .reshape((batch, 1, 1, tokens))?;
        let scale = 1.0 / (self.head_size as f64).sqrt();
        for layer in &self.layers {
            // batch × tokens × hidden → batch × heads × tokens × head_size
            let split = |t: Tensor| -> Result<Tensor> {
                t.reshape((batch, tokens, self.heads, self.head_size))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let q = split(layer.query.forward(&xs)?)?;
            let k = split(layer.key.forward(&xs)?)?;
            let v = split(layer.value.forward(&xs)?)?;
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&bias)?;
            let weights = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = weights.matmul(&v)?.transpose(1, 2)?.reshape((
                batch,
                tokens,
                self.heads * self.head_size,
            ))?;
            let attended = layer
                .attention_norm
                .forward(&(layer.attention_out.forward(&context)? + &xs)?)?;
            let hidden = self
                .activation
                .apply(&layer.intermediate.forward(&attended)?)?;
            xs = layer
                .output_norm
                .forward(&(layer.output.forward(&hidden)? + &attended)?)?;
        }
        Ok(xs)
    }
}
