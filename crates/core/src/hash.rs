//! The one hash function of neardup: xxh3-64 with an explicit seed, plus seed derivation.
//!
//! Everything that is exchanged between workers or written to disk is hashed here, so a
//! signature computed on one machine equals the one computed on another.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Name and version of the hash scheme, recorded in every output file's metadata.
pub const HASH_SCHEME: &str =
    "xxh3-64 features and keys, xxh3-128 content (xxhash-rust 0.8.19), seeded; splitmix64 seeds";

/// Hashes `bytes` with xxh3-64 under `seed`.
#[inline]
pub fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

/// A checksum of a stream of bytes (xxh3-64): written after what a file holds, so that a
/// reader tells a damaged file (a flipped bit, a bad copy) from a whole one before using it.
#[derive(Clone)]
pub struct Checksum(xxhash_rust::xxh3::Xxh3);

impl Default for Checksum {
    fn default() -> Self {
        Checksum(xxhash_rust::xxh3::Xxh3::new())
    }
}

impl Checksum {
    /// Adds `bytes` to the stream.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The checksum of the bytes so far: the same as [`hash_bytes`] of them under seed 0.
    pub fn value(&self) -> u64 {
        self.0.digest()
    }
}

/// The bytes of a checksum written after what a file holds: [`Checksum::value`] of every
/// byte before it, little endian.
pub const CHECKSUM_BYTES: usize = 8;

/// A writer that keeps the checksum of what passes through it, and writes it at the end.
pub struct ChecksumWriter<W> {
    inner: W,
    sum: Checksum,
}

impl<W: std::io::Write> ChecksumWriter<W> {
    /// A writer to `inner`.
    pub fn new(inner: W) -> Self {
        ChecksumWriter { inner, sum: Checksum::default() }
    }

    /// Writes the checksum of everything written and returns the inner writer.
    ///
    /// # Errors
    /// When the checksum cannot be written.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.inner.write_all(&self.sum.value().to_le_bytes())?;
        Ok(self.inner)
    }
}

