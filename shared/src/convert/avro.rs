//! Avro object container files → Arrow record batches.
//!
//! Owns reading one source object: the container framing is checked first ([`inspect`]: magic,
//! header, codec, every block's length and sync marker, the file ending on a block boundary), so
//! a truncated or spliced file is refused instead of silently losing its tail; then the blocks
//! are decompressed here under a size limit and decoded with `arrow-avro` ([`decode`]), which
//! the benchmark measured as the faster of the two Avro decoders (see docs/BENCHMARKS.md).
//! Every failure is a [`Rejection`] naming what is wrong.

use arrow_array::RecordBatch;

use crate::{Rejection, RejectionKind};

const MAGIC: &[u8; 4] = b"Obj\x01";
/// Codecs the decoder is built with.
pub const SUPPORTED_CODECS: &[&str] = &["null", "deflate", "snappy", "zstandard"];

/// What the container framing says about a file, read without decoding any record.
#[derive(Debug, Clone)]
pub struct ContainerInfo {
    /// Length of the header (magic, metadata, sync marker) in bytes.
    pub header_len: usize,
    /// The header's sync marker.
    pub sync: [u8; 16],
    /// The writer schema, as JSON text.
    pub schema_json: String,
    /// The block codec.
    pub codec: String,
    /// Number of data blocks.
    pub blocks: u64,
    /// Number of records the blocks declare.
    pub records: u64,
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn long(&mut self, what: &str) -> Result<i64, Rejection> {
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(truncated(what, self.pos));
            };
            self.pos += 1;
            if shift >= 64 {
                return Err(Rejection::new(
                    RejectionKind::Corrupt,
                    format!("bad varint in {what} at byte {}", self.pos),
                ));
            }
            value |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
    }

    fn bytes(&mut self, n: i64, what: &str) -> Result<&'a [u8], Rejection> {
        let n = usize::try_from(n).map_err(|_| {
            Rejection::new(RejectionKind::Corrupt, format!("negative length in {what} at byte {}", self.pos))
        })?;
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len()).ok_or_else(|| truncated(what, self.pos))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }
}

fn truncated(what: &str, pos: usize) -> Rejection {
    Rejection::new(RejectionKind::Corrupt, format!("truncated: the file ends inside {what} (byte {pos})"))
}

/// Checks the container framing of an Avro object container file without decoding records.
pub fn inspect(bytes: &[u8]) -> Result<ContainerInfo, Rejection> {
    if bytes.is_empty() {
        return Err(Rejection::new(RejectionKind::Empty, "zero-byte object"));
    }
    if bytes.len() < 4 || &bytes[..4] != MAGIC {
        return Err(Rejection::new(RejectionKind::Corrupt, "not an Avro object container file (bad magic)"));
    }
    let mut c = Cursor { buf: bytes, pos: 4 };
    let (mut schema_json, mut codec) = (None, None);
    loop {
        let mut count = c.long("the header")?;
        if count == 0 {
            break;
        }
        if count < 0 {
            count = -count;
            c.long("the header")?; // byte size of the block of entries
        }
        for _ in 0..count {
            let klen = c.long("the header")?;
            let key = c.bytes(klen, "the header")?;
            let vlen = c.long("the header")?;
            let value = c.bytes(vlen, "the header")?;
            match key {
                b"avro.schema" => schema_json = Some(value),
                b"avro.codec" => codec = Some(value),
                _ => {}
            }
        }
    }
    let sync: [u8; 16] = c.bytes(16, "the header's sync marker")?.try_into().expect("16 bytes");
    let header_len = c.pos;
    let schema_json = std::str::from_utf8(
        schema_json.ok_or_else(|| Rejection::new(RejectionKind::Corrupt, "the header has no avro.schema"))?,
    )
    .map_err(|_| Rejection::new(RejectionKind::Corrupt, "the header's avro.schema is not UTF-8"))?
    .to_string();
    let codec = String::from_utf8_lossy(codec.unwrap_or(b"null")).into_owned();
    if !SUPPORTED_CODECS.contains(&codec.as_str()) {
        return Err(Rejection::new(
            RejectionKind::UnsupportedCodec,
            format!("codec `{codec}` is not supported (supported: {})", SUPPORTED_CODECS.join(", ")),
        ));
    }
    let (mut blocks, mut records) = (0u64, 0u64);
    while c.pos < bytes.len() {
        let block_start = c.pos;
        let n = c.long("a block header")?;
        let size = c.long("a block header")?;
        if n < 0 || size < 0 {
            return Err(Rejection::new(
                RejectionKind::Corrupt,
                format!("negative count or size in the block at byte {block_start}"),
            ));
        }
        c.bytes(size, "a block")?;
        if c.bytes(16, "a block's sync marker")? != sync {
            return Err(Rejection::new(
                RejectionKind::Corrupt,
                format!("bad sync marker after the block at byte {block_start} (block {blocks})"),
            ));
        }
        blocks += 1;
        records += n as u64;
    }
    Ok(ContainerInfo { header_len, sync, schema_json, codec, blocks, records })
}

