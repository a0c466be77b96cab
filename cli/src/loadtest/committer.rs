//! The committer's two measurements: the load (messages offered at a rate, batched as the SQS
//! event source mapping does) and a standing backlog (batches back to back).

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use floe::adapters::aws::{CLAIM_CHECK_THRESHOLD, SqsQueue};
use floe::adapters::local;
use floe::handlers::handle_committer;
use floe::message::FileManifest;
use floe::pipeline::commit::Committer;
use floe::ports::Queue;
use serde::Serialize;
use serde_json::json;

use super::{CommitterBenchArgs, EVENT_BYTES, RECORD_BYTES, Template, max_rss_mb, warehouse};
use crate::bench::{Cpu, cpu_now};
use crate::latency::{Clock, Profile, slow};

/// One message of the load: a copy of the template with its own sources and file paths, as
/// the committer's event holds it.
struct Queued {
    record: serde_json::Value,
    /// Bytes it takes in the committer's event.
    event_bytes: usize,
    arrived: Instant,
}

/// Makes the load's messages: copies of the template under the table at `location`, sent the
/// way a writer sends them (a claim check past SQS's limit, stored without delay: the writer's
/// time, not the committer's). Each copy's files are written too, in the writer's time, with the
/// bytes of one real data file of the table (`file`: its bytes and rows), so that the committer's
/// checks of them (a HEAD and a footer read a file) read real footers.
struct Copier {
    template: FileManifest,
    location: String,
    queue: SqsQueue,
    store: Arc<dyn floe::ports::ObjectStore>,
    file: (bytes::Bytes, u64),
}

impl Copier {
    async fn copy(&self, i: u64) -> anyhow::Result<Queued> {
        let mut m = self.template.clone();
        m.written_ms = Some(chrono::Utc::now().timestamp_millis());
        for (j, s) in m.sources.iter_mut().enumerate() {
            s.uri = format!("s3://landing/load/{i:08}/{j:05}.avro");
            s.id = format!("{}#{i:08}{j:05}", s.uri);
        }
        m.batch_id = floe::message::batch_key(&m.sources);
        let (body, rows) = &self.file;
        for (k, f) in m.files.iter_mut().enumerate() {
            // the same partition folder under this table, named as a writer of this batch names it
            let dirs = f.path.split_once("/data/").map_or("", |(_, rest)| rest);
            let dirs = dirs.rsplit_once('/').map_or("", |(d, _)| d);
            f.path = format!("{}/data/{dirs}/{}-{k:05}-000-{:016x}.parquet", self.location, m.batch_id, i);
            f.file_size_in_bytes = body.len() as u64;
            f.record_count = *rows;
            self.store.put(&f.path, body.clone()).await?;
        }
        let body = self.queue.claim(m.to_json()?).await?;
        let event_bytes = body.len() * 112 / 100 + RECORD_BYTES;
        let record = json!({
            "messageId": m.batch_id, "receiptHandle": m.batch_id, "body": body, "eventSource": "aws:sqs",
            "attributes": {"ApproximateReceiveCount": "1"},
        });
        Ok(Queued { record, event_bytes, arrived: Instant::now() })
    }
}

/// A queue for the committer handler that never reaches SQS: claim checks only (`claim`,
/// `resolve`, `discard_claim` touch nothing but `store`).
fn claims_queue(store: Arc<dyn floe::ports::ObjectStore>, prefix: &str) -> SqsQueue {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new("us-east-1"))
        .build();
    SqsQueue::new(aws_sdk_sqs::Client::from_conf(conf), "https://sqs.invalid/commit").with_claim_check(store, prefix)
}

/// The committer under test, with its slow ports.
struct Bench {
    committer: tokio::sync::Mutex<Committer>,
    queue: SqsQueue,
    requeue: Arc<dyn Queue>,
    clock: Arc<Clock>,
    copier: Arc<Copier>,
    per_message: (u64, u64),
    rows: Vec<CommitRow>,
    started: Instant,
}

#[derive(Debug, Clone, Serialize)]
struct CommitRow {
    at_s: f64,
    secs: f64,
    cpu_s: f64,
    messages: usize,
    sources: u64,
    files: u64,
    /// From the oldest message's arrival to the end of its commit.
    lag_s: f64,
    s3_requests: u64,
    ddb_requests: u64,
}

