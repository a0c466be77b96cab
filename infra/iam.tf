# One role per function, least privilege:
#
# - writer: reads the landing bucket and table metadata, writes data files (create-only) and
#   claim checks, sends to the commit queue, reads the catalog, looks up and writes the
#   ledger's quarantine records. It cannot write metadata, change a catalog entry, touch the
#   lock or create a table: for a table it sees first it asks the committer (a create request).
# - committer: the only role that writes table metadata, creates and swaps catalog entries
#   and holds the lock; it deletes files of expired snapshots and rejected rewrites, and sends
#   the messages it refuses to its dead-letter queue.
# - compactor: reads metadata and data, writes data files (create-only), sends rewrite
#   requests, sends and receives the shares of its ticks' plans on its own queue; deletes only
#   with the orphan sweep on.
#
# Every function writes only its own log group. tests/python/test_infra.py checks these claims
# against `terraform show -json` of a plan, and every AWS call the functions make in its
# end-to-end run against them (recorded by a proxy in front of moto), and every grant against
# a call seen or one it lists with the reason it is not exercised. The queues' own policies
# (queues.tf) refuse sends from anyone else.

locals {
  # The Glue catalog, and the databases of glue_databases with their tables: no other.
  glue_arns = concat(
    ["arn:${local.partition}:glue:${local.region}:${local.account}:catalog"],
    [for d in local.glue_databases : "arn:${local.partition}:glue:${local.region}:${local.account}:database/${d}"],
    [for d in local.glue_databases : "arn:${local.partition}:glue:${local.region}:${local.account}:table/${d}/*"],
  )
  catalog_table_arn = "arn:${local.partition}:dynamodb:${local.region}:${local.account}:table/${local.catalog_table}"
  s3tables_tables   = "${local.table_bucket_arn}/table/*"
  sweep             = var.compactor_enabled && var.orphan_sweep_schedule != null
}

data "aws_iam_policy_document" "assume_lambda" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "function" {
  for_each           = local.deployed
  name               = "${each.value}-role"
  assume_role_policy = data.aws_iam_policy_document.assume_lambda.json
  tags               = var.tags
}

# --- shared statements --------------------------------------------------------------------

# Every function: list the warehouse (so a missing object is a 404, not a 403) and use the key.
# Unconditioned: S3 answers a GET or HEAD of a missing key 404 only if the caller may list the
# bucket, and that check carries no `s3:prefix`, so a prefix condition turned every "not found"
# into "access denied" (which Floe rightly reads as an error, not as a missing object). The
# warehouse bucket is this deployment's own; listing shows its keys, no contents.
data "aws_iam_policy_document" "every_function" {
  statement {
    sid       = "ListWarehouseSoMissingIsNotFound"
    actions   = ["s3:ListBucket"]
    resources = [local.warehouse_arn]
  }
  dynamic "statement" {
    for_each = var.kms_key_arn == null ? [] : [local.kms_key_arn]
    content {
      sid       = "UseKey"
      actions   = ["kms:Decrypt", "kms:GenerateDataKey"]
      resources = [statement.value]
    }
  }
}

# The REST catalog's secrets, named by ARN and read at the cold start: the committer's by the
# committer only, the reader's (or, where rest_readers_share_committer_secret allows it, the
# committer's) by the writer and the compactor. That secret only. (An SSM SecureString under
# the account's default key needs no key grant; under a customer key, the key's policy must let
# the roles decrypt.)
data "aws_iam_policy_document" "rest_secret" {
  for_each = { committer = values(local.rest_committer_arns), reader = values(local.rest_reader_arns) }
  dynamic "statement" {
    for_each = [for a in each.value : a if strcontains(a, ":secretsmanager:")]
    content {
      sid       = "ReadRestCatalogSecret${statement.key}"
      actions   = ["secretsmanager:GetSecretValue"]
      resources = [statement.value]
    }
  }
  dynamic "statement" {
    for_each = [for a in each.value : a if strcontains(a, ":ssm:")]
    content {
      sid       = "ReadRestCatalogParameter${statement.key}"
      actions   = ["ssm:GetParameter"]
      resources = [statement.value]
    }
  }
}

