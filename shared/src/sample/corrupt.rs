//! Broken inputs, made from a good file, for the quarantine tests.

/// Ways to break an Avro object container file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corruption {
    /// Zero bytes.
    Empty,
    /// The file cut off in the middle of its last block.
    Truncated,
    /// The first bytes are not `Obj\x01`.
    BadMagic,
    /// One block's trailing sync marker altered.
    BadSync,
    /// The header names a codec nobody supports.
    UnknownCodec,
    /// Garbage inside the first compressed block.
    CorruptBlock,
}

impl Corruption {
    /// Every corruption.
    pub const ALL: [Corruption; 6] = [
        Corruption::Empty,
        Corruption::Truncated,
        Corruption::BadMagic,
        Corruption::BadSync,
        Corruption::UnknownCodec,
        Corruption::CorruptBlock,
    ];

    /// A short name (used in file names).
    pub fn name(self) -> &'static str {
        match self {
            Corruption::Empty => "empty",
            Corruption::Truncated => "truncated",
            Corruption::BadMagic => "bad-magic",
            Corruption::BadSync => "bad-sync",
            Corruption::UnknownCodec => "unknown-codec",
            Corruption::CorruptBlock => "corrupt-block",
        }
    }
}

/// Breaks a good container file (which must have at least one block) in the given way.
pub fn corrupt(good: &[u8], how: Corruption) -> Vec<u8> {
    let mut b = good.to_vec();
    match how {
        Corruption::Empty => b.clear(),
        Corruption::Truncated => b.truncate(b.len() - (b.len() / 10).max(20)),
        Corruption::BadMagic => b[..4].copy_from_slice(b"PAR1"),
        Corruption::BadSync => {
            let n = b.len();
            b[n - 1] ^= 0xff;
        }
        Corruption::UnknownCodec => {
            // Same length as "snappy"/"deflate" is not needed: replace the value in place.
            for codec in [&b"snappy"[..], b"deflate", b"null"] {
                if let Some(pos) = b.windows(codec.len()).position(|w| w == codec) {
                    let fake = b"lzma99"[..].iter().cycle().take(codec.len()).copied().collect::<Vec<u8>>();
                    b[pos..pos + codec.len()].copy_from_slice(&fake);
                    break;
                }
            }
        }
        Corruption::CorruptBlock => {
            // Overwrite the middle of the file (inside the data) with garbage.
            let mid = b.len() / 2;
            let end = mid + 64.min(b.len() - mid - 17);
            for (i, x) in b[mid..end].iter_mut().enumerate() {
                *x = (i as u8).wrapping_mul(37) ^ 0xA5;
            }
        }
    }
    b
}
