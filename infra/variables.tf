# Every knob of a Floe deployment. Defaults suit a first deployment; the README of
# examples/quickstart says which ones a user must set.

variable "name_prefix" {
  description = "Prefix of every resource name (functions, queues, tables, roles, log groups)."
  type        = string
  default     = "floe"
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}[a-z0-9]$", var.name_prefix))
    error_message = "name_prefix must be 3-32 characters of lowercase letters, digits and hyphens, starting with a letter."
  }
}

variable "artifacts_dir" {
  description = "Folder holding the functions' zips as `cargo lambda build --output-format zip` lays them out: <dir>/floe-writer/bootstrap.zip, <dir>/floe-committer/bootstrap.zip, <dir>/floe-compactor/bootstrap.zip."
  type        = string
}

variable "architecture" {
  description = "Lambda architecture the binaries were built for: arm64 (cheaper per GB-second) or x86_64."
  type        = string
  default     = "arm64"
  validation {
    condition     = contains(["arm64", "x86_64"], var.architecture)
    error_message = "architecture must be \"arm64\" or \"x86_64\"."
  }
}

variable "landing_bucket_name" {
  description = "Landing bucket, where producers drop Avro files. Default: <name_prefix>-landing-<account>-<region>."
  type        = string
  default     = null
  validation {
    condition     = var.landing_bucket_name == null || can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.landing_bucket_name))
    error_message = "landing_bucket_name must be a valid S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)."
  }
}

variable "warehouse_bucket_name" {
  description = "Warehouse bucket, holding the Iceberg tables (data and metadata). Default: <name_prefix>-warehouse-<account>-<region>."
  type        = string
  default     = null
  validation {
    condition     = var.warehouse_bucket_name == null || can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.warehouse_bucket_name))
    error_message = "warehouse_bucket_name must be a valid S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)."
  }
}

variable "warehouse_prefix" {
  description = "Key prefix under which table locations live in the warehouse bucket (FLOE_WAREHOUSE = s3://<bucket>/<prefix>)."
  type        = string
  default     = "warehouse"
  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)*$", var.warehouse_prefix))
    error_message = "warehouse_prefix must be a relative key prefix without leading or trailing slashes, e.g. \"warehouse\" or \"lake/iceberg\"."
  }
}

variable "force_destroy" {
  description = "Let `terraform destroy` delete non-empty buckets (and their tables' data). Keep false outside tests."
  type        = bool
  default     = false
}

variable "catalog" {
  description = "Where table pointers live: \"dynamodb\" (a DynamoDB table in Iceberg Java's DynamoDbCatalog layout; PyIceberg and Spark read it), \"glue\" (the Glue Data Catalog; Athena, EMR, Trino read it), \"s3tables\" (an Amazon S3 table bucket this module creates; tables keep their files in the storage S3 Tables assigns them) or \"rest\" (an Iceberg REST catalog you run, at rest_uri; tables keep their files in the warehouse bucket)."
  type        = string
  default     = "dynamodb"
  validation {
    condition     = contains(["dynamodb", "glue", "s3tables", "rest"], var.catalog)
    error_message = "catalog must be \"dynamodb\", \"glue\", \"s3tables\" or \"rest\"."
  }
}

variable "rest_uri" {
  description = "With catalog = \"rest\": the REST catalog's base URI, before /v1 (FLOE_REST_URI), e.g. \"https://catalog.example.com/api/catalog\"."
  type        = string
  default     = null
  validation {
    condition     = var.rest_uri == null ? true : can(regex("^https?://[^/?#\\s]+[^?#\\s]*$", var.rest_uri))
    error_message = "rest_uri must be an http:// or https:// URL without a query or fragment."
  }
}

variable "rest_warehouse" {
  description = "With catalog = \"rest\": the warehouse the catalog's /v1/config is asked for (FLOE_REST_WAREHOUSE); null sends none."
  type        = string
  default     = null
}

variable "rest_allow_http" {
  description = "With catalog = \"rest\": allow an http:// rest_uri or rest_oauth2_server_uri (FLOE_REST_ALLOW_HTTP), over which the catalog's token, credential and metadata travel in the clear. For a catalog on a network you trust only."
  type        = bool
  default     = false
}

