variable "region" {
  description = "AWS region to deploy to. Null: the region of the environment (AWS_REGION, AWS_DEFAULT_REGION or the profile's), as the AWS CLI picks it."
  type        = string
  default     = null
}

variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
  default     = "floe"
}

variable "artifacts_dir" {
  description = "Where `make lambda` (cargo lambda build --output-format zip) put the functions' zips."
  type        = string
  default     = "../../../target/lambda"
}

variable "architecture" {
  description = "arm64 or x86_64: what the functions were built for (make deploy ARCH=...)."
  type        = string
  default     = "arm64"
}

variable "catalog" {
  description = "dynamodb (query with PyIceberg or Spark), glue (query with Athena, EMR, Trino), s3tables (an S3 table bucket; query with Athena, EMR, Spark) or rest (an Iceberg REST catalog you run, at rest_uri)."
  type        = string
  default     = "dynamodb"
}

variable "s3tables_namespaces" {
  description = "With catalog = s3tables: the namespaces of your tables."
  type        = list(string)
  default     = ["default"]
}

variable "glue_databases" {
  description = "With catalog = glue: the namespaces of your tables (null: those of default_table and compact_tables)."
  type        = list(string)
  default     = null
}

variable "glue_create_databases" {
  description = "With catalog = glue: create the databases with Terraform (fails for one that exists). False: the committer creates a missing one."
  type        = bool
  default     = false
}

variable "default_table" {
  description = "Without a floe.toml, every object lands here."
  type        = string
  default     = "default.events"
}

variable "floe_toml_path" {
  description = "Path of a floe.toml with your tables and their routes (see floe.toml.example at the repository root). Null: one table, default_table."
  type        = string
  default     = null
}

variable "routes" {
  description = "Landing key prefixes (and suffixes) that notify the writers; with a floe.toml, its tables' prefixes."
  type = list(object({
    prefix = string
    suffix = optional(string, ".avro")
  }))
  default = [{ prefix = "", suffix = ".avro" }]
}

variable "compact_tables" {
  description = "Tables the compactor merges (empty: default_table)."
  type        = list(string)
  default     = []
}

variable "force_destroy" {
  description = "Let terraform destroy delete the buckets with their contents (tests; never with data you keep)."
  type        = bool
  default     = false
}

variable "deletion_protection" {
  description = "DynamoDB deletion protection."
  type        = bool
  default     = true
}

variable "alarm_actions" {
  description = "SNS topic ARNs notified by the alarms."
  type        = list(string)
  default     = []
}

variable "event_sources_enabled" {
  description = "False pauses the writers and the committer (their queues keep the messages)."
  type        = bool
  default     = true
}

variable "aws_endpoint_url" {
  description = "LocalStack or moto endpoint (make deploy-local sets it from AWS_ENDPOINT_URL). Null on AWS."
  type        = string
  default     = null
}

variable "require_tls" {
  description = "Deny requests to the buckets and queues not made over TLS. Null: on AWS, not against an emulator (which serves plain HTTP); the tests plan it on to check the policies."
  type        = bool
  default     = null
}

variable "aws_endpoint_url_dynamodb" {
  description = "DynamoDB's own emulator endpoint (make deploy-local sets it from AWS_ENDPOINT_URL_DYNAMODB): LocalStack without Docker serves no DynamoDB, moto beside it does. Null: aws_endpoint_url."
  type        = string
  default     = null
}

# With catalog = "rest": the module's rest_* variables, passed through (see infra/README.md).
variable "rest_uri" {
  description = "With catalog = rest: the REST catalog's base URI, before /v1."
  type        = string
  default     = null
}

variable "rest_warehouse" {
  description = "With catalog = rest: the warehouse asked of the catalog's /v1/config."
  type        = string
  default     = null
}

variable "rest_token_arn" {
  description = "With catalog = \"rest\": a Secrets Manager secret or SSM SecureString ARN holding the bearer token (kept out of the state and the environment)."
  type        = string
  default     = null
}

variable "rest_credential_arn" {
  description = "With catalog = \"rest\": a Secrets Manager secret or SSM SecureString ARN holding CLIENT_ID:CLIENT_SECRET."
  type        = string
  default     = null
}

variable "rest_allow_http" {
  description = "With catalog = \"rest\": allow an http:// catalog or token URL (for a trusted network only)."
  type        = bool
  default     = false
}

variable "rest_token" {
  description = "With catalog = rest: a bearer token (lands in the state and the functions' environment)."
  type        = string
  default     = null
  sensitive   = true
}

variable "rest_credential" {
  description = "With catalog = rest: OAuth2 client credentials, CLIENT_ID:CLIENT_SECRET."
  type        = string
  default     = null
  sensitive   = true
}

variable "rest_reader_token" {
  description = "With catalog = rest: a read-only bearer token for the writer and the compactor."
  type        = string
  default     = null
  sensitive   = true
}

