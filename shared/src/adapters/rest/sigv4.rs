//! SigV4 signing of REST catalog calls, for AWS's Iceberg REST endpoints (Glue's, signing name
//! `glue`; S3 Tables', `s3tables`): credentials from the standard AWS chain (environment,
//! profile, the Lambda role), loaded on first use; the AWS SDK's own signer.

use std::time::SystemTime;

use aws_credential_types::provider::ProvideCredentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use tokio::sync::OnceCell;

use crate::PortError;

/// Signs requests for one region and signing name.
pub(crate) struct SigV4 {
    region: String,
    service: String,
    credentials: OnceCell<aws_credential_types::provider::SharedCredentialsProvider>,
}

impl SigV4 {
    pub(crate) fn new(region: &str, service: &str) -> Self {
        SigV4 { region: region.to_string(), service: service.to_string(), credentials: OnceCell::new() }
    }

    /// The headers that sign `method url` with `headers` and `body` (`Authorization`,
    /// `X-Amz-Date`, and `X-Amz-Security-Token` for temporary credentials).
    pub(crate) async fn headers(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Vec<(String, String)>, PortError> {
        let provider = self
            .credentials
            .get_or_try_init(|| async {
                let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
                config.credentials_provider().ok_or_else(|| {
                    PortError::Invalid("SigV4 for the REST catalog: no AWS credentials are configured".into())
                })
            })
            .await?;
        let credentials =
            provider.provide_credentials().await.map_err(|e| PortError::io("AWS credentials for SigV4", e))?;
        let identity = credentials.into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name(&self.service)
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| PortError::Invalid(format!("SigV4 parameters: {e}")))?
            .into();
        let signable = SignableRequest::new(method, url, headers.iter().copied(), SignableBody::Bytes(body))
            .map_err(|e| PortError::Invalid(format!("SigV4: cannot sign {url}: {e}")))?;
        let (instructions, _) =
            sign(signable, &params).map_err(|e| PortError::Invalid(format!("SigV4: {e}")))?.into_parts();
        Ok(instructions.headers().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }
}