variable "rest_token_arn" {
  description = "With catalog = \"rest\": the ARN of a Secrets Manager secret or an SSM SecureString parameter holding the bearer token (FLOE_REST_TOKEN_ARN), read by the functions at their cold start: the token stays out of the Terraform state and the functions' environment. Each role may read that secret only. Use instead of rest_token."
  type        = string
  default     = null
  validation {
    condition     = var.rest_token_arn == null || can(regex("^arn:aws[a-z-]*:(secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+|ssm:[a-z0-9-]+:[0-9]{12}:parameter/.+)$", coalesce(var.rest_token_arn, "x")))
    error_message = "rest_token_arn must be a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME) or an SSM parameter ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME)."
  }
}

variable "rest_credential_arn" {
  description = "With catalog = \"rest\": the ARN of a Secrets Manager secret or an SSM SecureString parameter holding CLIENT_ID:CLIENT_SECRET (FLOE_REST_CREDENTIAL_ARN), read at the cold start as rest_token_arn is. Use instead of rest_credential."
  type        = string
  default     = null
  validation {
    condition     = var.rest_credential_arn == null || can(regex("^arn:aws[a-z-]*:(secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+|ssm:[a-z0-9-]+:[0-9]{12}:parameter/.+)$", coalesce(var.rest_credential_arn, "x")))
    error_message = "rest_credential_arn must be a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME) or an SSM parameter ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME)."
  }
}

variable "rest_token" {
  description = "With catalog = \"rest\": a bearer token sent on every call (FLOE_REST_TOKEN). It lands in the Terraform state and the functions' environment (encrypted at rest, with kms_key_arn when given): prefer rest_token_arn, or rest_sigv4 where the catalog takes it."
  type        = string
  default     = null
  sensitive   = true
}

variable "rest_credential" {
  description = "With catalog = \"rest\": OAuth2 client credentials as CLIENT_ID:CLIENT_SECRET (FLOE_REST_CREDENTIAL), exchanged for tokens at rest_oauth2_server_uri. Like rest_token it lands in the state and the functions' environment."
  type        = string
  default     = null
  sensitive   = true
  validation {
    condition     = var.rest_credential == null ? true : can(regex("^[^:]+:.+$", var.rest_credential))
    error_message = "rest_credential must be CLIENT_ID:CLIENT_SECRET."
  }
}

variable "rest_reader_token" {
  description = "With catalog = \"rest\": a bearer token for the writer and the compactor only, which load tables but never commit (the committer commits for them); give it a principal the catalog lets read only. Null gives them rest_token or rest_credential."
  type        = string
  default     = null
  sensitive   = true
}

variable "rest_reader_credential" {
  description = "With catalog = \"rest\": CLIENT_ID:CLIENT_SECRET for the writer and the compactor only (see rest_reader_token)."
  type        = string
  default     = null
  sensitive   = true
  validation {
    condition     = var.rest_reader_credential == null ? true : can(regex("^[^:]+:.+$", var.rest_reader_credential))
    error_message = "rest_reader_credential must be CLIENT_ID:CLIENT_SECRET."
  }
}

variable "rest_reader_token_arn" {
  description = "With catalog = \"rest\": the ARN of a Secrets Manager secret or an SSM SecureString holding a bearer token for the writer and the compactor only (their FLOE_REST_TOKEN_ARN), which load tables but never commit: give it a principal the catalog lets read only. Only their roles may read it; only the committer's may read rest_token_arn."
  type        = string
  default     = null
  validation {
    condition     = var.rest_reader_token_arn == null || can(regex("^arn:aws[a-z-]*:(secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+|ssm:[a-z0-9-]+:[0-9]{12}:parameter/.+)$", coalesce(var.rest_reader_token_arn, "x")))
    error_message = "rest_reader_token_arn must be a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME) or an SSM parameter ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME)."
  }
}

variable "rest_reader_credential_arn" {
  description = "With catalog = \"rest\": the ARN of a secret holding CLIENT_ID:CLIENT_SECRET for the writer and the compactor only (see rest_reader_token_arn)."
  type        = string
  default     = null
  validation {
    condition     = var.rest_reader_credential_arn == null || can(regex("^arn:aws[a-z-]*:(secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+|ssm:[a-z0-9-]+:[0-9]{12}:parameter/.+)$", coalesce(var.rest_reader_credential_arn, "x")))
    error_message = "rest_reader_credential_arn must be a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME) or an SSM parameter ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME)."
  }
}

variable "rest_readers_share_committer_secret" {
  description = "With catalog = \"rest\" and a committer secret but no reader one: let the writer and the compactor use the committer's secret. Then a compromised writer or compactor holds the committer's catalog rights and can commit to the catalog around the committer's checks; without this (or a rest_reader_* secret) the plan fails."
  type        = bool
  default     = false
}

