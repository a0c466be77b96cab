output "landing_bucket" {
  description = "Drop Avro files here."
  value       = module.floe.landing_bucket
}

output "warehouse" {
  description = "Where the tables live (FLOE_WAREHOUSE)."
  value       = module.floe.warehouse
}

output "ingest_queue_url" {
  description = "Landing notifications (the writer's queue)."
  value       = module.floe.ingest_queue_url
}

output "commit_queue_url" {
  description = "The committer's queue."
  value       = module.floe.commit_queue_url
}

output "share_queue_url" {
  description = "The compactor's share queue (shares of a tick's plan for other invocations)."
  value       = module.floe.share_queue_url
}

output "dead_letter_queue_urls" {
  description = "Dead-letter queues."
  value       = { ingest = module.floe.ingest_dlq_url, commit = module.floe.commit_dlq_url, compact_share = module.floe.share_dlq_url }
}

output "catalog_table" {
  description = "DynamoDB catalog table (PyIceberg: load_catalog(..., type=\"dynamodb\", **{\"table-name\": ...}))."
  value       = module.floe.catalog_table
}

output "lock_table" {
  description = "DynamoDB lock table."
  value       = module.floe.lock_table
}

output "ledger_table" {
  description = "DynamoDB ledger table."
  value       = module.floe.ledger_table
}

output "function_names" {
  description = "Lambda functions."
  value       = module.floe.function_names
}

output "function_environments" {
  description = "Each function's environment."
  value       = module.floe.function_environments
}

output "log_groups" {
  description = "Log groups."
  value       = module.floe.log_groups
}

output "table_bucket_arn" {
  description = "The S3 table bucket (catalog = s3tables)."
  value       = module.floe.table_bucket_arn
}