/// Rows per decoded batch.
pub const BATCH_ROWS: usize = 8192;

/// Limits on what one source object may decode to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// The widest a decoded row can be without reading its bytes from the file (see
    /// [`fill_bytes_per_row`]): rows are decoded in batches small enough that a batch of such
    /// rows stays within a quarter of `max_block_bytes` before its size is checked.
    pub fill_bytes_per_row: u64,
    /// The whole object's decoded data (decompressed blocks, then Arrow memory).
    pub max_decoded_bytes: u64,
    /// One decompressed block: a block that inflates past it is refused while inflating, so a
    /// decompression bomb costs at most this much memory, whatever it would inflate to.
    pub max_block_bytes: u64,
}

impl DecodeLimits {
    /// No limits (benchmarks of trusted input only).
    pub const NONE: DecodeLimits =
        DecodeLimits { fill_bytes_per_row: 0, max_decoded_bytes: u64::MAX, max_block_bytes: u64::MAX };

    /// Rows per decoded batch under these limits.
    fn batch_rows(&self) -> usize {
        let per_batch = self.max_block_bytes / 4 / self.fill_bytes_per_row.max(1);
        usize::try_from(per_batch).unwrap_or(BATCH_ROWS).clamp(1, BATCH_ROWS)
    }
}

/// The bytes the decoder may write for one row of `schema` without reading them from the file:
/// a null `fixed(n)` is filled with `n` zero bytes, a null struct with every child's width.
/// (Variable-length values and list elements take bytes of the file each, which the block limit
/// bounds.)
pub fn fill_bytes_per_row(schema: &iceberg::spec::Schema) -> u64 {
    fn width(t: &iceberg::spec::Type) -> u64 {
        use iceberg::spec::{PrimitiveType as P, Type};
        match t {
            Type::Primitive(P::Fixed(n)) => *n,
            Type::Primitive(P::Decimal { .. } | P::Uuid) => 16,
            Type::Primitive(_) => 8,
            Type::Struct(s) => s.fields().iter().map(|f| width(&f.field_type)).sum(),
            Type::List(_) | Type::Map(_) => 8,
        }
    }
    schema.as_struct().fields().iter().map(|f| width(&f.field_type)).sum()
}