# The writer and the compactor: read tables and the catalog, create data files (never
# overwrite), hand them to the committer.
data "aws_iam_policy_document" "data_file_producer" {
  source_policy_documents = [data.aws_iam_policy_document.every_function.json, data.aws_iam_policy_document.rest_secret["reader"].json]
  statement {
    sid       = "ReadTablesAndConfig"
    actions   = ["s3:GetObject"]
    resources = [local.warehouse_objects]
  }
  statement {
    sid       = "CreateDataFilesAndClaimChecksOnly"
    actions   = ["s3:PutObject"]
    resources = [local.data_file_objects, local.claim_objects]
    # Create-only: every put must carry If-None-Match, so no existing object is overwritten.
    condition {
      test     = "Null"
      variable = "s3:if-none-match"
      values   = ["false"]
    }
  }
  statement {
    sid       = "SendToCommitQueue"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.commit.arn]
  }
  dynamic "statement" {
    for_each = var.catalog == "dynamodb" ? [1] : []
    content {
      sid       = "ReadCatalog"
      actions   = ["dynamodb:GetItem"]
      resources = [local.catalog_table_arn]
    }
  }
  dynamic "statement" {
    for_each = var.catalog == "glue" ? [1] : []
    content {
      # Loads tables only (GetTable); the committer creates them, and their databases.
      sid       = "ReadGlueCatalog"
      actions   = ["glue:GetTable"]
      resources = local.glue_arns
    }
  }
  dynamic "statement" {
    for_each = var.catalog == "s3tables" ? [1] : []
    content {
      # Reads the pointer and the table's files, writes data files into its storage.
      sid       = "ReadS3TablesAndWriteTableData"
      actions   = ["s3tables:GetTableMetadataLocation", "s3tables:GetTableData", "s3tables:PutTableData"]
      resources = [local.s3tables_tables]
    }
  }
}

# --- writer -------------------------------------------------------------------------------

data "aws_iam_policy_document" "writer" {
  source_policy_documents = [data.aws_iam_policy_document.data_file_producer.json]
  statement {
    sid       = "OwnLogGroup"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.function["writer"].arn}:*"]
  }
  statement {
    sid       = "ReadLandingObjects"
    actions   = ["s3:GetObject", "s3:GetObjectVersion"]
    resources = ["${aws_s3_bucket.landing.arn}/*"]
  }
  statement {
    sid       = "ListLandingSoMissingIsNotFound"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.landing.arn]
  }
  statement {
    sid = "ConsumeIngestQueue"
    # GetQueueUrl and ChangeMessageVisibility: a failed message is made visible again after a
    # delay that grows with its receive count (lambda/backoff.rs), not the whole timeout.
    actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl"]
    resources = [aws_sqs_queue.ingest.arn]
  }
  statement {
    sid       = "LookUpSources"
    actions   = ["dynamodb:BatchGetItem"]
    resources = [aws_dynamodb_table.ledger.arn]
  }
  statement {
    sid       = "WriteQuarantineRecordsOnly"
    actions   = ["dynamodb:PutItem"]
    resources = [aws_dynamodb_table.ledger.arn]
    condition {
      test     = "ForAllValues:StringLike"
      variable = "dynamodb:LeadingKeys"
      values   = ["quarantine|*"]
    }
  }
  statement {
    # A committed source sent again restarts its record's time to live and its snapshot's
    # (Ledger::keep): an UpdateItem that may name no attribute but the key and `expires_at`, so
    # the writer can never forge a record's state.
    sid       = "RestartLedgerTimeToLiveOnly"
    actions   = ["dynamodb:UpdateItem"]
    resources = [aws_dynamodb_table.ledger.arn]
    condition {
      test     = "ForAllValues:StringEquals"
      variable = "dynamodb:Attributes"
      values   = ["pk", "expires_at"]
    }
    condition {
      test     = "Null"
      variable = "dynamodb:Attributes"
      values   = ["false"]
    }
  }
}

# --- committer ----------------------------------------------------------------------------