variable "rest_oauth2_server_uri" {
  description = "With rest_credential: the OAuth2 token endpoint (FLOE_REST_OAUTH2_SERVER_URI); null uses <rest_uri>/v1/oauth/tokens."
  type        = string
  default     = null
}

variable "rest_scope" {
  description = "With rest_credential: the OAuth2 scope asked for (FLOE_REST_SCOPE); null uses \"catalog\"."
  type        = string
  default     = null
}

variable "rest_sigv4" {
  description = "With catalog = \"rest\": sign every call with AWS SigV4 and the functions' roles (FLOE_REST_SIGV4), for AWS's Iceberg REST endpoints. The module grants the roles no catalog rights for it: attach the catalog's policy to function_roles yourself."
  type        = bool
  default     = false
}

variable "rest_signing_name" {
  description = "With rest_sigv4: the service name signed for (FLOE_REST_SIGNING_NAME): \"glue\" (Glue's REST endpoint) or \"s3tables\" (S3 Tables' REST endpoint). The region is the deployment's."
  type        = string
  default     = "glue"
  validation {
    condition     = can(regex("^[a-z0-9-]+$", var.rest_signing_name))
    error_message = "rest_signing_name is an AWS service signing name such as \"glue\" or \"s3tables\"."
  }
}

variable "s3tables_namespaces" {
  description = "With catalog = \"s3tables\": the namespaces to create in the table bucket. Tables are created in them on first sight of data (the committer may also create a namespace a route names)."
  type        = list(string)
  default     = ["default"]
  validation {
    condition     = alltrue([for n in var.s3tables_namespaces : can(regex("^[a-z0-9][a-z0-9_]{0,254}$", n))])
    error_message = "S3 Tables namespaces are lowercase letters, digits and underscores, starting with a letter or digit."
  }
}

variable "s3tables_unreferenced_days" {
  description = "With catalog = \"s3tables\": days after which S3 Tables marks a file no snapshot references noncurrent (its unreferenced-file removal). The committer refuses files older than this minus one day (FLOE_MAX_COMMIT_AGE_HOURS), so it never commits a file S3 Tables may have removed."
  type        = number
  default     = 3
  validation {
    condition     = var.s3tables_unreferenced_days >= 2 && floor(var.s3tables_unreferenced_days) == var.s3tables_unreferenced_days
    error_message = "s3tables_unreferenced_days must be a whole number of at least 2 (one day of it is the committer's margin)."
  }
}

variable "s3tables_noncurrent_days" {
  description = "With catalog = \"s3tables\": days a noncurrent file is kept before S3 Tables deletes it."
  type        = number
  default     = 10
  validation {
    condition     = var.s3tables_noncurrent_days >= 1 && floor(var.s3tables_noncurrent_days) == var.s3tables_noncurrent_days
    error_message = "s3tables_noncurrent_days must be a whole number of at least 1."
  }
}

variable "glue_databases" {
  description = "With catalog = \"glue\": the Glue databases (table namespaces) your tables live in; the roles may read and write tables in these and no other. Null: the namespaces of default_table and compact_tables. List every namespace your floe_toml routes to."
  type        = list(string)
  default     = null
  validation {
    condition     = var.glue_databases == null || alltrue([for d in coalesce(var.glue_databases, []) : can(regex("^[a-z0-9_]{1,255}$", d))])
    error_message = "Glue database names must be lowercase letters, digits and underscores."
  }
}

variable "glue_create_databases" {
  description = "With catalog = \"glue\": true has Terraform create (and destroy) the glue_databases, which fails for one that exists (Athena and EMR often made `default` already). False: the committer creates a missing one at its first commit and uses an existing one as it is; destroy leaves them."
  type        = bool
  default     = false
}

variable "default_table" {
  description = "Without floe_toml, every object lands in this table (NAMESPACE.NAME), created on first sight from the object's Avro schema."
  type        = string
  default     = "default.events"
  validation {
    condition     = can(regex("^[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*$", var.default_table))
    error_message = "default_table must be NAMESPACE.NAME, each part letters, digits and underscores."
  }
}

variable "floe_toml" {
  description = "Table configuration: the content of a floe.toml (tables, their key prefixes, partition spec, sort order, dedup key, target file size). Uploaded to the warehouse bucket and named by FLOE_CONFIG. Null: one table, default_table."
  type        = string
  default     = null
}