variable "rest_reader_credential" {
  description = "With catalog = rest: read-only OAuth2 client credentials for the writer and the compactor."
  type        = string
  default     = null
  sensitive   = true
}

variable "rest_reader_token_arn" {
  description = "With catalog = rest: the ARN of a secret holding a read-only bearer token for the writer and the compactor."
  type        = string
  default     = null
}

variable "rest_reader_credential_arn" {
  description = "With catalog = rest: the ARN of a secret holding read-only OAuth2 client credentials for the writer and the compactor."
  type        = string
  default     = null
}

variable "rest_readers_share_committer_secret" {
  description = "With catalog = rest and no reader secret: let the writer and the compactor use the committer's (they then hold its catalog rights)."
  type        = bool
  default     = false
}

variable "rest_oauth2_server_uri" {
  description = "With rest_credential: the OAuth2 token endpoint (default <rest_uri>/v1/oauth/tokens)."
  type        = string
  default     = null
}

variable "rest_sigv4" {
  description = "With catalog = rest: sign calls with AWS SigV4 (Glue's or S3 Tables' REST endpoint)."
  type        = bool
  default     = false
}

variable "rest_signing_name" {
  description = "With rest_sigv4: glue or s3tables."
  type        = string
  default     = "glue"
}

variable "orphan_sweep_older_than_hours" {
  description = "Age below which the daily orphan sweep deletes nothing (null: the module's 360). The committer refuses files older than this minus a day."
  type        = number
  default     = null
}

# Throughput settings, null for the module's defaults (which keep up with the 40,000 files a
# minute docs/PERFORMANCE.md models); at-scale.tfvars pins them, with that workload's object size.

variable "kms_key_arn" {
  description = "A customer-managed KMS key for the buckets, queues, tables and logs (null: AWS's own encryption). Its policy must let S3 and CloudWatch Logs use it: see infra/README.md."
  type        = string
  default     = null
}

variable "warehouse_versioning" {
  description = "Keep a deleted or overwritten table file restorable for 7 days (S3 versioning on the warehouse bucket; the deleted files stay billable that long): see infra/README.md, \"Recovering deleted table files\"."
  type        = bool
  default     = true
}

variable "ingest_senders" {
  description = "IAM role ARNs of the operators who run `floe backfill`, `floe quarantine replay --aws` or redrive the ingest dead-letter queue: the ingest queue refuses every other sender but the landing bucket and the committer."
  type        = list(string)
  default     = []
}

variable "commit_senders" {
  description = "IAM role ARNs of the operators who redrive the commit dead-letter queue: the commit queue refuses every other sender but the functions."
  type        = list(string)
  default     = []
}

variable "check_sender_ids" {
  description = "The committer admits each kind of message only from the role that sends it, by SQS's sender id. Off only on an emulator (make deploy-local turns it off): LocalStack and moto stamp one id on every message."
  type        = bool
  default     = true
}

variable "commit_sender_ids" {
  description = "Unique ids (AROA...) of the operators' roles in commit_senders, whose redriven appends the committer admits (never rewrites: the compactor plans those again)."
  type        = list(string)
  default     = []
}

variable "landing_expiration_days" {
  description = "Days landed Avro objects are kept (null: forever; the module's own default). Also bounds the ledger's records (FLOE_LEDGER_TTL_DAYS): see infra/README.md, \"Storage that stops growing\", before you change it on a deployment with data."
  type        = number
  default     = 30
}

variable "writer_batch_size" {
  description = "Notifications per writer invocation (null: the module's 1000)."
  type        = number
  default     = null
}

variable "writer_batching_window_seconds" {
  description = "How long the writers' event source gathers notifications (null: the module's 5)."
  type        = number
  default     = null
}

variable "expected_object_mb" {
  description = "Typical landing object size (MB), which sizes the writers' memory (null: the module's 2)."
  type        = number
  default     = null
}

variable "committer_reserved_concurrency" {
  description = "Concurrency reserved for the committer and its event source's maximum concurrency (2); 0 reserves none, for accounts whose total concurrency is 10 (`aws lambda get-account-settings`)."
  type        = number
  default     = 2
}

variable "committer_recursion_allowed" {
  description = "Allow the committer's recursive loop (it re-sends contended messages to its own queue). null: allowed on AWS, left alone on an emulator (which lacks the API)."
  type        = bool
  default     = null
}

variable "committer_memory_mb" {
  description = "Committer memory, MB (null: the module's 1769)."
  type        = number
  default     = null
}

variable "compactor_max_tasks" {
  description = "Compaction tasks per compactor invocation (null: the module's 6)."
  type        = number
  default     = null
}

variable "compactor_max_invocations" {
  description = "Compactor invocations per tick (null: the module's 200)."
  type        = number
  default     = null
}
