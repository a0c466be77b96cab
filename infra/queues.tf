# The ingest queue (landing bucket notifications -> writers) and the commit queue (writers'
# file manifests and compactors' rewrite requests -> the committer), each with a dead-letter
# queue. Visibility timeouts are 6x the consuming function's timeout (AWS's guidance for SQS
# event sources), so a message is never redelivered while an invocation may still hold it.

resource "aws_sqs_queue" "ingest_dlq" {
  name                      = "${var.name_prefix}-ingest-dlq"
  message_retention_seconds = 1209600
  sqs_managed_sse_enabled   = var.kms_key_arn == null ? true : null
  kms_master_key_id         = local.kms_key_arn
  tags                      = var.tags
}

resource "aws_sqs_queue" "ingest" {
  name                       = "${var.name_prefix}-ingest"
  visibility_timeout_seconds = 6 * var.writer_timeout_seconds
  message_retention_seconds  = 1209600
  sqs_managed_sse_enabled    = var.kms_key_arn == null ? true : null
  kms_master_key_id          = local.kms_key_arn
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
  kms_master_key_id         = local.kms_key_arn
  tags                      = var.tags
}

resource "aws_sqs_queue" "commit" {
  name                       = "${var.name_prefix}-commit"
  visibility_timeout_seconds = 6 * var.committer_timeout_seconds
  message_retention_seconds  = 1209600
  sqs_managed_sse_enabled    = var.kms_key_arn == null ? true : null
  kms_master_key_id          = local.kms_key_arn
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.commit_dlq.arn
    maxReceiveCount     = var.max_receive_count
  })
  tags = var.tags
}

# The compactor's share queue: a tick runs the most urgent share of its plan itself and sends
# the others here, one message each, for the queue's event source mapping to run side by side
# (compactor_max_invocations shares a tick at most).
resource "aws_sqs_queue" "share_dlq" {
  count                     = var.compactor_enabled ? 1 : 0
  name                      = "${var.name_prefix}-compact-share-dlq"
  message_retention_seconds = 1209600
  sqs_managed_sse_enabled   = var.kms_key_arn == null ? true : null
  kms_master_key_id         = local.kms_key_arn
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
  kms_master_key_id          = local.kms_key_arn
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.share_dlq[0].arn
    maxReceiveCount     = var.max_receive_count
  })
  tags = var.tags
}

# --- who may send -------------------------------------------------------------------------
#
# Each queue accepts sqs:SendMessage only from the identities that send to it: an explicit Deny
# for every other principal of any account (aws:PrincipalArn, which for an assumed role is the
# role's ARN), so that no identity-policy grant elsewhere in the account (an admin's sqs:*, a
# wildcard role) can put a forged message in front of the functions. AWS services acting
# themselves (aws:PrincipalIsAWSService) are not caught by that Deny: the landing bucket's
# notifications and SQS's own redrive into a dead-letter queue, each allowed only from its
# source (aws:SourceArn). Only sending is restricted: the account's administrators still manage,
# read and purge the queues. TLS only, for everyone.
locals {
  role_arns = { for k, r in aws_iam_role.function : k => r.arn }
  queue_senders = merge(
    {
      # The landing bucket's notifications; the committer re-enqueues the sources of an
      # overlapping manifest; operators (ingest_senders) backfill, replay or redrive.
      ingest = {
        arn     = aws_sqs_queue.ingest.arn
        url     = aws_sqs_queue.ingest.id
        roles   = concat([local.role_arns["committer"]], var.ingest_senders)
        service = "s3.amazonaws.com"
        source  = aws_s3_bucket.landing.arn
      }
      # Writers' manifests and create requests, compactors' rewrite requests, and the committer's
      # re-sends of messages that waited out a table's lock.
      commit = {
        arn     = aws_sqs_queue.commit.arn
        url     = aws_sqs_queue.commit.id
        roles   = concat([for k in ["writer", "committer", "compactor"] : local.role_arns[k] if contains(keys(local.role_arns), k)], var.commit_senders)
        service = null
        source  = null
      }
      # The ingest queue's redrive only (the module does not set the writer's FLOE_DLQ_URL).
      ingest_dlq = {
        arn     = aws_sqs_queue.ingest_dlq.arn
        url     = aws_sqs_queue.ingest_dlq.id
        roles   = []
        service = "sqs.amazonaws.com"
        source  = aws_sqs_queue.ingest.arn
      }
      # The commit queue's redrive, and the committer's refusals (FLOE_DLQ_URL): a message it
      # will never commit, sent here with its reason.
      commit_dlq = {
        arn     = aws_sqs_queue.commit_dlq.arn
        url     = aws_sqs_queue.commit_dlq.id
        roles   = [local.role_arns["committer"]]
        service = "sqs.amazonaws.com"
        source  = aws_sqs_queue.commit.arn
      }
    },
    var.compactor_enabled ? {
      # The shares of a tick's plan: the compactor's own.
      share = {
        arn     = aws_sqs_queue.share[0].arn
        url     = aws_sqs_queue.share[0].id
        roles   = [local.role_arns["compactor"]]
        service = null
        source  = null
      }
      share_dlq = {
        arn     = aws_sqs_queue.share_dlq[0].arn
        url     = aws_sqs_queue.share_dlq[0].id
        roles   = []
        service = "sqs.amazonaws.com"
        source  = aws_sqs_queue.share[0].arn
      }
    } : {},
  )
}

data "aws_iam_policy_document" "queue" {
  for_each = local.queue_senders
  dynamic "statement" {
    for_each = each.value.service == null ? [] : [each.value.service]
    content {
      sid       = each.value.service == "s3.amazonaws.com" ? "LandingBucketNotifications" : "RedriveFromSourceQueue"
      actions   = ["sqs:SendMessage"]
      resources = [each.value.arn]
      principals {
        type        = "Service"
        identifiers = [statement.value]
      }
      condition {
        test     = "ArnEquals"
        variable = "aws:SourceArn"
        values   = [each.value.source]
      }
      condition {
        test     = "StringEquals"
        variable = "aws:SourceAccount"
        values   = [local.account]
      }
    }
  }
  statement {
    sid       = "DenySendersButTheDeployments"
    effect    = "Deny"
    actions   = ["sqs:SendMessage"]
    resources = [each.value.arn]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    # No role may send to a queue without one (a dead-letter queue only SQS fills): then the
    # Deny holds for every principal but AWS services.
    dynamic "condition" {
      for_each = length(each.value.roles) == 0 ? [] : [each.value.roles]
      content {
        test     = "ArnNotEquals"
        variable = "aws:PrincipalArn"
        values   = condition.value
      }
    }
    condition {
      test     = "BoolIfExists"
      variable = "aws:PrincipalIsAWSService"
      values   = ["false"]
    }
  }
  dynamic "statement" {
    for_each = var.require_tls ? [1] : []
    content {
      sid       = "DenyInsecureTransport"
      effect    = "Deny"
      actions   = ["sqs:*"]
      resources = [each.value.arn]
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

resource "aws_sqs_queue_policy" "queue" {
  for_each  = local.queue_senders
  queue_url = each.value.url
  policy    = data.aws_iam_policy_document.queue[each.key].json
}

moved {
  from = aws_sqs_queue_policy.ingest
  to   = aws_sqs_queue_policy.queue["ingest"]
}
