# The three functions, their log groups, the SQS event sources (writer <- ingest queue,
# committer <- commit queue, compactor <- share queue, all reporting partial batch failures) and
# the compactor's schedules. The committer's reserved concurrency and its event source's maximum
# concurrency are one number (committer_reserved_concurrency, 2), so no batch is throttled; its
# DynamoDB lock keeps commits to one table one at a time.

resource "aws_cloudwatch_log_group" "function" {
  # checkov:skip=CKV_AWS_158:Encrypted with CloudWatch's default key unless kms_key_arn is given (the key policy must then allow CloudWatch Logs).
  # checkov:skip=CKV_AWS_338:Retention is the log_retention_days variable (30 days by default): logs here are operational, not an audit trail (the snapshot summaries are).
  for_each          = local.deployed
  name              = "/aws/lambda/${each.value}"
  retention_in_days = var.log_retention_days
  kms_key_id        = local.kms_key_arn
  tags              = var.tags
}

resource "aws_lambda_function" "function" {
  # checkov:skip=CKV_AWS_117:The functions reach only AWS APIs (S3, SQS, DynamoDB, Glue); a VPC adds NAT or endpoint costs and is the user's choice.
  # checkov:skip=CKV_AWS_272:Code signing needs a signing profile of the user's; cargo lambda builds are reproducible from this repository.
  # checkov:skip=CKV_AWS_116:Failed messages go to the source queues' dead-letter queues (redrive policies); a function DLQ only serves asynchronous invocations.
  # checkov:skip=CKV_AWS_173:The environment holds resource names and URLs, and with catalog = "rest" the catalog's token or client credential when given; Lambda encrypts it at rest, with kms_key_arn when given (an AWS-managed key otherwise).
  # checkov:skip=CKV_AWS_50:X-Ray tracing is optional; the functions log one JSON line per object, batch and commit.
  # checkov:skip=CKV_AWS_115:The committer reserves committer_reserved_concurrency (2, or none on small accounts); writers are bounded by the event source's maximum concurrency instead, so as not to take account concurrency from other functions.
  for_each      = local.deployed
  function_name = each.value
  role          = aws_iam_role.function[each.key].arn
  runtime       = "provided.al2023"
  handler       = "bootstrap"
  architectures = [var.architecture]
  filename      = "${var.artifacts_dir}/${local.binaries[each.key]}/bootstrap.zip"
  # The zip's hash, so a rebuilt binary is redeployed.
  source_code_hash               = filebase64sha256("${var.artifacts_dir}/${local.binaries[each.key]}/bootstrap.zip")
  memory_size                    = local.memory[each.key]
  timeout                        = local.timeout[each.key]
  reserved_concurrent_executions = each.key == "committer" && local.committer_reserved > 0 ? local.committer_reserved : -1
  kms_key_arn                    = local.kms_key_arn
  environment {
    variables = merge(local.environments[each.key], each.key == "committer" ? local.rest_committer_secrets : local.rest_reader_secrets)
  }
  tags = var.tags
  # The log group (Lambda's default name, /aws/lambda/<function>) exists before the function
  # logs, so Lambda never creates one without retention.
  depends_on = [aws_iam_role_policy.function, aws_cloudwatch_log_group.function, aws_s3_object.floe_toml]
  lifecycle {
    precondition {
      condition     = var.catalog != "rest" || var.rest_uri != null
      error_message = "catalog = \"rest\" needs rest_uri, the REST catalog's base URI."
    }
    precondition {
      condition     = !(var.rest_sigv4 && (var.rest_token != null || var.rest_credential != null))
      error_message = "rest_sigv4 signs with the functions' AWS roles: leave rest_token and rest_credential unset."
    }
    precondition {
      condition     = var.catalog != "rest" || var.rest_allow_http || var.rest_uri == null || startswith(coalesce(var.rest_uri, "https://"), "https://")
      error_message = "rest_uri is http://: the catalog's token, credential and metadata would travel in the clear. Use https://, or set rest_allow_http = true for a catalog on a network you trust."
    }
    precondition {
      condition     = var.catalog != "rest" || var.rest_allow_http || var.rest_oauth2_server_uri == null || startswith(coalesce(var.rest_oauth2_server_uri, "https://"), "https://")
      error_message = "rest_oauth2_server_uri is http://: client secrets and tokens would travel in the clear. Use https://, or set rest_allow_http = true."
    }
    precondition {
      condition     = (var.rest_token == null || var.rest_token_arn == null) && (var.rest_credential == null || var.rest_credential_arn == null) && !(var.rest_token_arn != null && var.rest_credential_arn != null)
      error_message = "Give the REST catalog one secret: rest_token_arn or rest_credential_arn (or, in the clear, rest_token or rest_credential), not two."
    }
    precondition {
      condition     = (var.rest_reader_token == null || var.rest_reader_token_arn == null) && (var.rest_reader_credential == null || var.rest_reader_credential_arn == null) && length(compact([var.rest_reader_token, var.rest_reader_credential, var.rest_reader_token_arn, var.rest_reader_credential_arn])) <= 1
      error_message = "Give the writer and the compactor one REST secret: rest_reader_token_arn or rest_reader_credential_arn (or, in the clear, rest_reader_token or rest_reader_credential), not two."
    }
    precondition {
      condition     = var.catalog != "rest" || local.rest_reader_given || var.rest_readers_share_committer_secret || length(compact([var.rest_token, var.rest_credential, var.rest_token_arn, var.rest_credential_arn])) == 0
      error_message = "The writer and the compactor only load tables: give them a secret of a principal the REST catalog lets only read (rest_reader_token_arn or rest_reader_credential_arn), or set rest_readers_share_committer_secret = true to let them use the committer's (then a compromised writer or compactor can commit to the catalog around the committer's checks)."
    }
    precondition {
      condition     = !(var.rest_sigv4 && (var.rest_token_arn != null || var.rest_credential_arn != null || var.rest_reader_token_arn != null || var.rest_reader_credential_arn != null))
      error_message = "rest_sigv4 signs with the functions' AWS roles: leave rest_token_arn, rest_credential_arn and the rest_reader_* ARNs unset."
    }
    precondition {
      condition     = !(var.rest_token != null && var.rest_credential != null) && !(var.rest_reader_token != null && var.rest_reader_credential != null)
      error_message = "Set rest_token or rest_credential, not both (and rest_reader_token or rest_reader_credential, not both)."
    }
    precondition {
      condition     = !(var.rest_sigv4 && (var.rest_reader_token != null || var.rest_reader_credential != null))
      error_message = "rest_sigv4 signs with the functions' AWS roles: leave rest_reader_token and rest_reader_credential unset."
    }
    precondition {
      condition     = var.create_wait_seconds < var.writer_timeout_seconds
      error_message = "create_wait_seconds must be below writer_timeout_seconds: a writer waits that long for a new table within one invocation."
    }
  }
}

