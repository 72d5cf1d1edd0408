//! Reading a `.safetensors` file straight into candle tensors, without `unsafe` and without
//! holding the whole file in memory first.
//!
//! candle's safe loader (`VarBuilder::from_buffered_safetensors`) wants the file as one
//! `Vec<u8>` and then copies every tensor out of it: 2 × 90 MB allocated and written for
//! all-MiniLM-L6-v2. Its mmap loader is `unsafe`, which the workspace forbids. Here each
//! `f32` tensor is read from the file directly into the `Vec<f32>` the tensor then owns: one
//! copy, from the page cache, about half the load time.
//!
//! The format (<https://github.com/huggingface/safetensors#format>): an 8-byte little-endian
//! header length `N`, `N` bytes of JSON mapping each tensor name to its `dtype`, `shape` and
//! `data_offsets` (`[begin, end)` bytes, counted from the end of the header), then the data,
//! little-endian.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use candle_core::{DType, Device, Tensor};

/// One tensor's entry in the header.
#[derive(serde::Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// Header lengths above this are refused before allocating: a real header lists a few
/// hundred tensors in a few tens of KB (all-MiniLM-L6-v2's is 11 KB).
const MAX_HEADER_BYTES: u64 = 100 << 20;

/// Reads every floating-point tensor of the safetensors file at `path` as an `f32` tensor on
/// `device` (`F16` and `BF16` are widened; integer tensors, such as BERT's `position_ids`
/// buffer, are skipped: no model loaded here reads them). Returns the tensors by name and
/// the file's length in bytes.
///
/// # Errors
/// `Err(message)` saying what is wrong with the file (the caller names the file): an I/O
/// error, a header that is not the safetensors JSON, or a tensor whose bytes do not match
/// its shape or lie outside the file.
pub(crate) fn read_f32_tensors(
    path: &Path,
    device: &Device,
) -> Result<(HashMap<String, Tensor>, u64), Error> {
    let mut file = std::fs::File::open(path).map_err(Error::Io)?;
    let file_len = file.metadata().map_err(Error::Io)?.len();
    let mut len_bytes = [0u8; 8];
    file.read_exact(&mut len_bytes).map_err(|_| {
        Error::Format(format!(
            "the file is {file_len} bytes, shorter than the 8-byte header length"
        ))
    })?;
    let header_len = u64::from_le_bytes(len_bytes);
    if header_len > MAX_HEADER_BYTES || 8 + header_len > file_len {
        return Err(Error::Format(format!(
            "header length {header_len} is beyond the file's {file_len} bytes: not a safetensors file"
        )));
    }
    let mut header = vec![0u8; header_len as usize];
    file.read_exact(&mut header).map_err(Error::Io)?;
    let header: HashMap<String, serde_json::Value> = serde_json::from_slice(&header)
        .map_err(|e| Error::Format(format!("header is not a JSON object: {e}")))?;
    let data_start = 8 + header_len;
    let data_len = file_len - data_start;

    let mut entries: Vec<(String, Entry)> = Vec::with_capacity(header.len());
    for (name, value) in header {
        if name == "__metadata__" {
            continue;
        }
        let entry: Entry = serde_json::from_value(value)
            .map_err(|e| Error::Format(format!("header entry `{name}`: {e}")))?;
        entries.push((name, entry));
    }
    // In file order: the reads then go forward through the file.
    entries.sort_by_key(|(_, e)| e.data_offsets[0]);

    let mut tensors = HashMap::with_capacity(entries.len());
    for (name, entry) in entries {
        let dtype = match entry.dtype.as_str() {
            "F32" => DType::F32,
            "F16" => DType::F16,
            "BF16" => DType::BF16,
            _ => continue,
        };
        let [begin, end] = entry.data_offsets;
        let numel: usize = entry.shape.iter().product();
        let expected = numel as u64 * dtype.size_in_bytes() as u64;
        if begin > end || end - begin != expected {
            return Err(Error::Format(format!(
                "tensor `{name}` of dtype {} and shape {:?} needs {expected} bytes, but its data_offsets are {begin}..{end}",
                entry.dtype, entry.shape
            )));
        }
        if end > data_len {
            return Err(Error::Format(format!(
                "tensor `{name}` ends at byte {end} of the data, which has only {data_len} bytes: the file is truncated"
            )));
        }
        file.seek(SeekFrom::Start(data_start + begin))
            .map_err(Error::Io)?;
        let tensor = if dtype == DType::F32 {
            let mut values = vec![0f32; numel];
            file.read_exact(bytemuck::cast_slice_mut(&mut values))
                .map_err(Error::Io)?;
            // The file is little-endian; a no-op on little-endian machines.
            for v in &mut values {
                *v = f32::from_bits(u32::from_le(v.to_bits()));
            }
            Tensor::from_vec(values, entry.shape, device)
        } else {
            let mut bytes = vec![0u8; expected as usize];
            file.read_exact(&mut bytes).map_err(Error::Io)?;
            Tensor::from_raw_buffer(&bytes, dtype, &entry.shape, device)
                .and_then(|t| t.to_dtype(DType::F32))
        }
        .map_err(|e| Error::Format(format!("tensor `{name}`: {}", crate::candle_message(&e))))?;
        tensors.insert(name, tensor);
    }
    Ok((tensors, file_len))
}

/// Why [`read_f32_tensors`] failed.
pub(crate) enum Error {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The file was read but is not a valid safetensors file.
    Format(String),
}