/// Decodes every record of a container file whose framing [`inspect`] accepted.
///
/// Blocks are decompressed here, one at a time, and handed to arrow-avro as an uncompressed
/// container: inflation streams into a buffer and stops at `max_block_bytes` (or at what is left
/// of `max_decoded_bytes`), so a small file that inflates enormously is refused after
/// allocating at most that much; snappy's CRC is checked with a fast implementation; and hostile
/// blocks never reach the decoder's own decompression. The decoded Arrow memory is bounded by
/// `max_decoded_bytes` too. Uncompressed blocks are handed over without a copy.
pub fn decode(bytes: &[u8], info: &ContainerInfo, limits: DecodeLimits) -> Result<Vec<RecordBatch>, Rejection> {
    let max_decoded_bytes = limits.max_decoded_bytes;
    let failure = std::rc::Rc::new(std::cell::RefCell::new(None));
    let stream = Inflate {
        src: bytes,
        pos: info.header_len,
        codec: info.codec.clone(),
        sync: info.sync,
        head: rewrite_header(info)?,
        body: Body::Borrowed(&[]),
        with_sync: false,
        seg: Segment::Head,
        off: 0,
        budget: max_decoded_bytes,
        block_limit: limits.max_block_bytes,
        failure: failure.clone(),
    };
    let reader =
        arrow_avro::reader::ReaderBuilder::new().with_batch_size(limits.batch_rows()).build(stream).map_err(|e| {
            let parked = failure.borrow_mut().take();
            parked.unwrap_or_else(|| {
                Rejection::new(RejectionKind::Schema, format!("the decoder cannot use the writer schema: {e}"))
            })
        })?;
    let (mut out, mut rows, mut mem) = (Vec::new(), 0u64, 0u64);
    for batch in reader {
        let batch = match batch {
            Ok(b) => b,
            Err(e) => {
                return Err(failure
                    .borrow_mut()
                    .take()
                    .unwrap_or_else(|| Rejection::new(RejectionKind::Corrupt, format!("record {rows}: {e}"))));
            }
        };
        rows += batch.num_rows() as u64;
        mem += batch.get_array_memory_size() as u64;
        if mem > max_decoded_bytes {
            return Err(too_large(max_decoded_bytes, rows));
        }
        out.push(batch);
    }
    if let Some(r) = failure.borrow_mut().take() {
        return Err(r);
    }
    if rows != info.records {
        return Err(Rejection::new(
            RejectionKind::Corrupt,
            format!("decoded {rows} records but the blocks declare {}", info.records),
        ));
    }
    Ok(out)
}

fn too_large(limit: u64, rows: u64) -> Rejection {
    Rejection::new(
        RejectionKind::TooLarge,
        format!("decoded data passes the limit of {limit} bytes (after {rows} records)"),
    )
}

fn block_too_large(limit: u64, block_at: usize) -> Rejection {
    Rejection::new(
        RejectionKind::TooLarge,
        format!("the block at byte {block_at} inflates past the limit of {limit} bytes per block (max_block_bytes)"),
    )
}

/// A block's data: borrowed from the file when it is stored uncompressed.
enum Body<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Body<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Body::Borrowed(b) => b,
            Body::Owned(v) => v,
        }
    }
}

/// Which part of the re-framed stream is being served.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Segment {
    Head,
    Body,
    Sync,
}

/// A `BufRead` over a container file: a rewritten header (codec `null`), then each block
/// decompressed and re-framed, served as three segments (count and size, data, sync marker) so
/// that the data is never copied once more. Failures are parked in `failure` with their reason.
struct Inflate<'a> {
    src: &'a [u8],
    pos: usize,
    codec: String,
    sync: [u8; 16],
    head: Vec<u8>,
    body: Body<'a>,
    with_sync: bool,
    seg: Segment,
    off: usize,
    budget: u64,
    block_limit: u64,
    failure: std::rc::Rc<std::cell::RefCell<Option<Rejection>>>,
}