resource "aws_lambda_event_source_mapping" "writer" {
  event_source_arn                   = aws_sqs_queue.ingest.arn
  function_name                      = aws_lambda_function.function["writer"].arn
  enabled                            = var.event_sources_enabled
  batch_size                         = var.writer_batch_size
  maximum_batching_window_in_seconds = var.writer_batching_window_seconds
  function_response_types            = ["ReportBatchItemFailures"]
  lifecycle {
    precondition {
      condition     = var.writer_batch_size <= 10 || var.writer_batching_window_seconds > 0
      error_message = "writer_batch_size above 10 needs a batching window: set writer_batching_window_seconds to at least 1 (an SQS event source's rule)."
    }
  }
  scaling_config {
    maximum_concurrency = var.writer_max_concurrency
  }
}

resource "aws_lambda_event_source_mapping" "committer" {
  event_source_arn                   = aws_sqs_queue.commit.arn
  function_name                      = aws_lambda_function.function["committer"].arn
  enabled                            = var.event_sources_enabled
  batch_size                         = var.committer_batch_size
  maximum_batching_window_in_seconds = var.committer_batching_window_seconds
  function_response_types            = ["ReportBatchItemFailures"]
  lifecycle {
    precondition {
      condition     = var.committer_batch_size <= 10 || var.committer_batching_window_seconds > 0
      error_message = "committer_batch_size above 10 needs a batching window: set committer_batching_window_seconds to at least 1 (an SQS event source's rule)."
    }
  }
  # As many at once as the committer's reservation, never more: AWS's rule for an SQS event
  # source behind reserved concurrency (a throttled batch stays invisible for the whole
  # visibility timeout, and each throttle is a receive toward the dead-letter queue). 2 without
  # a reservation, the least SQS allows. The lock serialises commits to one table.
  scaling_config {
    maximum_concurrency = max(local.committer_reserved, 2)
  }
}

