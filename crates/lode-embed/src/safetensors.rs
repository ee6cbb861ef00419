//! A small reader for the safetensors format: an 8-byte little-endian header length,
//! a JSON header `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {…}}`,
//! then the raw little-endian tensor data. Only what a model2vec model needs, with every
//! offset checked, so a truncated or corrupt file is an error and never a panic.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The element types this crate can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dtype {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    I8,
    U8,
}

impl Dtype {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "F64" => Dtype::F64,
            "F32" => Dtype::F32,
            "F16" => Dtype::F16,
            "BF16" => Dtype::BF16,
            "I64" => Dtype::I64,
            "I32" => Dtype::I32,
            "I8" => Dtype::I8,
            "U8" => Dtype::U8,
            _ => return None,
        })
    }

    pub(crate) fn size(self) -> usize {
        match self {
            Dtype::F64 | Dtype::I64 => 8,
            Dtype::F32 | Dtype::I32 => 4,
            Dtype::F16 | Dtype::BF16 => 2,
            Dtype::I8 | Dtype::U8 => 1,
        }
    }
}

/// One tensor: its type, shape and byte range in the file.
#[derive(Debug, Clone)]
pub(crate) struct Tensor {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    /// Absolute byte range in the file.
    pub range: std::ops::Range<usize>,
}

#[derive(Deserialize)]
struct RawTensor {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: (usize, usize),
}

/// Parses the header of a safetensors file held in `bytes`. Tensors whose dtype this crate
/// does not read are skipped; the error is a short reason (the caller adds the file name).
pub(crate) fn parse(bytes: &[u8]) -> Result<BTreeMap<String, Tensor>, String> {
    let Some(len_bytes) = bytes.get(..8) else {
        return Err(format!(
            "not a safetensors file: {} bytes, shorter than the 8-byte header length",
            bytes.len()
        ));
    };
    let header_len = u64::from_le_bytes(len_bytes.try_into().expect("8 bytes"));
    let rest = (bytes.len() - 8) as u64;
    if header_len > rest {
        return Err(format!(
            "not a safetensors file: header length {header_len} exceeds the {rest} bytes that follow"
        ));
    }
    let data_start = 8 + header_len as usize;
    let header = std::str::from_utf8(&bytes[8..data_start])
        .map_err(|_| "not a safetensors file: header is not UTF-8".to_string())?;
    let raw: BTreeMap<String, serde_json::Value> = serde_json::from_str(header.trim_end())
        .map_err(|e| format!("not a safetensors file: header is not a JSON object ({e})"))?;
    let data_len = bytes.len() - data_start;
    let mut tensors = BTreeMap::new();
    for (name, value) in raw {
        if name == "__metadata__" {
            continue;
        }
        let t: RawTensor = serde_json::from_value(value)
            .map_err(|e| format!("corrupt safetensors header: tensor {name:?}: {e}"))?;
        let (begin, end) = t.data_offsets;
        if begin > end || end > data_len {
            return Err(format!(
                "corrupt safetensors file: tensor {name:?} spans bytes {begin}..{end} but the data section has {data_len} bytes"
            ));
        }
        let Some(dtype) = Dtype::parse(&t.dtype) else {
            continue;
        };
        let elems = t
            .shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()));
        if elems != Some(end - begin) {
            return Err(format!(
                "corrupt safetensors file: tensor {name:?} has shape {:?} of {} but {} data bytes",
                t.shape,
                t.dtype,
                end - begin
            ));
        }
        tensors.insert(
            name,
            Tensor {
                dtype,
                shape: t.shape,
                range: data_start + begin..data_start + end,
            },
        );
    }
    Ok(tensors)
}

/// IEEE 754 half precision to single precision, exact for every input.
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalise the mantissa.
            let shift = mant.leading_zeros() - 21; // bring the leading 1 to bit 10
            let mant = (mant << shift) & 0x3ff;
            let exp = 127 - 15 + 1 - shift;
            sign | (exp << 23) | (mant << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (mant << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (mant << 13),
    };
    f32::from_bits(bits)
}

/// Decodes a tensor's bytes into `f32`s (float dtypes only).
pub(crate) fn to_f32(dtype: Dtype, data: &[u8]) -> Option<Vec<f32>> {
    Some(match dtype {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect(),
        Dtype::F64 => data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")) as f32)
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16))
            .collect(),
        Dtype::I8 => data.iter().map(|&b| b as i8 as f32).collect(),
        _ => return None,
    })
}

/// Decodes an integer tensor into indices (I64, I32); negative values are rejected.
pub(crate) fn to_indices(dtype: Dtype, data: &[u8]) -> Option<Vec<u32>> {
    match dtype {
        Dtype::I64 => data
            .chunks_exact(8)
            .map(|b| u32::try_from(i64::from_le_bytes(b.try_into().expect("8 bytes"))).ok())
            .collect(),
        Dtype::I32 => data
            .chunks_exact(4)
            .map(|b| u32::try_from(i32::from_le_bytes(b.try_into().expect("4 bytes"))).ok())
            .collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn parses_a_small_file() {
        let bytes = file(
            r#"{"__metadata__":{"a":"b"},"embeddings":{"dtype":"I8","shape":[2,3],"data_offsets":[0,6]}}"#,
            &[1, 2, 3, 255, 254, 253],
        );
        let t = parse(&bytes).unwrap();
        let e = &t["embeddings"];
        assert_eq!(e.dtype, Dtype::I8);
        assert_eq!(e.shape, vec![2, 3]);
        assert_eq!(
            to_f32(e.dtype, &bytes[e.range.clone()]).unwrap(),
            vec![1.0, 2.0, 3.0, -1.0, -2.0, -3.0]
        );
    }

    #[test]
    fn rejects_corrupt_files() {
        assert!(parse(b"abc").unwrap_err().contains("shorter"));
        assert!(
            parse(&file("{}", &[]))
                .map(|t| t.is_empty())
                .unwrap_or(false)
        );
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(b"{}");
        assert!(parse(&huge).unwrap_err().contains("header length"));
        assert!(parse(&file("not json", &[])).unwrap_err().contains("JSON"));
        let out_of_range = file(
            r#"{"e":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
            &[0; 8],
        );
        assert!(parse(&out_of_range).unwrap_err().contains("spans"));
        let wrong_shape = file(
            r#"{"e":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#,
            &[0; 8],
        );
        assert!(parse(&wrong_shape).unwrap_err().contains("shape"));
    }

    #[test]
    fn f16_conversion_is_exact() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x0200), 2f32.powi(-15));
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }
}
