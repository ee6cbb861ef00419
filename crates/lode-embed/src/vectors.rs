//! Vector encodings for storage, each with its similarity kernel.
//!
//! | encoding | bytes per vector (dim d) | stored as | similarity |
//! |---|---|---|---|
//! | [`F32`](VectorEncoding::F32) | `4·d` | little-endian `f32`s | dot product |
//! | [`Int8`](VectorEncoding::Int8) | `4 + d` | `f32` scale, then `d` `i8`s (`v ≈ scale·q`) | `scale·Σ query·q` (query in f32) |
//! | [`Binary`](VectorEncoding::Binary) | `8·⌈d/64⌉` | sign bits (`v > 0`), little-endian `u64` words | `1 − 2·hamming/d` |
//!
//! Every similarity is "higher is closer". For unit vectors the f32 and int8 scores
//! approximate the cosine; the binary score estimates the agreement of signs, a coarse
//! but very cheap first pass (popcount over 32 bytes for d = 256).
//!
//! ```
//! use lode_embed::vectors::VectorEncoding;
//! let (a, b) = ([0.6f32, 0.8, 0.0, 0.0], [0.8f32, 0.6, 0.0, 0.0]);
//! for enc in VectorEncoding::ALL {
//!     let mut stored = Vec::new();
//!     enc.encode(&b, &mut stored);
//!     assert_eq!(stored.len(), enc.bytes_per_vector(4));
//!     let query = enc.query(&a);
//!     let s = query.score(&stored);
//!     assert!(s > 0.4, "{enc:?} {s}");
//! }
//! ```

/// How vectors are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorEncoding {
    /// 32-bit floats, exact.
    F32,
    /// 8-bit integers with one `f32` scale per vector.
    Int8,
    /// One sign bit per dimension.
    Binary,
}

impl VectorEncoding {
    /// All encodings, most precise first.
    pub const ALL: [VectorEncoding; 3] = [
        VectorEncoding::F32,
        VectorEncoding::Int8,
        VectorEncoding::Binary,
    ];

