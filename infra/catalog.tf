# The DynamoDB tables (catalog in Iceberg Java's DynamoDbCatalog layout, the committer lock in
# DynamoDbLockManager's, the exactly-once ledger), Glue databases with catalog = "glue", or an
# S3 table bucket and its namespaces with catalog = "s3tables".
# On-demand capacity, point-in-time recovery. The functions are told not to create tables
# (FLOE_CREATE_DYNAMODB_TABLES=false), so their roles need no DescribeTable/CreateTable.

resource "aws_dynamodb_table" "catalog" {
  # checkov:skip=CKV_AWS_119:Encrypted at rest with DynamoDB's AWS-owned key by default; set kms_key_arn for a customer-managed key.
  count                       = var.catalog == "dynamodb" ? 1 : 0
  name                        = local.catalog_table
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "identifier"
  range_key                   = "namespace"
  deletion_protection_enabled = var.deletion_protection
  attribute {
    name = "identifier"
    type = "S"
  }
  attribute {
    name = "namespace"
    type = "S"
  }
  global_secondary_index {
    name            = "namespace-identifier"
    hash_key        = "namespace"
    range_key       = "identifier"
    projection_type = "KEYS_ONLY"
  }
  point_in_time_recovery {
    enabled = true
  }
  server_side_encryption {
    enabled     = var.kms_key_arn != null
    kms_key_arn = local.kms_key_arn
  }
  tags = var.tags
}

resource "aws_dynamodb_table" "lock" {
  # checkov:skip=CKV_AWS_119:Encrypted at rest with DynamoDB's AWS-owned key by default; set kms_key_arn for a customer-managed key.
  name                        = local.lock_table
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "entityId"
  deletion_protection_enabled = var.deletion_protection
  attribute {
    name = "entityId"
    type = "S"
  }
  point_in_time_recovery {
    enabled = true
  }
  server_side_encryption {
    enabled     = var.kms_key_arn != null
    kms_key_arn = local.kms_key_arn
  }
  tags = var.tags
}

resource "aws_dynamodb_table" "ledger" {
  # checkov:skip=CKV_AWS_119:Encrypted at rest with DynamoDB's AWS-owned key by default; set kms_key_arn for a customer-managed key.
  name                        = local.ledger_table
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "pk"
  deletion_protection_enabled = var.deletion_protection
  attribute {
    name = "pk"
    type = "S"
  }
  # Every ledger record carries expires_at (FLOE_LEDGER_TTL_DAYS): pending marks, landed records, quarantine.
  # Always stated, so that landing_expiration_days = null turns the TTL off (the provider leaves
  # it on when the block is only removed).
  ttl {
    attribute_name = "expires_at"
    enabled        = local.ledger_ttl_days != null
  }
  point_in_time_recovery {
    enabled = true
  }
  server_side_encryption {
    enabled     = var.kms_key_arn != null
    kms_key_arn = local.kms_key_arn
  }
  tags = var.tags
}

# Only when asked: a database that exists already (Athena's `default`) would fail the apply; by
# default the committer creates a missing one at its first commit.
resource "aws_glue_catalog_database" "created" {
  for_each    = var.catalog == "glue" && var.glue_create_databases ? toset(local.glue_databases) : toset([])
  name        = each.value
  description = "Iceberg tables landed by Floe (${var.name_prefix})"
  tags        = var.tags
}

# S3 Tables maintains the files of its tables itself (compaction, snapshot expiry, and the
# unreferenced-file removal configured here); Floe's committer then never deletes or expires.
resource "aws_s3tables_table_bucket" "tables" {
  count = var.catalog == "s3tables" ? 1 : 0
  name  = local.table_bucket
  maintenance_configuration = {
    iceberg_unreferenced_file_removal = {
      status = "enabled"
      settings = {
        unreferenced_days = var.s3tables_unreferenced_days
        non_current_days  = var.s3tables_noncurrent_days
      }
    }
  }
}

resource "aws_s3tables_namespace" "namespace" {
  for_each         = var.catalog == "s3tables" ? toset(var.s3tables_namespaces) : toset([])
  namespace        = each.value
  table_bucket_arn = aws_s3tables_table_bucket.tables[0].arn
}

# Deployments before glue_create_databases had their databases under this address, made by
# default. Forgotten, never destroyed: Glue's DeleteDatabase drops every table in it.
removed {
  from = aws_glue_catalog_database.namespace
  lifecycle {
    destroy = false
  }
}