impl Bench {
    async fn new(a: &CommitterBenchArgs, profile: Profile, work: &Path) -> anyhow::Result<Self> {
        let path = a.template.as_ref().context("--template")?;
        let template: Template =
            serde_json::from_slice(&std::fs::read(path).with_context(|| path.display().to_string())?)
                .with_context(|| format!("{} is not a template made by --make-template", path.display()))?;
        let (raw, engine, table, objs) = warehouse(a, work, 1).await?;
        let sample = floe::pipeline::write::write(&engine, &raw, &table, objs)
            .await?
            .manifest
            .context("the sample batch wrote no file")?;
        let first = sample.files.first().context("the sample batch wrote no file")?;
        let file = (raw.store.get(&first.path).await?, first.record_count);
        let location = table.location.trim_end_matches('/').to_string();
        let (ports, clock) = slow(raw.clone(), profile, a.seed);
        let claims = work.join("claims");
        std::fs::create_dir_all(&claims)?;
        let prefix = local::path_to_uri(&claims);
        let per_message = (template.manifest.sources.len() as u64, template.manifest.files.len() as u64);
        let queue = claims_queue(raw.store.clone(), &prefix);
        let copier = Arc::new(Copier { template: template.manifest, location, queue, store: raw.store.clone(), file });
        let committer = tokio::sync::Mutex::new(Committer::new(engine, ports.clone()));
        Ok(Bench {
            committer,
            queue: claims_queue(ports.store.clone(), &prefix),
            requeue: raw.commit_queue.clone(),
            clock,
            copier,
            per_message,
            rows: vec![],
            started: Instant::now(),
        })
    }

    /// Runs the committer handler on `batch`, as one invocation: claim checks read, the commit,
    /// the settled messages' claim checks deleted.
    async fn commit(&mut self, batch: Vec<Queued>) -> anyhow::Result<()> {
        let (t, cpu, before) = (Instant::now(), cpu_now(Cpu::Thread), self.clock.waited());
        let event = serde_json::from_value(json!({"Records": batch.iter().map(|q| &q.record).collect::<Vec<_>>()}))?;
        let response = handle_committer(&self.committer, &self.queue, self.requeue.as_ref(), event).await;
        if let Some(f) = response.batch_item_failures.first() {
            bail!("message {} was not committed (see the log)", f.item_identifier);
        }
        let after = self.clock.waited();
        let oldest = batch.iter().map(|q| q.arrived).min().unwrap_or(t);
        self.rows.push(CommitRow {
            at_s: (t - self.started).as_secs_f64(),
            secs: t.elapsed().as_secs_f64(),
            cpu_s: (cpu_now(Cpu::Thread) - cpu).as_secs_f64(),
            messages: batch.len(),
            sources: batch.len() as u64 * self.per_message.0,
            files: batch.len() as u64 * self.per_message.1,
            lag_s: oldest.elapsed().as_secs_f64(),
            s3_requests: after.s3_requests - before.s3_requests,
            ddb_requests: after.ddb_requests - before.ddb_requests,
        });
        Ok(())
    }

    /// A first commit (the committer loads the table), not counted.
    async fn warm(&mut self) -> anyhow::Result<()> {
        let q = self.copier.copy(u64::MAX / 2).await?;
        self.commit(vec![q]).await?;
        self.rows.clear();
        self.started = Instant::now();
        Ok(())
    }

    fn csv(&self, path: Option<&PathBuf>) -> anyhow::Result<()> {
        let Some(path) = path else { return Ok(()) };
        let mut out = std::io::BufWriter::new(std::fs::File::create(path).with_context(|| path.display().to_string())?);
        writeln!(out, "at_s,secs,cpu_s,messages,sources,files,lag_s,s3_requests,ddb_requests")?;
        for r in &self.rows {
            writeln!(
                out,
                "{:.3},{:.4},{:.4},{},{},{},{:.3},{},{}",
                r.at_s, r.secs, r.cpu_s, r.messages, r.sources, r.files, r.lag_s, r.s3_requests, r.ddb_requests
            )?;
        }
        Ok(out.flush()?)
    }
}

