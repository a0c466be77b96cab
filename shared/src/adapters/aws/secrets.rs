//! Secrets read at a cold start: the REST catalog's bearer token or OAuth2 client credential
//! from AWS Secrets Manager or an SSM `SecureString` parameter, named by ARN
//! (`FLOE_REST_TOKEN_ARN`, `FLOE_REST_CREDENTIAL_ARN`), so that no secret sits in a function's
//! environment or in the Terraform state. The secret's text is what `FLOE_REST_TOKEN` or
//! `FLOE_REST_CREDENTIAL` would hold. Reads nothing when neither is set.

use std::collections::HashMap;

use crate::{Error, Result};

/// Each setting that names a secret by ARN, and the setting whose value the secret holds.
pub const SECRET_SETTINGS: [(&str, &str); 2] =
    [("FLOE_REST_TOKEN_ARN", "FLOE_REST_TOKEN"), ("FLOE_REST_CREDENTIAL_ARN", "FLOE_REST_CREDENTIAL")];

/// The settings the secrets named through `var` hold (`FLOE_REST_TOKEN`, ...), read with the
/// credentials of `sdk`. A secret named by ARN and given in the clear as well is refused, as is
/// an ARN of anything but a Secrets Manager secret or an SSM `SecureString` parameter.
pub async fn resolve(
    sdk: &aws_config::SdkConfig,
    var: &impl Fn(&str) -> Option<String>,
) -> Result<HashMap<String, String>> {
    let vars = crate::settings::Vars::new(var);
    let mut out = HashMap::new();
    for (by_arn, holds) in SECRET_SETTINGS {
        let Some(arn) = vars.get(by_arn) else { continue };
        if vars.is_set(holds) {
            return Err(Error::Config(format!("set {by_arn} or {holds}, not both")));
        }
        out.insert(holds.to_string(), read(sdk, by_arn, &arn).await?.trim().to_string());
    }
    Ok(out)
}

/// Where a secret lives, from its ARN: `arn:PARTITION:secretsmanager:REGION:ACCOUNT:secret:NAME`
/// or `arn:PARTITION:ssm:REGION:ACCOUNT:parameter/NAME`.
#[derive(Debug, PartialEq)]
enum Place {
    SecretsManager { region: String },
    Ssm { region: String },
}

fn place(setting: &str, arn: &str) -> Result<Place> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    match parts.as_slice() {
        ["arn", _, "secretsmanager", region, _, rest] if rest.starts_with("secret:") && !region.is_empty() => {
            Ok(Place::SecretsManager { region: region.to_string() })
        }
        ["arn", _, "ssm", region, _, rest] if rest.starts_with("parameter/") && !region.is_empty() => {
            Ok(Place::Ssm { region: region.to_string() })
        }
        _ => Err(Error::Config(format!(
            "{setting} must be the ARN of a Secrets Manager secret (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME) \
             or of an SSM SecureString parameter (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME), got `{arn}`"
        ))),
    }
}

async fn read(sdk: &aws_config::SdkConfig, setting: &str, arn: &str) -> Result<String> {
    let failed = |e: String| Error::Config(format!("{setting}: cannot read {arn}: {e}"));
    match place(setting, arn)? {
        Place::SecretsManager { region } => {
            let conf = aws_sdk_secretsmanager::config::Builder::from(sdk)
                .region(aws_sdk_secretsmanager::config::Region::new(region))
                .build();
            let got = aws_sdk_secretsmanager::Client::from_conf(conf)
                .get_secret_value()
                .secret_id(arn)
                .send()
                .await
                .map_err(|e| failed(aws_sdk_secretsmanager::error::DisplayErrorContext(e).to_string()))?;
            got.secret_string.ok_or_else(|| failed("the secret holds no text (a binary secret)".into()))
        }
        Place::Ssm { region } => {
            let conf = aws_sdk_ssm::config::Builder::from(sdk).region(aws_sdk_ssm::config::Region::new(region)).build();
            let got = aws_sdk_ssm::Client::from_conf(conf)
                .get_parameter()
                .name(arn)
                .with_decryption(true)
                .send()
                .await
                .map_err(|e| failed(aws_sdk_ssm::error::DisplayErrorContext(e).to_string()))?;
            let p = got.parameter.ok_or_else(|| failed("no parameter in the answer".into()))?;
            if p.r#type != Some(aws_sdk_ssm::types::ParameterType::SecureString) {
                return Err(failed(format!(
                    "it is a {:?} parameter, not a SecureString: a secret is kept encrypted",
                    p.r#type.map(|t| t.as_str().to_string()).unwrap_or_default()
                )));
            }
            p.value.ok_or_else(|| failed("the parameter has no value".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_secrets_manager_secrets_and_ssm_parameters_are_secret_arns() {
        let sm = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:floe/rest-AbCdEf";
        assert_eq!(place("X", sm).unwrap(), Place::SecretsManager { region: "eu-west-1".into() });
        let ssm = "arn:aws:ssm:us-east-1:123456789012:parameter/floe/rest";
        assert_eq!(place("X", ssm).unwrap(), Place::Ssm { region: "us-east-1".into() });
        for bad in
            ["floe/rest", "arn:aws:s3:::bucket/key", "arn:aws:ssm:us-east-1:1:document/x", "arn:aws:kms::1:key/x"]
        {
            assert!(
                place("FLOE_REST_TOKEN_ARN", bad).unwrap_err().to_string().contains("FLOE_REST_TOKEN_ARN"),
                "{bad}"
            );
        }
    }
}