# The compactor's other source: the shares of a tick's plan that the tick did not run itself.
resource "aws_lambda_event_source_mapping" "compactor" {
  count                   = var.compactor_enabled ? 1 : 0
  event_source_arn        = aws_sqs_queue.share[0].arn
  function_name           = aws_lambda_function.function["compactor"].arn
  enabled                 = var.event_sources_enabled
  batch_size              = 1
  function_response_types = ["ReportBatchItemFailures"]
  scaling_config {
    maximum_concurrency = max(2, var.compactor_max_invocations - 1)
  }
}

# A failed tick is not retried: the next one plans afresh (and would send its shares again).
resource "aws_lambda_function_event_invoke_config" "compactor" {
  count                  = var.compactor_enabled ? 1 : 0
  function_name          = aws_lambda_function.function["compactor"].function_name
  maximum_retry_attempts = 0
}

# --- compactor schedules ------------------------------------------------------------------

locals {
  schedules = var.compactor_enabled ? merge(
    { compact = { expression = var.compactor_schedule, detail = {} } },
    var.orphan_sweep_schedule == null ? {} : {
      sweep = { expression = var.orphan_sweep_schedule, detail = { sweep_older_than_hours = var.orphan_sweep_older_than_hours } }
    },
  ) : {}
}

resource "aws_cloudwatch_event_rule" "compactor" {
  for_each            = local.schedules
  name                = "${var.name_prefix}-compactor-${each.key}"
  description         = "Floe compactor tick (${each.key})"
  schedule_expression = each.value.expression
  tags                = var.tags
}

resource "aws_cloudwatch_event_target" "compactor" {
  for_each = local.schedules
  rule     = aws_cloudwatch_event_rule.compactor[each.key].name
  arn      = aws_lambda_function.function["compactor"].arn
  # The handler reads options from the event's detail (events/compactor/*.json).
  input = jsonencode({ "detail-type" = "Scheduled Event", source = "aws.events", detail = each.value.detail })
}

resource "aws_lambda_permission" "compactor" {
  for_each      = local.schedules
  statement_id  = "AllowEventBridge-${each.key}"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.function["compactor"].function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.compactor[each.key].arn
}

# The committer re-sends a message that waited out a table's lock to its own queue (Lambda ->
# SQS -> the same Lambda). The Rust SDK passes the invocation's X-Ray trace header to SQS
# (its recursion-detection interceptor), so Lambda's recursive-loop detection would count those
# hops and stop a message after about 16 of them; the re-sends are deliberate and bounded by the
# message's own retries, so the loop is allowed.
resource "aws_lambda_function_recursion_config" "committer" {
  count          = var.committer_recursion_allowed ? 1 : 0
  function_name  = aws_lambda_function.function["committer"].function_name
  recursive_loop = "Allow"
}
