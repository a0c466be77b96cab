//! SDK errors → `PortError`, by error code and HTTP status.

use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::error::SdkError;

use crate::PortError;

/// The service error code, if the service answered.
pub(crate) fn code<E: ProvideErrorMetadata, R>(e: &SdkError<E, R>) -> Option<&str> {
    match e {
        SdkError::ServiceError(s) => s.err().code(),
        _ => None,
    }
}

fn status<E, R: HasStatus>(e: &SdkError<E, R>) -> Option<u16> {
    match e {
        SdkError::ServiceError(s) => Some(s.raw().status_code()),
        SdkError::ResponseError(r) => Some(r.raw().status_code()),
        _ => None,
    }
}

/// Access to an HTTP status on the SDK's raw response type.
pub(crate) trait HasStatus {
    fn status_code(&self) -> u16;
}

impl HasStatus for aws_sdk_s3::config::http::HttpResponse {
    fn status_code(&self) -> u16 {
        self.status().as_u16()
    }
}

/// Maps an SDK error to a `PortError`.
pub(crate) fn map<E, R>(context: impl Into<String>, e: SdkError<E, R>) -> PortError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: HasStatus + std::fmt::Debug + Send + Sync + 'static,
{
    let context = context.into();
    let c = code(&e).map(str::to_string);
    let s = status(&e);
    match (c.as_deref(), s) {
        (
            Some(
                "NoSuchKey"
                | "NoSuchVersion"
                | "NotFound"
                | "ResourceNotFoundException"
                | "EntityNotFoundException"
                | "NotFoundException"
                | "AWS.SimpleQueueService.NonExistentQueue",
            ),
            _,
        )
        | (None, Some(404)) => PortError::NotFound(context),
        (
            Some(
                "PreconditionFailed"
                | "ConditionalCheckFailedException"
                | "ConditionalRequestConflict"
                | "TransactionCanceledException"
                | "AlreadyExistsException"
                | "ConcurrentModificationException"
                | "ConflictException",
            ),
            _,
        )
        | (_, Some(412)) => PortError::Conflict(context),
        (
            Some(
                "Throttling"
                | "ThrottlingException"
                | "SlowDown"
                | "ProvisionedThroughputExceededException"
                | "RequestLimitExceeded"
                | "TooManyRequestsException"
                | "RequestThrottled",
            ),
            _,
        )
        | (_, Some(429 | 503)) => PortError::Throttled(format!("{context}: {}", c.unwrap_or_default())),
        // S3 Tables: a name or location it refuses; S3: a range that starts past the object's
        // end. The same request can never succeed.
        (Some("BadRequestException" | "InvalidRange"), _) | (_, Some(416)) => {
            PortError::Invalid(format!("{context}: {}", aws_sdk_s3::error::DisplayErrorContext(e)))
        }
        _ => PortError::io(context, aws_sdk_s3::error::DisplayErrorContext(e).to_string()),
    }
}

/// Why a GET of a source object can never succeed as things stand, if that is what `e` says:
/// the object is archived, or the caller may not read it (the bucket's policy, its KMS key).
/// Not a failure of the batch reading it: the object is refused with this reason.
pub(crate) fn unreadable<E, R>(e: &SdkError<E, R>) -> Option<String>
where
    E: ProvideErrorMetadata,
    R: HasStatus,
{
    match (code(e), status(e)) {
        (Some("InvalidObjectState"), _) => {
            Some("the object is archived (GLACIER, DEEP_ARCHIVE or an archive tier): restore it, then replay it".into())
        }
        (Some("AccessDenied" | "AllAccessDisabled"), _) | (None, Some(403)) => Some(
            "access denied: the writer's role may not read this object (its bucket's policy, or its KMS key)".into(),
        ),
        _ => None,
    }
}

/// A request that could not be built (a missing required field: a bug, not an outage).
pub(crate) fn build(e: impl std::fmt::Display) -> PortError {
    PortError::Invalid(format!("request: {e}"))
}