impl<W: std::io::Write> std::io::Write for ChecksumWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(bytes)?;
        self.sum.update(&bytes[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Appends the checksum of `bytes` to them.
pub fn append_checksum(bytes: &mut Vec<u8>) {
    let sum = hash_bytes(bytes, 0);
    bytes.extend_from_slice(&sum.to_le_bytes());
}

/// What comes before the checksum that ends `bytes`, when it matches them.
pub fn checked_body(bytes: &[u8]) -> Option<&[u8]> {
    let split = bytes.len().checked_sub(CHECKSUM_BYTES)?;
    let (body, written) = bytes.split_at(split);
    (written == hash_bytes(body, 0).to_le_bytes()).then_some(body)
}

/// Reads `source` to its end and checks that its last [`CHECKSUM_BYTES`] are the checksum
/// of every byte before them, holding a bounded buffer whatever its length.
///
/// # Errors
/// Why not: it cannot be read, is shorter than a checksum, or does not match it.
pub fn check_stream(mut source: impl std::io::Read) -> Result<(), String> {
    let mut sum = Checksum::default();
    let mut buffer = vec![0u8; 1 << 17];
    // The last CHECKSUM_BYTES read are held back: they may be the checksum.
    let mut held: Vec<u8> = Vec::with_capacity(buffer.len() + CHECKSUM_BYTES);
    loop {
        let n = source.read(&mut buffer).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        held.extend_from_slice(&buffer[..n]);
        let pass = held.len().saturating_sub(CHECKSUM_BYTES);
        sum.update(&held[..pass]);
        held.drain(..pass);
    }
    let Ok(written) = <[u8; CHECKSUM_BYTES]>::try_from(held.as_slice()) else {
        return Err("shorter than its checksum".into());
    };
    if u64::from_le_bytes(written) != sum.value() {
        return Err("its bytes do not match its checksum (damaged since it was written)".into());
    }
    Ok(())
}

/// Hashes a slice of `u64` values as their little-endian bytes.
#[inline]
pub fn hash_u64s(values: &[u64], seed: u64) -> u64 {
    let mut buf = [0u8; 8 * 16];
    if values.len() <= 16 {
        for (chunk, v) in buf.chunks_exact_mut(8).zip(values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        return hash_bytes(&buf[..values.len() * 8], seed);
    }
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    hash_bytes(&bytes, seed)
}

/// Hashes a slice of `u32` values as their little-endian bytes.
#[inline]
pub fn hash_u32s(values: &[u32], seed: u64) -> u64 {
    let mut buf = [0u8; 4 * 32];
    if values.len() <= 32 {
        for (chunk, v) in buf.chunks_exact_mut(4).zip(values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        return hash_bytes(&buf[..values.len() * 4], seed);
    }
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    hash_bytes(&bytes, seed)
}

/// One step of splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
/// generators", 2014): a bijective mix of a 64-bit state.
#[inline]
pub fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives the seed of sub-stream `index` of `purpose` from a job seed.
///
/// Different purposes (feature hashing, permutations, band keys, routing) never share a
/// stream, so changing how many permutations a job uses does not change its band keys' seeds.
#[inline]
pub fn derive_seed(seed: u64, purpose: SeedPurpose, index: u64) -> u64 {
    splitmix64(splitmix64(seed ^ (purpose as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)) ^ index)
}

/// What a derived seed is used for; see [`derive_seed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum SeedPurpose {
    /// Hashing features (shingles, words) to 64 bits.
    Feature = 1,
    /// MinHash permutation coefficients.
    Permutation = 2,
    /// MinHash band keys.
    Band = 3,
    /// SimHash block-table keys.
    Block = 4,
    /// Hash of a document's normalised text, for exact duplicates.
    Content = 5,
    /// Routing of records to workers.
    Route = 6,
}

/// Mixes a value for routing to a worker: uniform low bits for any input.
#[inline]
pub fn route(value: u64) -> u64 {
    splitmix64(value ^ 0x5851_F42D_4C95_7F2D)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checksummed_stream_is_checked_and_a_damaged_one_is_not() {
        use std::io::Write;
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i * 13 % 253) as u8).collect();
        let mut writer = ChecksumWriter::new(Vec::new());
        for piece in bytes.chunks(1000) {
            writer.write_all(piece).unwrap();
        }
        let mut file = writer.finish().unwrap();
        assert_eq!(check_stream(file.as_slice()), Ok(()));
        assert_eq!(checked_body(&file), Some(bytes.as_slice()));
        let mut appended = bytes.clone();
        append_checksum(&mut appended);
        assert_eq!(appended, file);
        file[150_000] ^= 1;
        assert!(check_stream(file.as_slice()).is_err());
        assert_eq!(checked_body(&file), None);
        assert!(check_stream(&file[..5]).is_err());
        assert_eq!(checked_body(&file[..5]), None);
    }

    #[test]
    fn a_checksum_over_pieces_is_the_hash_of_the_whole() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut sum = Checksum::default();
        for piece in bytes.chunks(333) {
            sum.update(piece);
        }
        assert_eq!(sum.value(), hash_bytes(&bytes, 0));
    }

    #[test]
    fn pinned_values() {
        // Changing these changes every signature: bump SIGNATURE_VERSION if they move.
        // Reference values from the Python xxhash 3.5.0 package (xxh3_64_intdigest).
        assert_eq!(hash_bytes(b"neardup", 0), 0x7a9c_10a4_1735_4e44);
        assert_eq!(hash_bytes(b"neardup", 12345), 0x9f9e_81ed_89ff_3876);
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_ne!(
            derive_seed(1, SeedPurpose::Band, 0),
            derive_seed(1, SeedPurpose::Permutation, 0)
        );
    }

    #[test]
    fn slices_hash_as_le_bytes() {
        let v = [1u64, 2, 3];
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(hash_u64s(&v, 7), hash_bytes(&bytes, 7));
        let long: Vec<u64> = (0..40).collect();
        let bytes: Vec<u8> = long.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(hash_u64s(&long, 7), hash_bytes(&bytes, 7));
        let w: Vec<u32> = (0..50).collect();
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(hash_u32s(&w, 9), hash_bytes(&bytes, 9));
        assert_eq!(hash_u32s(&w[..5], 9), hash_bytes(&bytes[..20], 9));
    }
}