impl<'a> Inflate<'a> {
    fn next_block(&mut self) -> Result<(), Rejection> {
        let mut c = Cursor { buf: self.src, pos: self.pos };
        let count = c.long("a block header")?;
        let size = c.long("a block header")?;
        let data: &'a [u8] = c.bytes(size, "a block")?;
        c.bytes(16, "a block's sync marker")?;
        let block_at = self.pos;
        self.pos = c.pos;
        let (budget, block_limit) = (self.budget, self.block_limit);
        let limit = budget.min(block_limit);
        let refuse = |_: ()| if limit == block_limit { block_too_large(limit, block_at) } else { too_large(budget, 0) };
        let corrupt =
            |what: String| Rejection::new(RejectionKind::Corrupt, format!("block at byte {block_at}: {what}"));
        self.body = Body::Owned(Vec::new()); // the previous block's memory goes before the next is made
        let body = match self.codec.as_str() {
            "null" if data.len() as u64 > limit => return Err(refuse(())),
            "null" => Body::Borrowed(data),
            "snappy" => {
                let (body, crc) = data
                    .split_at_checked(data.len().saturating_sub(4))
                    .filter(|(_, c)| c.len() == 4)
                    .ok_or_else(|| corrupt("a snappy block needs a 4-byte CRC".into()))?;
                let n = snap::raw::decompress_len(body).map_err(|e| corrupt(format!("snappy: {e}")))?;
                if n as u64 > limit {
                    return Err(refuse(()));
                }
                let plain =
                    snap::raw::Decoder::new().decompress_vec(body).map_err(|e| corrupt(format!("snappy: {e}")))?;
                let want = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
                if crc32fast::hash(&plain) != want {
                    return Err(corrupt("snappy CRC mismatch".into()));
                }
                Body::Owned(plain)
            }
            "deflate" => Body::Owned(
                read_limited(flate2::read::DeflateDecoder::new(data), limit)
                    .map_err(|e| e.map_or_else(refuse, |e| corrupt(format!("deflate: {e}"))))?,
            ),
            "zstandard" => {
                let d =
                    zstd::stream::read::Decoder::with_buffer(data).map_err(|e| corrupt(format!("zstandard: {e}")))?;
                Body::Owned(
                    read_limited(d, limit)
                        .map_err(|e| e.map_or_else(refuse, |e| corrupt(format!("zstandard: {e}"))))?,
                )
            }
            other => return Err(Rejection::new(RejectionKind::UnsupportedCodec, format!("codec `{other}`"))),
        };
        let len = body.bytes().len();
        self.budget -= len as u64;
        self.head.clear();
        zigzag(count, &mut self.head);
        zigzag(len as i64, &mut self.head);
        self.body = body;
        self.with_sync = true;
        (self.seg, self.off) = (Segment::Head, 0);
        Ok(())
    }

    /// The unread rest of the current segment, moving on to the next segment (and block) when
    /// one is used up; empty at the end of the file.
    fn current(&mut self) -> Result<(Segment, usize), Rejection> {
        loop {
            let len = match self.seg {
                Segment::Head => self.head.len(),
                Segment::Body => self.body.bytes().len(),
                Segment::Sync if self.with_sync => self.sync.len(),
                Segment::Sync => 0,
            };
            if self.off < len {
                return Ok((self.seg, len));
            }
            match self.seg {
                Segment::Head => (self.seg, self.off) = (Segment::Body, 0),
                Segment::Body => (self.seg, self.off) = (Segment::Sync, 0),
                Segment::Sync if self.pos < self.src.len() => self.next_block()?,
                Segment::Sync => return Ok((Segment::Sync, self.off)),
            }
        }
    }
}

/// Inflates at most `limit` bytes, growing the buffer as the data arrives (never to the size a
/// header claims); `Err(Ok(()))` if there is more (a decompression bomb).
fn read_limited(r: impl std::io::Read, limit: u64) -> Result<Vec<u8>, Result<std::io::Error, ()>> {
    use std::io::Read;
    let mut out = Vec::new();
    let n = r.take(limit.saturating_add(1)).read_to_end(&mut out).map_err(Ok)?;
    if n as u64 > limit {
        return Err(Err(()));
    }
    Ok(out)
}

impl std::io::Read for Inflate<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let avail = std::io::BufRead::fill_buf(self)?;
            let n = avail.len().min(out.len());
            out[..n].copy_from_slice(&avail[..n]);
            n
        };
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl std::io::BufRead for Inflate<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        let (seg, len) = match self.current() {
            Ok(at) => at,
            Err(r) => {
                let msg = r.to_string();
                *self.failure.borrow_mut() = Some(r);
                return Err(std::io::Error::other(msg));
            }
        };
        let off = self.off.min(len);
        Ok(match seg {
            Segment::Head => &self.head[off..len],
            Segment::Body => &self.body.bytes()[off..len],
            Segment::Sync => &self.sync[off..len],
        })
    }

    fn consume(&mut self, n: usize) {
        self.off += n;
    }
}

