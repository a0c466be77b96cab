# Alarms: anything in a dead-letter queue, rows waiting too long to become visible (the commit
# queue's oldest message), objects waiting too long for a writer, and function errors.

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
