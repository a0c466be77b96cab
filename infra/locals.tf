data "aws_caller_identity" "current" {}
data "aws_region" "current" {}
data "aws_partition" "current" {}

# kms_key_arn given as an alias ARN: the key it names. IAM grants on an alias ARN do not cover
# the key (a role granted kms:Decrypt on alias/x is refused on the key at run time), and some
# services (CloudWatch Logs, Lambda) take only a key ARN: the module uses local.kms_key_arn,
# the key's ARN, everywhere.
data "aws_kms_alias" "key" {
  count = local.kms_alias == null ? 0 : 1
  name  = local.kms_alias
  lifecycle {
    precondition {
      # An alias is looked up in the provider's account and region only.
      condition     = startswith(var.kms_key_arn, "arn:${local.partition}:kms:${local.region}:${local.account}:alias/")
      error_message = "kms_key_arn ${var.kms_key_arn} is an alias of another account or region, which the module cannot resolve: give the key's ARN (aws kms describe-key --key-id <alias ARN> --query KeyMetadata.Arn)."
    }
  }
}

locals {
  account   = data.aws_caller_identity.current.account_id
  region    = data.aws_region.current.name
  partition = data.aws_partition.current.partition

  # "alias/NAME" when kms_key_arn is an alias ARN, else null; the key's own ARN either way.
  kms_alias   = var.kms_key_arn == null ? null : try(regex(":(alias/.+)$", var.kms_key_arn)[0], null)
  kms_key_arn = local.kms_alias == null ? var.kms_key_arn : data.aws_kms_alias.key[0].target_key_arn

  # The committer's reservation, 0 for none (functions.tf).
  committer_reserved = coalesce(var.committer_reserved_concurrency, 0)

  landing_bucket   = coalesce(var.landing_bucket_name, "${var.name_prefix}-landing-${local.account}-${local.region}")
  warehouse_bucket = coalesce(var.warehouse_bucket_name, "${var.name_prefix}-warehouse-${local.account}-${local.region}")
  warehouse_uri    = "s3://${local.warehouse_bucket}/${var.warehouse_prefix}"
  # Object ARNs under the warehouse prefix. Table locations are <prefix>/<namespace>.db/<table>.
  warehouse_arn     = "arn:${local.partition}:s3:::${local.warehouse_bucket}"
  warehouse_objects = "${local.warehouse_arn}/${var.warehouse_prefix}/*"
  data_objects      = "${local.warehouse_arn}/${var.warehouse_prefix}/*/data/*"
  # What writers and compactors create: Parquet data files only (so not, under a table named
  # `data`, `<ns>.db/data/metadata/...`, which `*/data/*` would match).
  data_file_objects = "${local.warehouse_arn}/${var.warehouse_prefix}/*/data/*.parquet"
  metadata_objects  = "${local.warehouse_arn}/${var.warehouse_prefix}/*/metadata/*"
  claim_objects     = "${local.warehouse_arn}/${var.warehouse_prefix}/_floe/claims/*"
  config_key        = "${var.warehouse_prefix}/_floe/floe.toml"

  functions = {
    writer    = "${var.name_prefix}-writer"
    committer = "${var.name_prefix}-committer"
    compactor = "${var.name_prefix}-compactor"
  }
  deployed = var.compactor_enabled ? local.functions : { for k, v in local.functions : k => v if k != "compactor" }

  catalog_table = "${var.name_prefix}_iceberg"
  # The table bucket's ARN is known before it exists, so the roles' policies are too.
  table_bucket     = "${var.name_prefix}-tables"
  table_bucket_arn = "arn:${local.partition}:s3tables:${local.region}:${local.account}:bucket/${local.table_bucket}"
  lock_table       = "${var.name_prefix}_locks"
  ledger_table     = "${var.name_prefix}_ledger"

  # The writer's peak memory is about 3x the Avro bytes it holds decoded plus 100 MB
  # (docs/BENCHMARKS.md#memory): one batch's, up to a round's (FLOE_WRITER_ROUND_BYTES, which the
  # writer derives from its memory the other way round). Rounded up to 64 MB, at least 1024 MB,
  # and at most 2048 MB: past one vCPU (1769 MB) memory buys a writer nothing it uses, and bigger
  # batches then make more rounds. Unless one object needs more: the per-object size limit is an
  # eighth of the memory (FLOE_MAX_OBJECT_BYTES), so the cap is at least 8 objects + 100 MB.
  writer_memory = coalesce(
    var.writer_memory_mb,
    min(
      max(2048, ceil((8 * var.expected_object_mb + 100) / 64) * 64),
      max(1024, ceil((3 * var.writer_batch_size * var.expected_object_mb + 100) / 64) * 64),
      10240,
    ),
  )

  # The Glue databases the roles may use (and Terraform creates with glue_create_databases).
  glue_databases = var.glue_databases != null ? var.glue_databases : distinct(concat(
    [split(".", var.default_table)[0]],
    [for t in var.compact_tables : split(".", t)[0]],
  ))

  # Ledger records live as long as anything may send their object again: past the landing
  # object's expiry, the life of its old version (a notification names a version), and a week
  # for S3's lifecycle to act (it runs late, never early).
  ledger_ttl_days = var.landing_expiration_days == null ? null : var.landing_expiration_days + var.landing_noncurrent_version_days + 7

  # Every function's environment: the same variables the README documents.
  common_env = merge(
    {
      FLOE_WAREHOUSE              = local.warehouse_uri
      FLOE_CATALOG                = var.catalog
      FLOE_LOCK_TABLE             = local.lock_table
      FLOE_LEDGER_TABLE           = local.ledger_table
      FLOE_COMMIT_QUEUE_URL       = aws_sqs_queue.commit.url
      FLOE_CREATE_DYNAMODB_TABLES = "false"
      FLOE_DEFAULT_TABLE          = var.default_table
      RUST_LOG                    = var.log_level
    },
    local.ledger_ttl_days == null ? {} : { FLOE_LEDGER_TTL_DAYS = tostring(local.ledger_ttl_days) },
    var.catalog == "dynamodb" ? { FLOE_CATALOG_TABLE = local.catalog_table } : {},
    var.catalog == "s3tables" ? {
      FLOE_S3TABLES_BUCKET_ARN  = local.table_bucket_arn
      FLOE_MAX_COMMIT_AGE_HOURS = tostring((var.s3tables_unreferenced_days - 1) * 24)
    } : {},
    # The orphan sweep deletes unreferenced files older than its safety age, so the committer
    # must never commit a file that old: files past the limit go back to the writers. The limit
    # is a day under the sweep's age (half of it below 48 hours); the compactor refuses a sweep
    # that leaves less than 6 hours between the two. S3 Tables is not swept (it has its own limit).
    var.catalog != "s3tables" && var.orphan_sweep_schedule != null ? {
      FLOE_MAX_COMMIT_AGE_HOURS = tostring(floor(max(var.orphan_sweep_older_than_hours - 24, var.orphan_sweep_older_than_hours / 2)))
    } : {},
    # A REST catalog's settings, but not its secrets (rest_env_secrets, merged in only where
    # the functions are defined, so that function_environments never shows them).
    var.catalog == "rest" ? { for k, v in {
      FLOE_REST_URI               = var.rest_uri
      FLOE_REST_WAREHOUSE         = var.rest_warehouse
      FLOE_REST_OAUTH2_SERVER_URI = var.rest_oauth2_server_uri
      FLOE_REST_SCOPE             = var.rest_scope
      FLOE_REST_SIGV4             = var.rest_sigv4 ? "true" : null
      FLOE_REST_SIGNING_NAME      = var.rest_sigv4 ? var.rest_signing_name : null
      FLOE_REST_SIGNING_REGION    = var.rest_sigv4 ? local.region : null
      FLOE_REST_ALLOW_HTTP        = var.rest_allow_http ? "true" : null
    } : k => v if v != null } : {},
    # FLOE_CONFIG_MD5 changes the functions' configuration when floe_toml changes, so that no
    # warm function keeps routing by the configuration it read at its cold start.
    var.floe_toml == null ? {} : {
      FLOE_CONFIG     = "s3://${local.warehouse_bucket}/${local.config_key}"
      FLOE_CONFIG_MD5 = md5(var.floe_toml)
    },
    var.aws_endpoint_url == null ? {} : { AWS_ENDPOINT_URL = var.aws_endpoint_url },
    var.aws_endpoint_url_dynamodb == null ? {} : { AWS_ENDPOINT_URL_DYNAMODB = var.aws_endpoint_url_dynamodb },
  )
  # The REST catalog's secrets (sensitive variables), only in the functions' environment: the
  # committer's, and the writer's and compactor's (which only load tables), the reader
  # credential when one is given.
  rest_committer_secrets = var.catalog != "rest" ? {} : merge(
    var.rest_token == null ? {} : { FLOE_REST_TOKEN = var.rest_token },
    var.rest_credential == null ? {} : { FLOE_REST_CREDENTIAL = var.rest_credential },
  )
  rest_reader_secrets = var.catalog != "rest" ? {} : (
    !local.rest_reader_given ? local.rest_committer_secrets : merge(
      var.rest_reader_token == null ? {} : { FLOE_REST_TOKEN = var.rest_reader_token },
      var.rest_reader_credential == null ? {} : { FLOE_REST_CREDENTIAL = var.rest_reader_credential },
    )
  )
  # Secrets by ARN, read at the cold start: the committer's (only its role may read them), and
  # the writer's and compactor's, the reader secret when one is given (only their roles may read
  # it), else the committer's where rest_readers_share_committer_secret allows it.
  # (Whether a sensitive variable is set is not itself secret.)
  rest_reader_given = var.rest_reader_token_arn != null || var.rest_reader_credential_arn != null || nonsensitive(var.rest_reader_token != null || var.rest_reader_credential != null)
  rest_committer_arns = var.catalog != "rest" ? {} : { for k, v in {
    FLOE_REST_TOKEN_ARN      = var.rest_token_arn
    FLOE_REST_CREDENTIAL_ARN = var.rest_credential_arn
  } : k => v if v != null }
  rest_reader_arns = var.catalog != "rest" ? {} : !local.rest_reader_given ? local.rest_committer_arns : { for k, v in {
    FLOE_REST_TOKEN_ARN      = var.rest_reader_token_arn
    FLOE_REST_CREDENTIAL_ARN = var.rest_reader_credential_arn
  } : k => v if v != null }
  environments = {
    writer = merge(local.common_env, local.rest_reader_arns, {
      FLOE_TABLE_CACHE_SECS = tostring(var.table_cache_seconds)
      FLOE_CREATE_WAIT_SECS = tostring(var.create_wait_seconds)
    })
    committer = merge(
      local.common_env,
      local.rest_committer_arns,
      # The committer takes rewrite requests only for the tables the compactor compacts.
      length(var.compact_tables) == 0 ? {} : { FLOE_COMPACT_TABLES = join(",", var.compact_tables) },
      {
        FLOE_INGEST_QUEUE_URL = aws_sqs_queue.ingest.url
        # Where the committer sends a message it refuses (it will never commit it), with the reason.
        FLOE_DLQ_URL = aws_sqs_queue.commit_dlq.url
      },
      # Who may send which messages: appends and creates the writer, rewrites the compactor.
      var.check_sender_ids ? {
        FLOE_APPEND_SENDERS   = join(",", concat([aws_iam_role.function["writer"].unique_id], var.commit_sender_ids))
        FLOE_REWRITE_SENDERS  = join(",", [for k in ["compactor"] : aws_iam_role.function[k].unique_id if contains(keys(local.deployed), k)])
        FLOE_COMMITTER_SENDER = aws_iam_role.function["committer"].unique_id
    } : {})
    compactor = merge(
      local.common_env,
      local.rest_reader_arns,
      length(var.compact_tables) == 0 ? {} : { FLOE_COMPACT_TABLES = join(",", var.compact_tables) },
      {
        # (Not a conditional: over a URL unknown until the queue exists, it would hide the whole
        # environment from the plan. Without the compactor the function is not deployed.)
        FLOE_COMPACT_SHARE_QUEUE_URL = one(aws_sqs_queue.share[*].url)
        FLOE_COMPACT_MAX_INVOCATIONS = tostring(var.compactor_max_invocations)
        FLOE_COMPACT_MAX_TASKS       = tostring(var.compactor_max_tasks)
        FLOE_COMPACT_SHARE_TTL_SECS  = tostring(var.compactor_share_ttl_seconds)
      },
    )
  }
  memory = {
    writer    = local.writer_memory
    committer = var.committer_memory_mb
    compactor = var.compactor_memory_mb
  }
  timeout = {
    writer    = var.writer_timeout_seconds
    committer = var.committer_timeout_seconds
    compactor = var.compactor_timeout_seconds
  }
  binaries = {
    writer    = "floe-writer"
    committer = "floe-committer"
    compactor = "floe-compactor"
  }
}