pub(crate) fn zigzag(v: i64, out: &mut Vec<u8>) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A container header with the writer schema rewritten by [`simple_names`] and codec `null`
/// (the blocks that follow it are already decompressed).
fn rewrite_header(info: &ContainerInfo) -> Result<Vec<u8>, Rejection> {
    let schema = simple_names(&info.schema_json)?;
    let mut h = Vec::with_capacity(schema.len() + 64);
    h.extend_from_slice(MAGIC);
    zigzag(2, &mut h);
    for (k, v) in [("avro.schema", schema.as_bytes()), ("avro.codec", &b"null"[..])] {
        zigzag(k.len() as i64, &mut h);
        h.extend_from_slice(k.as_bytes());
        zigzag(v.len() as i64, &mut h);
        h.extend_from_slice(v);
    }
    zigzag(0, &mut h);
    h.extend_from_slice(&info.sync);
    Ok(h)
}

const PRIMITIVES: [&str; 8] = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"];

/// Rewrites a schema so that every named type has a plain, unique name and no namespace, and
/// every reference uses that name. Decoding is positional, so this changes nothing about the
/// data; it sidesteps arrow-avro's resolution of namespaced references (a type named
/// `a.b.C`, or referenced as `a.b.C` from another namespace, fails to resolve in 58.x).
pub fn simple_names(schema_json: &str) -> Result<String, Rejection> {
    let mut v: serde_json::Value = serde_json::from_str(schema_json)
        .map_err(|e| Rejection::new(RejectionKind::Schema, format!("the writer schema is not JSON: {e}")))?;
    let mut names = std::collections::HashMap::new();
    let mut used = std::collections::HashSet::new();
    rename(&mut v, "", &mut names, &mut used)?;
    Ok(v.to_string())
}

fn fullname(name: &str, ns: &str) -> String {
    if name.contains('.') || ns.is_empty() { name.to_string() } else { format!("{ns}.{name}") }
}

