# Alarms: anything in a dead-letter queue, rows waiting too long to become visible (the commit
# queue's oldest message, and the committer's own freshness lag: creation of a source object to
# its rows' commit), objects waiting too long for a writer, objects quarantined, and function
# errors and throttles.

locals {
  dlqs = merge({
    ingest = aws_sqs_queue.ingest_dlq.name
    commit = aws_sqs_queue.commit_dlq.name
  }, { for name in aws_sqs_queue.share_dlq[*].name : "compact-share" => name })
  age_alarms = merge({
    commit = { queue = aws_sqs_queue.commit.name, seconds = var.freshness_alarm_seconds }
    ingest = { queue = aws_sqs_queue.ingest.name, seconds = var.freshness_alarm_seconds }
    }, {
    # A share waits at most its TTL, then runs at most the timeout: older ones are dropped unrun
    # (compaction is falling behind) or failed (they end in the dead-letter queue).
    for name in aws_sqs_queue.share[*].name : "compact-share" => { queue = name, seconds = var.compactor_share_ttl_seconds + var.compactor_timeout_seconds }
  })
}

resource "aws_cloudwatch_metric_alarm" "dead_letters" {
  for_each            = local.dlqs
  alarm_name          = "${var.name_prefix}-${each.key}-dead-letters"
  alarm_description   = "Messages in the ${each.key} dead-letter queue: they failed ${var.max_receive_count} times (see the functions' logs; floe quarantine list for refused objects)."
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateNumberOfMessagesVisible"
  dimensions          = { QueueName = each.value }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = var.tags
}

resource "aws_cloudwatch_metric_alarm" "oldest_message" {
  for_each            = local.age_alarms
  alarm_name          = "${var.name_prefix}-${each.key}-queue-age"
  alarm_description   = "The ${each.key} queue's oldest message is older than ${each.value.seconds} s: data is late to become queryable."
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateAgeOfOldestMessage"
  dimensions          = { QueueName = each.value.queue }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 3
  threshold           = each.value.seconds
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = var.tags
}

resource "aws_cloudwatch_metric_alarm" "function_errors" {
  for_each            = local.deployed
  alarm_name          = "${each.value}-errors"
  alarm_description   = "${each.value} invocations failed (a crash, a timeout, or a configuration error at cold start)."
  namespace           = "AWS/Lambda"
  metric_name         = "Errors"
  dimensions          = { FunctionName = aws_lambda_function.function[each.key].function_name }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = var.tags
}

# Throttled invocations: the account's concurrency is short of what the event sources ask (a
# throttled batch waits out its visibility timeout and counts toward the dead-letter queue).
resource "aws_cloudwatch_metric_alarm" "function_throttles" {
  for_each            = local.deployed
  alarm_name          = "${each.value}-throttles"
  alarm_description   = "${each.value} invocations were throttled: raise the account's concurrency quota or lower the event source's maximum concurrency (infra/README.md, \"One committer at a time per table\")."
  namespace           = "AWS/Lambda"
  metric_name         = "Throttles"
  dimensions          = { FunctionName = aws_lambda_function.function[each.key].function_name }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = var.tags
}

# Floe's own metrics (CloudWatch embedded metric format, namespace Floe, dimension Function =
# the function's name): the committer's freshness lag, from an object's creation to the commit
# of its rows, and the objects the writers quarantined.
locals {
  floe_alarms = {
    freshness-lag = {
      description = "Rows became queryable more than ${var.freshness_alarm_seconds} s after their object landed (Floe's freshness_lag_ms, the committer's): a queue, a writer or the committer is behind, or a backfill or replay of old objects is running."
      metric      = "freshness_lag_ms"
      function    = "committer"
      statistic   = "Maximum"
      period      = 60
      periods     = 3
      threshold   = var.freshness_alarm_seconds * 1000
    }
    quarantined = {
      description = "Objects were quarantined (refused with a reason, their rows not landed): floe quarantine list --aws says which and why; floe quarantine replay --aws sends them again after a fix."
      metric      = "quarantined"
      function    = "writer"
      statistic   = "Sum"
      period      = 300
      periods     = 1
      threshold   = 0
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "floe" {
  for_each            = local.floe_alarms
  alarm_name          = "${var.name_prefix}-${each.key}"
  alarm_description   = each.value.description
  namespace           = "Floe"
  metric_name         = each.value.metric
  dimensions          = { Function = aws_lambda_function.function[each.value.function].function_name }
  statistic           = each.value.statistic
  period              = each.value.period
  evaluation_periods  = each.value.periods
  threshold           = each.value.threshold
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions
  tags                = var.tags
}