data "aws_iam_policy_document" "committer" {
  source_policy_documents = [data.aws_iam_policy_document.every_function.json, data.aws_iam_policy_document.rest_secret["committer"].json]
  statement {
    sid       = "OwnLogGroup"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.function["committer"].arn}:*"]
  }
  statement {
    sid       = "TableFilesAndMaintenance"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
    resources = [local.warehouse_objects]
  }
  statement {
    sid       = "ConsumeCommitQueue"
    actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl", "sqs:SendMessage"]
    resources = [aws_sqs_queue.commit.arn]
  }
  statement {
    sid       = "RequeueOverlappingSources"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.ingest.arn]
  }
  statement {
    # A message the committer refuses (FLOE_DLQ_URL) goes to its dead-letter queue with the reason.
    sid       = "SendRefusalsToDeadLetterQueue"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.commit_dlq.arn]
  }
  statement {
    # DynamoDbLock: a conditional PutItem takes a lease, UpdateItem renews it, DeleteItem
    # releases it; it never reads an item.
    sid       = "HoldTheLock"
    actions   = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"]
    resources = [aws_dynamodb_table.lock.arn]
  }
  statement {
    # DynamoDbLedger: BatchGetItem looks sources up, UpdateItem marks them and records landed
    # snapshots.
    sid       = "ExactlyOnceLedger"
    actions   = ["dynamodb:BatchGetItem", "dynamodb:UpdateItem"]
    resources = [aws_dynamodb_table.ledger.arn]
  }
  dynamic "statement" {
    for_each = var.catalog == "dynamodb" ? [1] : []
    content {
      sid       = "CreateAndSwapTablePointers"
      actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
      resources = [local.catalog_table_arn]
    }
  }
  dynamic "statement" {
    for_each = var.catalog == "glue" ? [1] : []
    content {
      sid       = "CreateAndSwapGlueTables"
      actions   = ["glue:GetTable", "glue:CreateTable", "glue:UpdateTable", "glue:GetDatabase", "glue:CreateDatabase"]
      resources = local.glue_arns
    }
  }
  dynamic "statement" {
    for_each = var.catalog == "s3tables" ? [1] : []
    content {
      sid       = "CreateAndSwapS3Tables"
      actions   = ["s3tables:GetTableMetadataLocation", "s3tables:UpdateTableMetadataLocation", "s3tables:GetTableData", "s3tables:PutTableData"]
      resources = [local.s3tables_tables]
    }
  }
  dynamic "statement" {
    for_each = var.catalog == "s3tables" ? [1] : []
    content {
      sid       = "CreateS3TablesNamespacesAndTables"
      actions   = ["s3tables:CreateNamespace", "s3tables:CreateTable"]
      resources = [local.table_bucket_arn]
    }
  }
}

# --- compactor ----------------------------------------------------------------------------

data "aws_iam_policy_document" "compactor" {
  source_policy_documents = [data.aws_iam_policy_document.data_file_producer.json]
  statement {
    sid       = "OwnLogGroup"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["arn:${local.partition}:logs:${local.region}:${local.account}:log-group:/aws/lambda/${local.functions.compactor}:*"]
  }
  dynamic "statement" {
    for_each = aws_sqs_queue.share[*].arn
    content {
      sid       = "SendShares"
      actions   = ["sqs:SendMessage"]
      resources = [statement.value]
    }
  }
  dynamic "statement" {
    for_each = aws_sqs_queue.share[*].arn
    content {
      sid       = "ReceiveShares"
      actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl"]
      resources = [statement.value]
    }
  }
  dynamic "statement" {
    # Not with S3 Tables: its tables' files live in its own storage, which refuses deletes, and
    # the sweep does not run there (the tables' unreferenced-file removal does that work).
    for_each = local.sweep && var.catalog != "s3tables" ? [1] : []
    content {
      sid       = "OrphanSweep"
      actions   = ["s3:DeleteObject"]
      resources = [local.data_objects, local.metadata_objects]
    }
  }
}

resource "aws_iam_role_policy" "function" {
  for_each = local.deployed
  name     = "${each.value}-least-privilege"
  role     = aws_iam_role.function[each.key].id
  policy = {
    writer    = data.aws_iam_policy_document.writer.json
    committer = data.aws_iam_policy_document.committer.json
    compactor = data.aws_iam_policy_document.compactor.json
  }[each.key]
}