fn rename(
    v: &mut serde_json::Value,
    ns: &str,
    names: &mut std::collections::HashMap<String, String>,
    used: &mut std::collections::HashSet<String>,
) -> Result<(), Rejection> {
    use serde_json::Value;
    match v {
        Value::String(r) if !PRIMITIVES.contains(&r.as_str()) => {
            let full = fullname(r, ns);
            // A reference: by full name, else as written (a name in the null namespace).
            let simple = names.get(&full).or_else(|| names.get(r.as_str())).ok_or_else(|| {
                Rejection::new(
                    RejectionKind::Schema,
                    format!("the writer schema refers to `{r}`, which it does not define (or defines recursively)"),
                )
            })?;
            *r = simple.clone();
        }
        Value::Array(branches) => {
            for b in branches {
                rename(b, ns, names, used)?;
            }
        }
        Value::Object(o) => {
            let ty = o.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
            let mut inner_ns = ns.to_string();
            if matches!(ty.as_str(), "record" | "error" | "enum" | "fixed") {
                let name = o.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                let own_ns = o.get("namespace").and_then(Value::as_str).unwrap_or(ns).to_string();
                let full = fullname(&name, &own_ns);
                inner_ns = full.rsplit_once('.').map(|(n, _)| n.to_string()).unwrap_or_default();
                let base = full.rsplit('.').next().unwrap_or("T").to_string();
                let mut simple = base.clone();
                let mut i = 1;
                while !used.insert(simple.clone()) {
                    i += 1;
                    simple = format!("{base}_{i}");
                }
                o.insert("name".into(), Value::String(simple.clone()));
                o.remove("namespace");
                o.remove("aliases");
                if let (true, Some(Value::Array(fields))) = (ty == "record" || ty == "error", o.get_mut("fields")) {
                    for t in fields.iter_mut().filter_map(|f| f.get_mut("type")) {
                        rename(t, &inner_ns, names, used)?;
                    }
                }
                // Registered after the fields: a record cannot contain itself (Iceberg has no
                // recursive types), so a self-reference fails above with a clear reason.
                names.insert(full, simple);
            } else {
                for key in ["items", "values"] {
                    if let Some(t) = o.get_mut(key) {
                        rename(t, &inner_ns, names, used)?;
                    }
                }
                // `{"type": <named type or nested definition>, ...}` wraps another type.
                let plain = |t: &str| PRIMITIVES.contains(&t) || t == "array" || t == "map";
                if let Some(t) = o.get_mut("type").filter(|t| !t.as_str().is_some_and(plain)) {
                    rename(t, &inner_ns, names, used)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use apache_avro::Codec;

    use super::*;
    use crate::sample::{Corruption, EventsSpec, corrupt, events_file};

    /// Bytes after a block's records were decoded forever (arrow-avro spun on them: patched in
    /// vendor/arrow-avro); now the object is refused as corrupt, whatever its codec. Run on a
    /// thread with a deadline, so that the old behaviour fails the test instead of hanging it.
    #[test]
    fn bytes_past_a_blocks_records_are_refused_not_decoded_forever() {
        for codec in
            [Codec::Null, Codec::Snappy, Codec::Deflate(Default::default()), Codec::Zstandard(Default::default())]
        {
            let spec = EventsSpec { events_per_file: 50, codec, ..Default::default() };
            let bad = corrupt(&events_file(&spec, 1, 0).unwrap().0, Corruption::TrailingBytes);
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let info = inspect(&bad).expect("the framing is sound");
                let _ = tx.send(decode(&bad, &info, DecodeLimits::NONE).map(|_| ()));
            });
            let refused = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("decoding ends").unwrap_err();
            assert_eq!(refused.kind, RejectionKind::Corrupt, "{codec:?}: {refused}");
            assert!(refused.reason.contains("past the block's declared records"), "{codec:?}: {refused}");
        }
    }

    /// Bytes readers disagree on are refused, never read one way: a boolean byte other than 0
    /// or 1 (Java reads false, fastavro true), and a union branch index past the union's
    /// branches (read as a value, or as a null whose bytes then shifted the next field).
    #[test]
    fn a_boolean_byte_past_one_and_a_union_branch_past_the_union_are_refused() {
        let schema = apache_avro::Schema::parse_str(
            r#"{"type": "record", "name": "r", "fields": [
                {"name": "b", "type": "boolean"}, {"name": "u", "type": ["null", "long"]},
                {"name": "v", "type": ["long", "null"]}]}"#,
        )
        .unwrap();
        let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), Codec::Null);
        let mut r = apache_avro::types::Record::new(&schema).unwrap();
        r.put("b", true);
        r.put("u", apache_avro::types::Value::Union(1, Box::new(apache_avro::types::Value::Long(5))));
        r.put("v", apache_avro::types::Value::Union(0, Box::new(apache_avro::types::Value::Long(6))));
        w.append(r).unwrap();
        let good = w.into_inner().unwrap();
        // The one record: boolean 1, branch 1 (zigzag 2) and 5 (zigzag 10), branch 0 and 6 (12).
        let at = good.len() - 16 - 5;
        assert_eq!(good[at..at + 5], [1, 2, 10, 0, 12]);
        let read = |bytes: &[u8]| decode(bytes, &inspect(bytes).unwrap(), DecodeLimits::NONE).map(|b| b[0].num_rows());
        assert_eq!(read(&good).unwrap(), 1);
        for (offset, byte, says) in
            [(0, 2, "boolean byte 2"), (1, 4, "union branch 2"), (3, 4, "union branch 2"), (1, 1, "union branch -1")]
        {
            let mut bad = good.clone();
            bad[at + offset] = byte;
            let e = read(&bad).unwrap_err();
            assert!(e.kind == RejectionKind::Corrupt && e.reason.contains(says), "byte {byte} at {offset}: {e}");
        }
    }
}
