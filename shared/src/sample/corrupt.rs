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
    /// Bytes after the last block's records, inside the block (its size and its compressed
    /// data made to match): the framing is sound, the records end early.
    TrailingBytes,
}

impl Corruption {
    /// Every corruption.
    pub const ALL: [Corruption; 7] = [
        Corruption::Empty,
        Corruption::Truncated,
        Corruption::BadMagic,
        Corruption::BadSync,
        Corruption::UnknownCodec,
        Corruption::CorruptBlock,
        Corruption::TrailingBytes,
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
            Corruption::TrailingBytes => "trailing-bytes",
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
        Corruption::TrailingBytes => b = trailing_bytes(good),
    }
    b
}

/// `good` with three bytes appended to its last block's records.
fn trailing_bytes(good: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    fn long(b: &[u8], mut pos: usize) -> (i64, usize) {
        let (mut n, mut shift) = (0u64, 0);
        loop {
            let x = b[pos];
            pos += 1;
            n |= u64::from(x & 0x7f) << shift;
            shift += 7;
            if x & 0x80 == 0 {
                return (((n >> 1) as i64) ^ -((n & 1) as i64), pos);
            }
        }
    }
    let info = crate::convert::avro::inspect(good).expect("a good container file");
    let (mut pos, mut last) = (info.header_len, info.header_len);
    while pos < good.len() {
        last = pos;
        let (_, p) = long(good, pos);
        let (size, p) = long(good, p);
        pos = p + size as usize + 16;
    }
    let (count, p) = long(good, last);
    let (size, p) = long(good, p);
    let data = &good[p..p + size as usize];
    let mut plain = match info.codec.as_str() {
        "null" => data.to_vec(),
        "snappy" => snap::raw::Decoder::new().decompress_vec(&data[..data.len() - 4]).expect("snappy"),
        "deflate" => {
            let mut out = vec![];
            flate2::read::DeflateDecoder::new(data).read_to_end(&mut out).expect("deflate");
            out
        }
        "zstandard" => zstd::decode_all(data).expect("zstandard"),
        other => panic!("codec {other}"),
    };
    plain.extend_from_slice(&[2, 2, 2]);
    let packed = match info.codec.as_str() {
        "null" => plain,
        "snappy" => {
            let mut out = snap::raw::Encoder::new().compress_vec(&plain).expect("snappy");
            out.extend_from_slice(&crc32fast::hash(&plain).to_be_bytes());
            out
        }
        "deflate" => {
            let mut e = flate2::write::DeflateEncoder::new(vec![], flate2::Compression::default());
            e.write_all(&plain).expect("deflate");
            e.finish().expect("deflate")
        }
        _ => zstd::encode_all(&plain[..], 0).expect("zstandard"),
    };
    let mut out = good[..last].to_vec();
    crate::convert::avro::zigzag(count, &mut out);
    crate::convert::avro::zigzag(packed.len() as i64, &mut out);
    out.extend_from_slice(&packed);
    out.extend_from_slice(&info.sync);
    out
}