variable "routes" {
  description = "Landing bucket notification filters, one per table route: objects whose key has the prefix and suffix reach the ingest queue. With floe_toml, each prefix must be one of its tables' prefixes. Prefixes must not overlap (S3 refuses overlapping notification filters)."
  type = list(object({
    prefix = string
    suffix = optional(string, ".avro")
  }))
  default = [{ prefix = "", suffix = ".avro" }]
  validation {
    condition     = length(var.routes) > 0 && length(var.routes) <= 100
    error_message = "routes must hold 1 to 100 filters."
  }
  validation {
    # S3 refuses notification filters that overlap ("Configuration is ambiguously defined"):
    # two overlap when one prefix starts the other and one suffix ends the other.
    condition = alltrue([for i, a in var.routes : alltrue([for j, b in var.routes : i == j || !(
      (startswith(a.prefix, b.prefix) || startswith(b.prefix, a.prefix)) &&
      (endswith(coalesce(a.suffix, ""), coalesce(b.suffix, "")) || endswith(coalesce(b.suffix, ""), coalesce(a.suffix, "")))
    )])])
    error_message = "routes overlap: S3 refuses two filters where one prefix starts the other and one suffix ends the other (e.g. \"events/\" and \"events/web/\" with the same suffix). Give each route a prefix no other route's starts, or suffixes that differ."
  }
}

variable "landing_noncurrent_version_days" {
  description = "Days an overwritten or deleted landing object's old version is kept (the writer reads the version a notification names; keep it longer than the ingest queue's retention, and longer than you may take to redrive its dead-letter queue: a redrive starts the retention afresh, and a version gone by then is reported as superseded, its rows not landed)."
  type        = number
  default     = 15
  validation {
    condition     = var.landing_noncurrent_version_days >= 14
    error_message = "landing_noncurrent_version_days must be at least 14 (the ingest queue keeps a notification up to 14 days)."
  }
}

variable "landing_expiration_days" {
  description = "Days after which landed source objects expire (their version then lives landing_noncurrent_version_days more). Quarantined objects are replayed from the landing bucket: keep this longer than you take to look at quarantine. Also sets the ledger's time to live (this + landing_noncurrent_version_days + 7 days, FLOE_LEDGER_TTL_DAYS): an object is remembered as landed for as long as anything could send it again. Null (the module's default, so that no existing deployment starts deleting; the quickstart sets 30): objects and ledger records are kept forever (at 40,000 files a minute ~1 PB of Avro a month and ~17 GB of ledger a day)."
  type        = number
  default     = null
  validation {
    condition     = var.landing_expiration_days == null || try(var.landing_expiration_days >= 15 && floor(var.landing_expiration_days) == var.landing_expiration_days, false)
    error_message = "landing_expiration_days must be null or a whole number of at least 15 (the ingest queue keeps a notification up to 14 days: a landed object should outlive its notification, as a quarantined one should outlive a look at the quarantine)."
  }
}

variable "claim_check_days" {
  description = "Days a claim check (a commit message too large for SQS, kept under <warehouse>/_floe/claims/) lives if its message is never settled; the committer deletes it once it settles the message. Longer than a message may wait, dead-letter queue redrives included (a redrive starts SQS's retention afresh): a message whose claim check is gone cannot be read."
  type        = number
  default     = 90
  validation {
    condition     = var.claim_check_days >= 15
    error_message = "claim_check_days must be at least 15 (SQS keeps a message up to 14 days)."
  }
}

variable "kms_key_arn" {
  description = "Customer-managed KMS key for buckets, queues, tables and logs: its key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID) or an alias ARN of this account and region (arn:aws:kms:REGION:ACCOUNT:alias/NAME), which the module resolves to its key (IAM grants on an alias ARN do not cover the key). Null: S3-managed keys (SSE-S3), SQS-managed SSE, DynamoDB's AWS-owned key, CloudWatch's default encryption. The key's policy must let s3.amazonaws.com use it (kms:GenerateDataKey, kms:Decrypt: S3 sends notifications to the encrypted ingest queue) and logs.<region>.amazonaws.com (encrypted log groups); the functions' roles get kms:Decrypt and kms:GenerateDataKey on it."
  type        = string
  default     = null
  validation {
    condition     = var.kms_key_arn == null || !can(regex("alias/aws/", coalesce(var.kms_key_arn, "-")))
    error_message = "kms_key_arn must be a customer-managed key: an AWS-managed key (alias/aws/sqs, alias/aws/s3, ...) has a policy no one can change, so S3 could never send notifications to the ingest queue encrypted with it. Use null for AWS's own encryption."
  }
  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key/[A-Za-z0-9-]+|alias/[A-Za-z0-9/_-]+)$", coalesce(var.kms_key_arn, "-")))
    error_message = "kms_key_arn must be a key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID) or an alias ARN (arn:aws:kms:REGION:ACCOUNT:alias/NAME): IAM grants name ARNs, so a key ID or a bare alias name would leave the functions without the key. `aws kms describe-key --key-id <id or alias> --query KeyMetadata.Arn` prints the key ARN."
  }
}

