# The ingest queue (landing bucket notifications -> writers) and the commit queue (writers'
# file manifests and compactors' rewrite requests -> the committer), each with a dead-letter
# queue. Visibility timeouts are 6x the consuming function's timeout (AWS's guidance for SQS
# event sources), so a message is never redelivered while an invocation may still hold it.

locals {
  sqs_kms = var.kms_key_arn == null ? {} : { kms = var.kms_key_arn }
}

resource "aws_sqs_queue" "ingest_dlq" {
  name                      = "${var.name_prefix}-ingest-dlq"
  message_retention_seconds = 1209600
  sqs_managed_sse_enabled   = var.kms_key_arn == null ? true : null
  kms_master_key_id         = var.kms_key_arn
  tags                      = var.tags
}

resource "aws_sqs_queue" "ingest" {
  name                       = "${var.name_prefix}-ingest"
  visibility_timeout_seconds = 6 * var.writer_timeout_seconds
  message_retention_seconds  = 1209600
  sqs_managed_sse_enabled    = var.kms_key_arn == null ? true : null
  kms_master_key_id          = var.kms_key_arn
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.ingest_dlq.arn
    maxReceiveCount     = var.max_receive_count
  })
  tags = var.tags
}

resource "aws_sqs_queue" "commit_dlq" {
  name                      = "${var.name_prefix}-commit-dlq"
  message_retention_seconds = 1209600
  sqs_managed_sse_enabled   = var.kms_key_arn == null ? true : null
  kms_master_key_id         = var.kms_key_arn
  tags                      = var.tags
}

resource "aws_sqs_queue" "commit" {
  name                       = "${var.name_prefix}-commit"
  visibility_timeout_seconds = 6 * var.committer_timeout_seconds
  message_retention_seconds  = 1209600
  sqs_managed_sse_enabled    = var.kms_key_arn == null ? true : null
  kms_master_key_id          = var.kms_key_arn
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.commit_dlq.arn
    maxReceiveCount     = var.max_receive_count
  })
  tags = var.tags
}

# Only the landing bucket (of this account) may send notifications to the ingest queue; the
# committer's re-enqueues are allowed by its own role. TLS only.
data "aws_iam_policy_document" "ingest_queue" {
  statement {
    sid       = "LandingBucketNotifications"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.ingest.arn]
    principals {
      type        = "Service"
      identifiers = ["s3.amazonaws.com"]
    }
    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [aws_s3_bucket.landing.arn]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account]
    }
  }
  dynamic "statement" {
    for_each = var.require_tls ? [1] : []
    content {
      sid       = "DenyInsecureTransport"
      effect    = "Deny"
      actions   = ["sqs:*"]
      resources = [aws_sqs_queue.ingest.arn]
      principals {
        type        = "*"
        identifiers = ["*"]
      }
      condition {
        test     = "Bool"
        variable = "aws:SecureTransport"
        values   = ["false"]
      }
    }
  }
}

resource "aws_sqs_queue_policy" "ingest" {
  queue_url = aws_sqs_queue.ingest.id
  policy    = data.aws_iam_policy_document.ingest_queue.json
}

# The compactor's share queue: a tick runs the most urgent share of its plan itself and sends
# the others here, one message each, for the queue's event source mapping to run side by side
# (compactor_max_invocations shares a tick at most).
resource "aws_sqs_queue" "share_dlq" {
  count                     = var.compactor_enabled ? 1 : 0
  name                      = "${var.name_prefix}-compact-share-dlq"
  message_retention_seconds = 1209600
  sqs_managed_sse_enabled   = var.kms_key_arn == null ? true : null
  kms_master_key_id         = var.kms_key_arn
  tags                      = var.tags
}

resource "aws_sqs_queue" "share" {
  count = var.compactor_enabled ? 1 : 0
  name  = "${var.name_prefix}-compact-share"
  # One invocation at a time holds a share (batch size 1, no batching window): a failed one is
  # delivered again a minute after the function's timeout. The compactor drops a share older
  # than compactor_share_ttl_seconds on its first delivery, and fails it again on a later one,
  # so a failing share reaches the dead-letter queue after max_receive_count deliveries.
  visibility_timeout_seconds = var.compactor_timeout_seconds + 60
  message_retention_seconds  = 86400
  sqs_managed_sse_enabled    = var.kms_key_arn == null ? true : null
  kms_master_key_id          = var.kms_key_arn
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.share_dlq[0].arn
    maxReceiveCount     = var.max_receive_count
  })
  tags = var.tags
}