    /// The name used in configuration and index fingerprints: `f32`, `int8`, `binary`.
    pub fn name(self) -> &'static str {
        match self {
            VectorEncoding::F32 => "f32",
            VectorEncoding::Int8 => "int8",
            VectorEncoding::Binary => "binary",
        }
    }

    /// The encoding called `name` (see [`name`](Self::name)).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Bytes one stored vector of `dim` dimensions takes.
    pub fn bytes_per_vector(self, dim: usize) -> usize {
        match self {
            VectorEncoding::F32 => 4 * dim,
            VectorEncoding::Int8 => 4 + dim,
            VectorEncoding::Binary => 8 * dim.div_ceil(64),
        }
    }

    /// Appends the stored form of `v` to `out` (exactly
    /// [`bytes_per_vector`](Self::bytes_per_vector) bytes).
    pub fn encode(self, v: &[f32], out: &mut Vec<u8>) {
        match self {
            VectorEncoding::F32 => {
                out.reserve(4 * v.len());
                for x in v {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            VectorEncoding::Int8 => {
                let start = out.len();
                out.resize(start + 4 + v.len(), 0);
                let scale = quantize_int8_into(v, &mut out[start + 4..]);
                out[start..start + 4].copy_from_slice(&scale.to_le_bytes());
            }
            VectorEncoding::Binary => {
                let words = v.len().div_ceil(64);
                out.reserve(8 * words);
                for w in 0..words {
                    out.extend_from_slice(&sign_word(v, w).to_le_bytes());
                }
            }
        }
    }

    /// Prepares a query vector for scoring against stored vectors of this encoding.
    pub fn query(self, q: &[f32]) -> Query {
        match self {
            VectorEncoding::F32 => Query::F32(q.to_vec()),
            VectorEncoding::Int8 => Query::Int8(q.to_vec()),
            VectorEncoding::Binary => Query::Binary(BinaryVector::from_f32(q)),
        }
    }
}

/// A query prepared for one encoding (see [`VectorEncoding::query`]).
#[derive(Debug, Clone)]
pub enum Query {
    /// For [`VectorEncoding::F32`].
    F32(Vec<f32>),
    /// For [`VectorEncoding::Int8`]: the query stays `f32` (asymmetric scoring:
    /// `scale·Σ q·v`), which keeps the ranking of the f32 vectors.
    Int8(Vec<f32>),
    /// For [`VectorEncoding::Binary`].
    Binary(BinaryVector),
}

impl Query {
    /// Similarity of this query to one stored vector (higher is closer). `stored` must
    /// be one vector of the same encoding and dimension.
    ///
    /// # Panics
    ///
    /// If `stored` is shorter than the encoding needs for the query's dimension.
    pub fn score(&self, stored: &[u8]) -> f32 {
        match self {
            Query::F32(q) => {
                let stored = &stored[..4 * q.len()];
                let mut acc = [0f32; 8];
                let mut qs = q.chunks_exact(8);
                let mut ss = stored.chunks_exact(32);
                for (qc, sc) in (&mut qs).zip(&mut ss) {
                    for i in 0..8 {
                        let s =
                            f32::from_le_bytes(sc[4 * i..4 * i + 4].try_into().expect("4 bytes"));
                        acc[i] += qc[i] * s;
                    }
                }
                let mut sum: f32 = acc.iter().sum();
                for (x, b) in qs.remainder().iter().zip(ss.remainder().chunks_exact(4)) {
                    sum += x * f32::from_le_bytes(b.try_into().expect("4 bytes"));
                }
                sum
            }
            Query::Int8(q) => {
                let scale = f32::from_le_bytes(stored[..4].try_into().expect("4 bytes"));
                dot_f32_i8(q, &stored[4..4 + q.len()]) * scale
            }
            Query::Binary(q) => {
                let words = q.bits.len();
                let h: u32 = stored[..8 * words]
                    .chunks_exact(8)
                    .zip(&q.bits)
                    .map(|(b, w)| {
                        (u64::from_le_bytes(b.try_into().expect("8 bytes")) ^ w).count_ones()
                    })
                    .sum();
                binary_similarity(h, q.dim)
            }
        }
    }
}

/// Dot product of two `f32` vectors (the cosine, for unit vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let mut ac = a.chunks_exact(8);
    let mut bc = b.chunks_exact(8);
    for (x, y) in (&mut ac).zip(&mut bc) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// A vector quantized to `i8` with one scale: `v[i] ≈ scale * values[i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Int8Vector {
    /// `max |v| / 127` (0 for the zero vector).
    pub scale: f32,
    /// The quantized values, in `-127..=127`.
    pub values: Vec<i8>,
}

impl Int8Vector {
    /// Quantizes `v` symmetrically: the largest magnitude maps to ±127.
    pub fn from_f32(v: &[f32]) -> Self {
        let mut bytes = vec![0u8; v.len()];
        let scale = quantize_int8_into(v, &mut bytes);
        Int8Vector {
            scale,
            values: bytes.into_iter().map(|b| b as i8).collect(),
        }
    }

    /// Approximate similarity to `other`: `scale·scale'·Σ q·q'`.
    pub fn similarity(&self, other: &Int8Vector) -> f32 {
        dot_i8(&self.values, &other.values) as f32 * self.scale * other.scale
    }
}

/// Quantizes `v` into `out` (i8 values as bytes) and returns the scale.
fn quantize_int8_into(v: &[f32], out: &mut [u8]) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        out.fill(0);
        return 0.0;
    }
    let scale = max / 127.0;
    let inv = 127.0 / max;
    for (o, x) in out.iter_mut().zip(v) {
        *o = (x * inv).round().clamp(-127.0, 127.0) as i8 as u8;
    }
    scale
}

/// Integer dot product of two `i8` vectors.
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| x as i32 * y as i32).sum()
}

/// `Σ a·b` with `b` holding `i8` values as bytes, 8 lanes like [`dot`].
fn dot_f32_i8(a: &[f32], b: &[u8]) -> f32 {
    let mut acc = [0f32; 8];
    let mut ac = a.chunks_exact(8);
    let mut bc = b.chunks_exact(8);
    for (x, y) in (&mut ac).zip(&mut bc) {
        for i in 0..8 {
            acc[i] += x[i] * (y[i] as i8) as f32;
        }
    }
    let tail: f32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, &y)| x * (y as i8) as f32)
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// A vector reduced to its sign bits (`v[i] > 0`), packed into little-endian `u64`s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryVector {
    /// Bit `i % 64` of word `i / 64` is set when `v[i] > 0`.
    pub bits: Vec<u64>,
    /// Number of dimensions.
    pub dim: usize,
}

