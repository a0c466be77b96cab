//! `floe-writer` Lambda: S3 object-created notifications (through SQS, or a direct S3 event)
//! → `pipeline::write` → file manifests on the commit queue. Reports SQS partial batch
//! failures, so one bad object does not replay its whole batch.

use floe::handlers::{WriterEnv, handle_writer_by, writer_env};
use floe::ports::Ports;
use lambda_runtime::{Error, LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let floe::adapters::aws::ColdStart { clients, ports, .. } =
        floe::adapters::aws::writer_cold_start(floe::settings::env).await?;
    let emf = floe::adapters::aws::emf::Emf::new("floe-writer", floe::settings::env);
    let ports = ports.with_metrics(emf.recorder());
    let env = writer_env(floe::settings::env, ports.store.as_ref(), &clients).await.map_err(|e| e.to_string())?;
    let (env, ports, emf) = (&env, &ports, &emf);
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<serde_json::Value>| async move {
        let out = handle(env, ports, ev).await;
        emf.flush();
        out
    }))
    .await
}

async fn handle(
    env: &WriterEnv,
    ports: &Ports,
    ev: LambdaEvent<serde_json::Value>,
) -> Result<aws_lambda_events::event::sqs::SqsBatchResponse, Error> {
    // Lambda's deadline (ms since the epoch) as an instant: rounds that could not end by it are
    // left to be delivered again.
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let left = std::time::Duration::from_millis(ev.context.deadline.saturating_sub(now_ms));
    Ok(handle_writer_by(env, ports, ev.payload, Some(std::time::Instant::now() + left)).await?)
}

#[cfg(test)]
mod tests {
    use floe::handlers::writer_input;

    fn load(json: &str) -> serde_json::Value {
        serde_json::from_str(json).expect("valid JSON")
    }

    #[test]
    fn sqs_batch_of_notifications_yields_decoded_keys_and_skips_test_events() {
        let input = writer_input(&load(include_str!("../../../events/writer/sqs-s3-notifications.json"))).unwrap();
        assert_eq!(input.len(), 2);
        let first = input[0].1.as_ref().unwrap();
        assert_eq!(input[0].0.as_deref(), Some("3f2c1a9e-0b1d-4c8e-9a57-6c2f5d8e1a01"));
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].uri, "s3://floe-landing/events/dt=2026-11-29/part 00001.avro");
        assert_eq!(first[0].size, 198120);
        assert_eq!(first[0].version, "9b2cf535f27731c974343645a3985328");
        assert!(input[1].1.as_ref().unwrap().is_empty(), "s3:TestEvent names no object");
    }

    #[test]
    fn direct_s3_event_is_accepted() {
        let input = writer_input(&load(include_str!("../../../events/writer/s3-direct.json"))).unwrap();
        assert_eq!(input.len(), 1);
        assert_eq!(input[0].0, None, "no SQS message id");
        let objects = input[0].1.as_ref().unwrap();
        assert_eq!(objects[0].uri, "s3://floe-landing/events/big file.avro");
        assert_eq!(objects[0].version, "d41d8cd98f00b204e9800998ecf8427e-7", "quotes stripped");
    }

    #[test]
    fn moto_style_keys_with_encoded_slashes_decode() {
        assert_eq!(
            floe::handlers::decode_key("in%2Fdt%3D2024-01-01%2Fmy+file.avro").unwrap(),
            "in/dt=2024-01-01/my file.avro"
        );
    }
}
