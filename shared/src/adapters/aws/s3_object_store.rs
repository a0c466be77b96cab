//! `ObjectStore` on S3: `s3://bucket/key` URIs. `put_if_absent` is a conditional PUT
//! (`If-None-Match: *`); the version of an object is its ETag without quotes (as S3
//! notifications spell it), so identities agree whichever way an object was seen; a source is
//! read pinned to its `versionId` and `If-Match` its ETag (`get_version`).

use async_trait::async_trait;
use aws_sdk_s3::primitives::ByteStream;
use bytes::Bytes;

use super::error;
use crate::PortError;
use crate::ports::object_store::check_range;
use crate::ports::{ObjectMeta, ObjectStore};

/// S3 through the AWS SDK.
#[derive(Debug, Clone)]
pub struct S3ObjectStore {
    client: aws_sdk_s3::Client,
}

impl S3ObjectStore {
    /// A store over the buckets `client` can reach.
    pub fn new(client: aws_sdk_s3::Client) -> Self {
        S3ObjectStore { client }
    }
}

/// `s3://bucket/key` → (bucket, key); Hadoop's `s3a://` and `s3n://` name the same objects.
pub fn split_s3_uri(uri: &str) -> Result<(&str, &str), PortError> {
    let rest = uri
        .strip_prefix("s3://")
        .or_else(|| uri.strip_prefix("s3a://"))
        .or_else(|| uri.strip_prefix("s3n://"))
        .ok_or_else(|| PortError::Invalid(format!("`{uri}` is not an s3:// URI")))?;
    match rest.split_once('/') {
        Some((b, k)) if !b.is_empty() => Ok((b, k)),
        None if !rest.is_empty() => Ok((rest, "")),
        _ => Err(PortError::Invalid(format!("`{uri}` has no bucket"))),
    }
}

#[async_trait]
impl ObjectStore for S3ObjectStore {
    async fn get(&self, uri: &str) -> Result<Bytes, PortError> {
        let (b, k) = split_s3_uri(uri)?;
        let out = self.client.get_object().bucket(b).key(k).send().await.map_err(|e| error::map(uri, e))?;
        let body = out.body.collect().await.map_err(|e| PortError::io(format!("read {uri}"), e))?;
        Ok(body.into_bytes())
    }

    async fn get_range(&self, uri: &str, range: std::ops::Range<u64>) -> Result<Bytes, PortError> {
        if range.is_empty() {
            // No byte to ask S3 for; the object must still exist and hold the range.
            check_range(uri, &range, self.head(uri).await?.size)?;
            return Ok(Bytes::new());
        }
        let (b, k) = split_s3_uri(uri)?;
        let header = format!("bytes={}-{}", range.start, range.end - 1);
        let out =
            self.client.get_object().bucket(b).key(k).range(header).send().await.map_err(|e| error::map(uri, e))?;
        let body = out.body.collect().await.map_err(|e| PortError::io(format!("read {uri}"), e))?.into_bytes();
        // S3 answers a range that runs past the end with what there is.
        if body.len() as u64 != range.end - range.start {
            return Err(PortError::Invalid(format!("{uri}: bytes {range:?} asked, {} returned", body.len())));
        }
        Ok(body)
    }

    async fn get_version(&self, meta: &ObjectMeta) -> Result<Option<Bytes>, PortError> {
        let (b, k) = split_s3_uri(&meta.uri)?;
        // The version id pins the bytes on a versioned bucket; the ETag condition pins them on
        // any bucket (and checks that the version id and the ETag name the same bytes).
        let etag = (!meta.version.is_empty()).then(|| format!("\"{}\"", meta.version));
        let got = self
            .client
            .get_object()
            .bucket(b)
            .key(k)
            .set_version_id(meta.version_id.clone())
            .set_if_match(etag)
            .send()
            .await;
        let out = match got {
            Ok(out) => out,
            Err(e) => match error::unreadable(&e) {
                Some(why) => return Err(PortError::Invalid(format!("{}: {why}", meta.uri))),
                None => match error::map(&meta.uri, e) {
                    // 412: the current version is another; 404: deleted, or the version id is gone.
                    PortError::Conflict(_) | PortError::NotFound(_) => return Ok(None),
                    e => return Err(e),
                },
            },
        };
        let body = out.body.collect().await.map_err(|e| PortError::io(format!("read {}", meta.uri), e))?;
        Ok(Some(body.into_bytes()))
    }

    async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError> {
        let (b, k) = split_s3_uri(uri)?;
        let out = self.client.head_object().bucket(b).key(k).send().await.map_err(|e| error::map(uri, e))?;
        Ok(ObjectMeta {
            version_id: out.version_id().map(str::to_string),
            modified_ms: out.last_modified().and_then(|t| t.to_millis().ok()),
            ..ObjectMeta::new(
                uri,
                out.content_length().unwrap_or(0).max(0) as u64,
                out.e_tag().unwrap_or_default().trim_matches('"'),
            )
        })
    }

    async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        let (b, k) = split_s3_uri(uri)?;
        self.client
            .put_object()
            .bucket(b)
            .key(k)
            .body(ByteStream::from(body))
            .send()
            .await
            .map_err(|e| error::map(uri, e))?;
        Ok(())
    }

    async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        let (b, k) = split_s3_uri(uri)?;
        self.client
            .put_object()
            .bucket(b)
            .key(k)
            .if_none_match("*")
            .body(ByteStream::from(body))
            .send()
            .await
            .map_err(|e| error::map(format!("{uri} exists"), e))?;
        Ok(())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, PortError> {
        let (b, p) = split_s3_uri(prefix)?;
        let mut out = vec![];
        let mut token: Option<String> = None;
        loop {
            let page = self
                .client
                .list_objects_v2()
                .bucket(b)
                .prefix(p)
                .set_continuation_token(token.take())
                .send()
                .await
                .map_err(|e| error::map(prefix, e))?;
            for o in page.contents() {
                out.push(ObjectMeta {
                    modified_ms: o.last_modified().and_then(|t| t.to_millis().ok()),
                    ..ObjectMeta::new(
                        format!("s3://{b}/{}", o.key().unwrap_or_default()),
                        o.size().unwrap_or(0).max(0) as u64,
                        o.e_tag().unwrap_or_default().trim_matches('"'),
                    )
                });
            }
            match page.next_continuation_token() {
                Some(t) if page.is_truncated() == Some(true) => token = Some(t.to_string()),
                _ => break,
            }
        }
        out.sort_by(|a, b| a.uri.cmp(&b.uri));
        Ok(out)
    }

    async fn delete(&self, uri: &str) -> Result<(), PortError> {
        let (b, k) = split_s3_uri(uri)?;
        match self.client.delete_object().bucket(b).key(k).send().await {
            Ok(_) => Ok(()),
            Err(e) => match error::map(uri, e) {
                PortError::NotFound(_) => Ok(()),
                other => Err(other),
            },
        }
    }
}