impl BinaryVector {
    /// The sign bits of `v`.
    pub fn from_f32(v: &[f32]) -> Self {
        BinaryVector {
            bits: (0..v.len().div_ceil(64)).map(|w| sign_word(v, w)).collect(),
            dim: v.len(),
        }
    }

    /// Number of differing bits.
    pub fn hamming(&self, other: &BinaryVector) -> u32 {
        hamming(&self.bits, &other.bits)
    }

    /// `1 − 2·hamming/dim`, in `[-1, 1]`: 1 when all signs agree.
    pub fn similarity(&self, other: &BinaryVector) -> f32 {
        binary_similarity(self.hamming(other), self.dim)
    }
}

fn sign_word(v: &[f32], w: usize) -> u64 {
    v[w * 64..v.len().min(w * 64 + 64)]
        .iter()
        .enumerate()
        .fold(0u64, |acc, (i, &x)| acc | (((x > 0.0) as u64) << i))
}

/// Hamming distance between two bit vectors (popcount of the XOR).
pub fn hamming(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

fn binary_similarity(hamming: u32, dim: usize) -> f32 {
    if dim == 0 {
        return 0.0;
    }
    1.0 - 2.0 * hamming as f32 / dim as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in VectorEncoding::ALL {
            assert_eq!(VectorEncoding::from_name(e.name()), Some(e));
        }
        assert_eq!(VectorEncoding::from_name("f16"), None);
    }

    #[test]
    fn int8_quantization_is_symmetric_and_bounded() {
        let v = [0.5, -1.0, 0.25, 0.0];
        let q = Int8Vector::from_f32(&v);
        assert_eq!(q.values, vec![64, -127, 32, 0]);
        assert!((q.scale - 1.0 / 127.0).abs() < 1e-9);
        assert_eq!(Int8Vector::from_f32(&[0.0; 3]).scale, 0.0);
    }

    #[test]
    fn binary_and_hamming() {
        let a = BinaryVector::from_f32(&[1.0, -1.0, 0.0, 2.0]);
        assert_eq!(a.bits, vec![0b1001]);
        let b = BinaryVector::from_f32(&[1.0, 1.0, 1.0, 2.0]);
        assert_eq!(a.hamming(&b), 2);
        assert_eq!(a.similarity(&b), 0.0);
        let long: Vec<f32> = (0..130)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        let l = BinaryVector::from_f32(&long);
        assert_eq!(l.bits.len(), 3);
        assert_eq!(l.hamming(&l), 0);
        assert_eq!(l.similarity(&l), 1.0);
    }

    #[test]
    fn stored_scores_match_typed_kernels() {
        let a: Vec<f32> = (0..37)
            .map(|i| ((i * 7 % 11) as f32 - 5.0) / 10.0)
            .collect();
        let b: Vec<f32> = (0..37)
            .map(|i| ((i * 5 % 13) as f32 - 6.0) / 10.0)
            .collect();
        let mut s = Vec::new();
        VectorEncoding::F32.encode(&b, &mut s);
        assert!((VectorEncoding::F32.query(&a).score(&s) - dot(&a, &b)).abs() < 1e-5);
        s.clear();
        VectorEncoding::Int8.encode(&b, &mut s);
        let stored = VectorEncoding::Int8.query(&a).score(&s);
        let qb = Int8Vector::from_f32(&b);
        let asym: f32 = a
            .iter()
            .zip(&qb.values)
            .map(|(x, &v)| x * v as f32)
            .sum::<f32>()
            * qb.scale;
        assert!((stored - asym).abs() < 1e-5, "{stored} vs {asym}");
        assert!(
            (stored - dot(&a, &b)).abs() < 0.01,
            "{stored} vs {}",
            dot(&a, &b)
        );
        let sym = Int8Vector::from_f32(&a).similarity(&qb);
        assert!((sym - dot(&a, &b)).abs() < 0.02, "{sym} vs {}", dot(&a, &b));
        s.clear();
        VectorEncoding::Binary.encode(&b, &mut s);
        let typed = BinaryVector::from_f32(&a).similarity(&BinaryVector::from_f32(&b));
        assert_eq!(VectorEncoding::Binary.query(&a).score(&s), typed);
    }
}
