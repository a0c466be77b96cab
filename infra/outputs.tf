output "landing_bucket" {
  description = "Drop Avro files here (under a routed prefix)."
  value       = aws_s3_bucket.landing.id
}

output "warehouse_bucket" {
  description = "Bucket of the Iceberg tables."
  value       = aws_s3_bucket.warehouse.id
}

output "warehouse" {
  description = "FLOE_WAREHOUSE: s3://bucket/prefix under which table locations live."
  value       = local.warehouse_uri
}

output "ingest_queue_url" {
  description = "Landing notifications, consumed by the writer."
  value       = aws_sqs_queue.ingest.url
}

output "commit_queue_url" {
  description = "File manifests and rewrite requests, consumed by the committer."
  value       = aws_sqs_queue.commit.url
}

output "ingest_dlq_url" {
  description = "Notifications that failed max_receive_count times."
  value       = aws_sqs_queue.ingest_dlq.url
}

output "commit_dlq_url" {
  description = "Commit messages that failed max_receive_count times."
  value       = aws_sqs_queue.commit_dlq.url
}

output "share_queue_url" {
  description = "Shares of compactor ticks' plans, consumed by the compactor (null without the compactor)."
  value       = one(aws_sqs_queue.share[*].url)
}

output "share_dlq_url" {
  description = "Compaction shares that failed max_receive_count times (null without the compactor)."
  value       = one(aws_sqs_queue.share_dlq[*].url)
}

output "catalog" {
  description = "The catalog kind (FLOE_CATALOG)."
  value       = var.catalog
}

output "catalog_table" {
  description = "DynamoDB catalog table (Iceberg DynamoDbCatalog layout); null with the Glue catalog."
  value       = var.catalog == "dynamodb" ? aws_dynamodb_table.catalog[0].name : null
}

output "glue_databases" {
  description = "Glue databases the roles may use (catalog = \"glue\"): created by Terraform with glue_create_databases, else by the committer at its first commit to each."
  value       = var.catalog == "glue" ? local.glue_databases : []
}

output "lock_table" {
  description = "DynamoDB lock table."
  value       = aws_dynamodb_table.lock.name
}

output "ledger_table" {
  description = "DynamoDB ledger table (exactly-once records and quarantine)."
  value       = aws_dynamodb_table.ledger.name
}

output "function_names" {
  description = "Lambda function names by role."
  value       = { for k, f in aws_lambda_function.function : k => f.function_name }
}

output "function_roles" {
  description = "IAM role ARNs by role."
  value       = { for k, r in aws_iam_role.function : k => r.arn }
}

output "function_environments" {
  description = "Each function's environment variables (what `floe run-function` needs to stand in for it locally), without a REST catalog's token or client credential."
  value       = { for k, v in local.environments : k => v if contains(keys(local.deployed), k) }
}

output "log_groups" {
  description = "CloudWatch log groups by role."
  value       = { for k, g in aws_cloudwatch_log_group.function : k => g.name }
}

output "config_uri" {
  description = "FLOE_CONFIG: where the table configuration was uploaded (null without floe_toml)."
  value       = var.floe_toml == null ? null : "s3://${local.warehouse_bucket}/${local.config_key}"
}

output "table_bucket_arn" {
  description = "The S3 table bucket (catalog = \"s3tables\"); null otherwise."
  value       = var.catalog == "s3tables" ? aws_s3tables_table_bucket.tables[0].arn : null
}