variable "warehouse_versioning" {
  description = "Version the warehouse bucket, so that a table file deleted or overwritten by mistake (a bad `floe` run, a client with too much access, a buggy engine) can be restored for warehouse_noncurrent_days. Costs the storage of every deleted object for those days: Floe deletes expired snapshots' files and compacted inputs, so roughly warehouse_noncurrent_days of deleted table data stays billable (infra/README.md, \"Recovering deleted table files\"). False on a bucket that was versioned suspends versioning (old versions stay until they expire)."
  type        = bool
  default     = true
  nullable    = false
}

variable "warehouse_noncurrent_days" {
  description = "With warehouse_versioning: days a deleted or overwritten warehouse object's old version is kept before S3 expires it (delete markers left alone are removed too). Claim checks' old versions follow the same rule."
  type        = number
  default     = 7
  nullable    = false
  validation {
    condition     = var.warehouse_noncurrent_days >= 1 && floor(var.warehouse_noncurrent_days) == var.warehouse_noncurrent_days
    error_message = "warehouse_noncurrent_days must be a whole number of at least 1."
  }
}

variable "ingest_senders" {
  description = "IAM role (or user) ARNs besides the committer that may send to the ingest queue: the operators' roles that run `floe backfill`, `floe quarantine replay --aws` or a redrive of the ingest dead-letter queue. The queue policy denies sqs:SendMessage to every other principal of any account (except the landing bucket's notifications), whatever its identity policy grants."
  type        = list(string)
  default     = []
  nullable    = false
  validation {
    condition     = alltrue([for a in var.ingest_senders : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/.+$", a))])
    error_message = "ingest_senders must be IAM role or user ARNs (arn:aws:iam::ACCOUNT:role/NAME): the queue policy compares them with aws:PrincipalArn, which for an assumed role is the role's ARN."
  }
}

variable "commit_senders" {
  description = "IAM role (or user) ARNs besides the writer, the committer and the compactor that may send to the commit queue: the operators' roles that redrive the commit dead-letter queue (an SQS message move task sends with its caller's rights). The queue policy denies sqs:SendMessage to every other principal."
  type        = list(string)
  default     = []
  nullable    = false
  validation {
    condition     = alltrue([for a in var.commit_senders : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/.+$", a))])
    error_message = "commit_senders must be IAM role or user ARNs (arn:aws:iam::ACCOUNT:role/NAME)."
  }
}

variable "check_sender_ids" {
  description = "The committer admits appends and creates only from the writer's role and rewrites only from the compactor's, by the sender id SQS stamps on every message (FLOE_APPEND_SENDERS, FLOE_REWRITE_SENDERS, FLOE_COMMITTER_SENDER: the roles' unique ids): the commit queue's policy alone lets each role send every kind. Turn it off only on an emulator: LocalStack and moto stamp every message with one id (the account's, or a fixed one) that matches no role (make deploy-local does)."
  type        = bool
  default     = true
  nullable    = false
}

variable "commit_sender_ids" {
  description = "Principal ids (a role's unique id, AROA..., as `aws iam get-role` shows it; or a user's, AIDA...) whose appends and creates the committer admits: the operators of commit_senders who redrive the commit dead-letter queue, in case SQS stamps a redriven message with the redriver's id (AWS does not document which). An append is admitted only for files under its table's data location, there with their size and footer, as a writer's is. Rewrites are never admitted from them: a rewrite is only ever the compactor's, and a dead-lettered one is planned again from the table (docs/ARCHITECTURE.md, Trust)."
  type        = list(string)
  default     = []
  nullable    = false
  validation {
    condition     = alltrue([for id in var.commit_sender_ids : can(regex("^[A-Z0-9]{12,128}$", id))])
    error_message = "commit_sender_ids must be principal ids (AROA... or AIDA..., upper-case letters and digits), not ARNs: SQS names a sender by its id."
  }
}

variable "writer_memory_mb" {
  description = "Writer memory (MB). Null: sized from its measured peak, about 3x the Avro bytes of one batch plus 100 MB (docs/BENCHMARKS.md#memory), at least 1024 MB and at most 2048 MB (or 8 objects + 100 MB, where one object needs more: the per-object limit is an eighth of the memory); past a third of it a batch is written in rounds (FLOE_WRITER_ROUND_BYTES)."
  type        = number
  default     = null
  validation {
    condition     = var.writer_memory_mb == null || try(var.writer_memory_mb >= 256 && var.writer_memory_mb <= 10240, false)
    error_message = "writer_memory_mb must be null or between 256 and 10240."
  }
}

variable "expected_object_mb" {
  description = "Typical size of one landing object (MB), used to size the writer's memory when writer_memory_mb is null."
  type        = number
  default     = 2
  nullable    = false
  validation {
    condition     = var.expected_object_mb > 0
    error_message = "expected_object_mb must be positive."
  }
}

variable "writer_timeout_seconds" {
  description = "Writer timeout. The ingest queue's visibility timeout is 6x this (AWS's guidance for SQS event sources)."
  type        = number
  default     = 120
  validation {
    condition     = var.writer_timeout_seconds >= 30 && var.writer_timeout_seconds <= 900
    error_message = "writer_timeout_seconds must be between 30 and 900."
  }
}

variable "writer_batch_size" {
  description = "Notifications per writer invocation (SQS batch size). The default, gathered for up to writer_batching_window_seconds, keeps up with 40,000 files a minute (docs/PERFORMANCE.md, scale model): each batch writes one Parquet file per partition for up to 1000 objects. A writer holds at most one round of a batch decoded (FLOE_WRITER_ROUND_BYTES, a third of its memory past 100 MB), so bigger objects make more rounds, not more memory."
  type        = number
  default     = 1000
  nullable    = false
  validation {
    condition     = var.writer_batch_size >= 1 && var.writer_batch_size <= 10000
    error_message = "writer_batch_size must be between 1 and 10000."
  }
}

variable "writer_batching_window_seconds" {
  description = "How long the event source mapping gathers notifications before invoking a writer (required above 10 messages per batch): what a lone object waits at quiet times before it is written."
  type        = number
  default     = 5
  nullable    = false
  validation {
    condition     = var.writer_batching_window_seconds >= 0 && var.writer_batching_window_seconds <= 300
    error_message = "writer_batching_window_seconds must be between 0 and 300."
  }
}

variable "writer_max_concurrency" {
  description = "Most writers running at once (the SQS event source's maximum concurrency)."
  type        = number
  default     = 100
  validation {
    condition     = var.writer_max_concurrency >= 2 && var.writer_max_concurrency <= 1000
    error_message = "writer_max_concurrency must be between 2 and 1000 (an SQS event source's limits)."
  }
}

variable "table_cache_seconds" {
  description = "How long a warm writer keeps a table's schema and settings (FLOE_TABLE_CACHE_SECS)."
  type        = number
  default     = 60
  validation {
    condition     = var.table_cache_seconds >= 0
    error_message = "table_cache_seconds must not be negative."
  }
}

variable "create_wait_seconds" {
  description = "How long a writer waits for the committer to create a table it sees first (FLOE_CREATE_WAIT_SECS); below the writer timeout."
  type        = number
  default     = 30
  validation {
    condition     = var.create_wait_seconds >= 0
    error_message = "create_wait_seconds must not be negative."
  }
}

variable "committer_reserved_concurrency" {
  description = "Concurrency reserved for the committer, and the most invocations its event source makes at once (the same number, so no batch is ever throttled). 0 (or null) reserves none (Lambda's own 0 would stop the function; here it means no reservation): for accounts whose total concurrency is 10, which cannot reserve any (check `aws lambda get-account-settings`); the event source still invokes at most 2 at once. One commit at a time per table holds either way: the DynamoDB lock serialises each table, and a message that waits out the lock is sent again, never counted toward the dead-letter queue."
  type        = number
  default     = 2
  validation {
    condition     = var.committer_reserved_concurrency == null || var.committer_reserved_concurrency == 0 || (var.committer_reserved_concurrency >= 2 && var.committer_reserved_concurrency <= 10)
    error_message = "committer_reserved_concurrency must be 0 (no reservation) or between 2 (the least an SQS event source's maximum concurrency may be) and 10."
  }
}

variable "committer_recursion_allowed" {
  description = "Sets the committer's recursive-loop detection to Allow. It sends contended commit messages back to its own queue, and the Rust SDK passes the invocation's trace header on, so Lambda's loop detection would stop a message re-sent about 16 times (a table contended that long). Emulators lack the API: the quickstart turns it off against them."
  type        = bool
  default     = true
  nullable    = false
}

variable "committer_memory_mb" {
  description = "Committer memory (MB). The default, 1769 MB, is one full vCPU: what one committer needs to keep up with 40,000 files a minute (docs/PERFORMANCE.md)."
  type        = number
  default     = 1769
  nullable    = false
  validation {
    condition     = var.committer_memory_mb >= 256 && var.committer_memory_mb <= 10240
    error_message = "committer_memory_mb must be between 256 and 10240."
  }
}

variable "committer_timeout_seconds" {
  description = "Committer timeout: above its lock wait (120 s). The commit queue's visibility timeout is 6x this."
  type        = number
  default     = 300
  validation {
    condition     = var.committer_timeout_seconds >= 150 && var.committer_timeout_seconds <= 900
    error_message = "committer_timeout_seconds must be between 150 and 900 (it must outlast the 120 s lock wait)."
  }
}

variable "committer_batch_size" {
  description = "Commit messages per committer invocation: more manifests per snapshot, fewer commits."
  type        = number
  default     = 1000
  validation {
    condition     = var.committer_batch_size >= 1 && var.committer_batch_size <= 10000
    error_message = "committer_batch_size must be between 1 and 10000."
  }
}

variable "committer_batching_window_seconds" {
  description = "How long the commit queue's event source gathers messages before invoking the committer (the floor of freshness)."
  type        = number
  default     = 5
  validation {
    condition     = var.committer_batching_window_seconds >= 0 && var.committer_batching_window_seconds <= 300
    error_message = "committer_batching_window_seconds must be between 0 and 300."
  }
}

variable "event_sources_enabled" {
  description = "Whether the SQS event sources feed the writer and the committer. False pauses the pipeline (messages wait in the queues), e.g. during an incident, or on an emulator that cannot run functions (moto), where `floe run-function` feeds them instead."
  type        = bool
  default     = true
}

variable "compactor_enabled" {
  description = "Deploy the compactor on an EventBridge schedule (LSM merges of small files; table maintenance runs in the committer either way)."
  type        = bool
  default     = true
}

variable "compactor_schedule" {
  description = "EventBridge schedule expression of compactor ticks."
  type        = string
  default     = "rate(5 minutes)"
  validation {
    condition     = can(regex("^(rate|cron)\\(.+\\)$", var.compactor_schedule))
    error_message = "compactor_schedule must be an EventBridge schedule expression: rate(...) or cron(...)."
  }
}

variable "compact_tables" {
  description = "Tables the compactor merges each tick (FLOE_COMPACT_TABLES). Empty: default_table."
  type        = list(string)
  default     = []
}

variable "compactor_max_tasks" {
  description = "Compaction tasks one compactor invocation runs at most (FLOE_COMPACT_MAX_TASKS): one share of a tick's plan. Keep a share's run shorter than the schedule's interval, or the next tick plans its partitions again and the second copy's work is wasted."
  type        = number
  default     = 6
  nullable    = false
  validation {
    condition     = var.compactor_max_tasks >= 1 && floor(var.compactor_max_tasks) == var.compactor_max_tasks
    error_message = "compactor_max_tasks must be a whole number of at least 1."
  }
}

variable "compactor_max_invocations" {
  description = "Compactor invocations a tick's plan may use at most (FLOE_COMPACT_MAX_INVOCATIONS): the tick plans every table of compact_tables, runs one share of at most compactor_max_tasks tasks itself and sends up to this many minus one to the share queue (across all the tables, each table's next share in turn), whose event source runs them side by side. Partitions beyond wait for the next tick, most urgent first. docs/PERFORMANCE.md models how many a workload needs."
  type        = number
  default     = 200
  nullable    = false
  validation {
    condition     = var.compactor_max_invocations >= 1 && var.compactor_max_invocations <= 1000 && floor(var.compactor_max_invocations) == var.compactor_max_invocations
    error_message = "compactor_max_invocations must be a whole number from 1 to 1000."
  }
}

variable "compactor_share_ttl_seconds" {
  description = "A share of a tick's plan that waited longer than this on the share queue is dropped unrun (FLOE_COMPACT_SHARE_TTL_SECS): keep it under compactor_schedule's interval, so that a share does not start after the next tick has planned its partitions again."
  type        = number
  default     = 240
  validation {
    condition     = var.compactor_share_ttl_seconds >= 1 && floor(var.compactor_share_ttl_seconds) == var.compactor_share_ttl_seconds
    error_message = "compactor_share_ttl_seconds must be a whole number of seconds, at least 1."
  }
}

variable "compactor_memory_mb" {
  description = "Compactor memory (MB); a task reads up to a quarter of it (at most 512 MiB)."
  type        = number
  default     = 3008
  validation {
    condition     = var.compactor_memory_mb >= 512 && var.compactor_memory_mb <= 10240
    error_message = "compactor_memory_mb must be between 512 and 10240."
  }
}

variable "compactor_timeout_seconds" {
  description = "Compactor timeout."
  type        = number
  default     = 900
  validation {
    condition     = var.compactor_timeout_seconds >= 60 && var.compactor_timeout_seconds <= 900
    error_message = "compactor_timeout_seconds must be between 60 and 900."
  }
}

variable "orphan_sweep_schedule" {
  description = "EventBridge schedule of the compactor's orphan sweep (deletes objects under table locations that no kept snapshot reaches, once older than orphan_sweep_older_than_hours). Null: no sweep, and the compactor's role gets no delete permission."
  type        = string
  default     = "rate(1 day)"
  validation {
    condition     = var.orphan_sweep_schedule == null || can(regex("^(rate|cron)\\(.+\\)$", coalesce(var.orphan_sweep_schedule, "x")))
    error_message = "orphan_sweep_schedule must be null or an EventBridge schedule expression."
  }
}

variable "orphan_sweep_older_than_hours" {
  description = "Age below which the sweep never deletes an unreferenced object (in-flight work). The committer refuses files older than this minus a day (half of it below 48; FLOE_MAX_COMMIT_AGE_HOURS) and sends their sources back to the writers, so no file is swept and then committed."
  type        = number
  default     = 360
  nullable    = false
  validation {
    condition     = var.orphan_sweep_older_than_hours >= 24 && floor(var.orphan_sweep_older_than_hours) == var.orphan_sweep_older_than_hours
    error_message = "orphan_sweep_older_than_hours must be a whole number of at least 24."
  }
}

variable "max_receive_count" {
  description = "Receives before a message moves to its queue's dead-letter queue."
  type        = number
  default     = 5
  validation {
    condition     = var.max_receive_count >= 2 && var.max_receive_count <= 1000
    error_message = "max_receive_count must be between 2 and 1000."
  }
}

variable "log_retention_days" {
  description = "CloudWatch log retention of the functions' log groups."
  type        = number
  default     = 30
  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be one of CloudWatch's retention values (1, 3, 5, 7, 14, 30, 60, 90, ...)."
  }
}

variable "log_level" {
  description = "RUST_LOG of the functions."
  type        = string
  default     = "info"
}

variable "freshness_alarm_seconds" {
  description = "Alarm when the commit queue's oldest message is older than this, or when the committer reports a freshness lag (object created to rows committed) longer than this: rows waiting that long to become visible."
  type        = number
  default     = 300
  validation {
    condition     = var.freshness_alarm_seconds >= 60
    error_message = "freshness_alarm_seconds must be at least 60."
  }
}

variable "alarm_actions" {
  description = "ARNs (SNS topics) notified when an alarm fires."
  type        = list(string)
  default     = []
}

variable "deletion_protection" {
  description = "DynamoDB deletion protection on the catalog, lock and ledger tables."
  type        = bool
  default     = true
}

variable "require_tls" {
  description = "Deny any request to the buckets and the queues not made over TLS. Only an emulator serving plain HTTP (moto, LocalStack) needs false."
  type        = bool
  default     = true
}

variable "aws_endpoint_url" {
  description = "For LocalStack or moto only: handed to the functions as AWS_ENDPOINT_URL. Null on AWS."
  type        = string
  default     = null
}

variable "aws_endpoint_url_dynamodb" {
  description = "For emulators only: DynamoDB's own endpoint, handed to the functions as AWS_ENDPOINT_URL_DYNAMODB (LocalStack without Docker serves no DynamoDB; moto can). Null: aws_endpoint_url."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}
}