/// The load: messages offered at the rate, batched as the event source mapping does.
pub(super) async fn load(a: &CommitterBenchArgs, profile: Profile, work: &Path) -> anyhow::Result<serde_json::Value> {
    let mut bench = Bench::new(a, profile, work).await?;
    bench.warm().await?;
    let per_s = a.files_per_s / bench.per_message.0 as f64;
    let total = (per_s * a.seconds as f64).round() as u64;
    let queue: Arc<Mutex<VecDeque<Queued>>> = Arc::default();
    let copier = bench.copier.clone();
    let start = tokio::time::Instant::now();
    let producer = {
        let (queue, copier) = (queue.clone(), copier.clone());
        tokio::spawn(async move {
            for i in 0..total {
                tokio::time::sleep_until(start + Duration::from_secs_f64(i as f64 / per_s)).await;
                let q = copier.copy(i).await?;
                queue.lock().expect("queue").push_back(q);
            }
            anyhow::Ok(())
        })
    };
    let window = Duration::from_secs_f64(a.window_s);
    let mut committed = 0u64;
    while committed < total {
        let first = queue.lock().expect("queue").front().map(|q| q.arrived);
        let Some(first) = first else {
            if producer.is_finished() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        let full = |q: &VecDeque<Queued>| {
            q.len() >= a.max_batch || q.iter().map(|m| m.event_bytes).sum::<usize>() >= EVENT_BYTES
        };
        while first.elapsed() < window && !full(&queue.lock().expect("queue")) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let batch = take(&mut queue.lock().expect("queue"), a.max_batch);
        committed += batch.len() as u64;
        bench.commit(batch).await?;
    }
    producer.await??;
    let elapsed = bench.started.elapsed().as_secs_f64();
    bench.csv(a.csv.as_ref())?;
    let r = &bench.rows;
    let sources: u64 = r.iter().map(|c| c.sources).sum();
    let busy: f64 = r.iter().map(|c| c.secs).sum();
    let gaps: Vec<f64> = r.windows(2).map(|w| w[1].at_s - w[0].at_s).collect();
    Ok(json!({
        "kind": "load",
        "offered_files_per_min": a.files_per_s * 60.0,
        "seconds": a.seconds,
        "committed_files_per_min": sources as f64 / elapsed * 60.0,
        "sources": sources,
        "messages": total,
        "commits": r.len(),
        "busy": busy / elapsed,
        "interval_s": summary(&gaps),
        "commit_s": summary(&r.iter().map(|c| c.secs).collect::<Vec<_>>()),
        "messages_per_commit": summary(&r.iter().map(|c| c.messages as f64).collect::<Vec<_>>()),
        "lag_s": summary(&r.iter().map(|c| c.lag_s).collect::<Vec<_>>()),
        "cpu_s_per_commit": summary(&r.iter().map(|c| c.cpu_s).collect::<Vec<_>>()),
        "sources_per_message": bench.per_message.0,
        "files_per_message": bench.per_message.1,
        "claim_checked": bench.copier.template.to_json()?.len() > CLAIM_CHECK_THRESHOLD,
        "max_rss_mb": max_rss_mb(),
        "parsed_entries": bench.committer.lock().await.parsed_entries(&"bench.load".parse()?),
        "profile": profile,
    }))
}

/// The committer with a standing backlog: batches of each size, back to back.
pub(super) async fn backlog(
    a: &CommitterBenchArgs,
    profile: Profile,
    work: &Path,
) -> anyhow::Result<serde_json::Value> {
    let mut bench = Bench::new(a, profile, work).await?;
    bench.warm().await?;
    let mut next = 0u64;
    let mut out = vec![];
    for &m in &a.batches {
        let from = bench.rows.len();
        for _ in 0..a.commits {
            let mut batch = vec![];
            for _ in 0..m {
                batch.push(bench.copier.copy(next).await?);
                next += 1;
            }
            bench.commit(batch).await?;
        }
        let rows = &bench.rows[from..];
        let secs: Vec<f64> = rows.iter().map(|c| c.secs).collect();
        let mid = summary(&secs)["p50"].as_f64().unwrap_or(0.0);
        out.push(json!({
            "messages": m,
            "sources": m as u64 * bench.per_message.0,
            "files": m as u64 * bench.per_message.1,
            "commit_s": summary(&secs),
            "cpu_s": summary(&rows.iter().map(|c| c.cpu_s).collect::<Vec<_>>()),
            "s3_requests": rows.iter().map(|c| c.s3_requests).sum::<u64>() / rows.len().max(1) as u64,
            "ddb_requests": rows.iter().map(|c| c.ddb_requests).sum::<u64>() / rows.len().max(1) as u64,
            "files_per_min": m as f64 * bench.per_message.0 as f64 / mid.max(1e-9) * 60.0,
        }));
    }
    bench.csv(a.csv.as_ref())?;
    Ok(json!({
        "kind": "backlog",
        "sources_per_message": bench.per_message.0,
        "files_per_message": bench.per_message.1,
        "batches": out,
        "max_rss_mb": max_rss_mb(),
        "profile": profile,
    }))
}

/// The first messages of `q` that one invocation takes: up to `max`, within the event's bytes.
fn take(q: &mut VecDeque<Queued>, max: usize) -> Vec<Queued> {
    let (mut n, mut bytes) = (0, 0);
    while n < q.len().min(max) && (n == 0 || bytes + q[n].event_bytes <= EVENT_BYTES) {
        bytes += q[n].event_bytes;
        n += 1;
    }
    q.drain(..n).collect()
}

fn summary(v: &[f64]) -> serde_json::Value {
    if v.is_empty() {
        return json!(null);
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
    json!({"mean": s.iter().sum::<f64>() / s.len() as f64, "p50": at(0.5), "p95": at(0.95), "max": s[s.len() - 1]})
}
