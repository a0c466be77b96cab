# The landing bucket (producers drop Avro here; versioned, so the writer reads the version a
# notification names) and the warehouse bucket (the Iceberg tables; versioned unless
# warehouse_versioning = false, so that a deleted table file can be restored for
# warehouse_noncurrent_days). Both: encrypted, public access blocked, bucket-owner-enforced,
# TLS only.

resource "aws_s3_bucket" "landing" {
  # checkov:skip=CKV_AWS_18:Access logging needs a log bucket of the user's choosing; enable it in your account baseline.
  # checkov:skip=CKV_AWS_144:Cross-region replication of raw landing files is a disaster-recovery choice, not Floe's.
  # checkov:skip=CKV2_AWS_62:Event notifications are configured (aws_s3_bucket_notification.landing); checkov does not link them.
  bucket        = local.landing_bucket
  force_destroy = var.force_destroy
  tags          = var.tags
  lifecycle {
    precondition {
      # S3's rule; the composed name (name_prefix, "-landing-", account id, region) can pass it.
      condition     = length(local.landing_bucket) >= 3 && length(local.landing_bucket) <= 63
      error_message = "The landing bucket's name, ${local.landing_bucket}, is ${length(local.landing_bucket)} characters; S3 allows 3 to 63. Shorten name_prefix or set landing_bucket_name."
    }
  }
}

resource "aws_s3_bucket" "warehouse" {
  # checkov:skip=CKV_AWS_18:Access logging needs a log bucket of the user's choosing; enable it in your account baseline.
  # checkov:skip=CKV_AWS_144:Cross-region replication of the tables is a disaster-recovery choice, not Floe's.
  # checkov:skip=CKV2_AWS_62:Nothing consumes warehouse events; Iceberg commits go through the catalog.
  bucket        = local.warehouse_bucket
  force_destroy = var.force_destroy
  tags          = var.tags
  lifecycle {
    precondition {
      # S3's rule; the composed name (name_prefix, "-warehouse-", account id, region) can pass it.
      condition     = length(local.warehouse_bucket) >= 3 && length(local.warehouse_bucket) <= 63
      error_message = "The warehouse bucket's name, ${local.warehouse_bucket}, is ${length(local.warehouse_bucket)} characters; S3 allows 3 to 63. Shorten name_prefix or set warehouse_bucket_name."
    }
  }
}

resource "aws_s3_bucket_versioning" "landing" {
  bucket = aws_s3_bucket.landing.id
  versioning_configuration {
    status = "Enabled"
  }
}

# A table file deleted by mistake (a bad run, a client with too much access) stays restorable
# for warehouse_noncurrent_days. Floe itself never overwrites an object here (create-only
# writes), so the old versions are the files it deleted: expired snapshots' and compacted ones.
resource "aws_s3_bucket_versioning" "warehouse" {
  count  = var.warehouse_versioning ? 1 : 0
  bucket = aws_s3_bucket.warehouse.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "bucket" {
  for_each = { landing = aws_s3_bucket.landing.id, warehouse = aws_s3_bucket.warehouse.id }
  bucket   = each.value
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = local.kms_key_arn
    }
    bucket_key_enabled = var.kms_key_arn != null
  }
}

resource "aws_s3_bucket_public_access_block" "bucket" {
  for_each                = { landing = aws_s3_bucket.landing.id, warehouse = aws_s3_bucket.warehouse.id }
  bucket                  = each.value
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "bucket" {
  for_each = { landing = aws_s3_bucket.landing.id, warehouse = aws_s3_bucket.warehouse.id }
  bucket   = each.value
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

data "aws_iam_policy_document" "tls_only" {
  for_each = var.require_tls ? { landing = aws_s3_bucket.landing.arn, warehouse = aws_s3_bucket.warehouse.arn } : {}
  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [each.value, "${each.value}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "bucket" {
  for_each = var.require_tls ? { landing = aws_s3_bucket.landing.id, warehouse = aws_s3_bucket.warehouse.id } : {}
  bucket   = each.value
  policy   = data.aws_iam_policy_document.tls_only[each.key].json
  # A bucket policy cannot be put while the public access block is being changed.
  depends_on = [aws_s3_bucket_public_access_block.bucket]
}

resource "aws_s3_bucket_lifecycle_configuration" "landing" {
  bucket = aws_s3_bucket.landing.id
  rule {
    id     = "old-versions"
    status = "Enabled"
    filter {}
    noncurrent_version_expiration {
      noncurrent_days = var.landing_noncurrent_version_days
    }
    expiration {
      expired_object_delete_marker = true
    }
    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }
  }
  dynamic "rule" {
    for_each = var.landing_expiration_days == null ? [] : [var.landing_expiration_days]
    content {
      id     = "landed-objects"
      status = "Enabled"
      filter {}
      expiration {
        days = rule.value
      }
      abort_incomplete_multipart_upload {
        days_after_initiation = 7
      }
    }
  }
  depends_on = [aws_s3_bucket_versioning.landing]
}

resource "aws_s3_bucket_lifecycle_configuration" "warehouse" {
  bucket = aws_s3_bucket.warehouse.id
  rule {
    id     = "claim-checks"
    status = "Enabled"
    filter {
      prefix = "${var.warehouse_prefix}/_floe/claims/"
    }
    expiration {
      days = var.claim_check_days
    }
  }
  rule {
    id     = "incomplete-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }
  }
  # With versioning: a deleted or overwritten object's old version lives
  # warehouse_noncurrent_days (claim checks' too: their expiry above leaves a delete marker over
  # the version this rule then removes), and a delete marker left alone goes with it.
  dynamic "rule" {
    for_each = var.warehouse_versioning ? [var.warehouse_noncurrent_days] : []
    content {
      id     = "old-versions"
      status = "Enabled"
      filter {}
      noncurrent_version_expiration {
        noncurrent_days = rule.value
      }
      expiration {
        expired_object_delete_marker = true
      }
      abort_incomplete_multipart_upload {
        days_after_initiation = 7
      }
    }
  }
  depends_on = [aws_s3_bucket_versioning.warehouse]
}

# The table configuration, read by every function through FLOE_CONFIG.
resource "aws_s3_object" "floe_toml" {
  count        = var.floe_toml == null ? 0 : 1
  bucket       = aws_s3_bucket.warehouse.id
  key          = local.config_key
  content      = var.floe_toml
  content_type = "application/toml"
  # Not etag: under SSE-KMS an object's ETag is no MD5 of its content, and the plan would
  # propose to upload it again forever.
  source_hash = md5(var.floe_toml)
  lifecycle {
    # The roles may use only glue_databases' Glue databases, which without a list are those of
    # default_table and compact_tables: a table the floe.toml routes elsewhere would be refused
    # (AccessDenied) on every batch.
    precondition {
      condition     = var.catalog != "glue" || var.glue_databases != null
      error_message = "With catalog = \"glue\" and a floe_toml, list in glue_databases every namespace its tables live in (the roles may use no other Glue database)."
    }
  }
  tags = var.tags
}

# ObjectCreated notifications, one filter per table route, to the ingest queue.
resource "aws_s3_bucket_notification" "landing" {
  bucket = aws_s3_bucket.landing.id
  dynamic "queue" {
    for_each = var.routes
    content {
      id        = "floe-route-${queue.key}"
      queue_arn = aws_sqs_queue.ingest.arn
      events    = ["s3:ObjectCreated:*"]
      # S3 matches filters against keys as its events encode them: a special character (`=` of a
      # Hive-style `dt=...` prefix, a space) must be given percent-encoded, `/` as it is.
      # (~ too, which urlencode keeps.)
      filter_prefix = queue.value.prefix == "" ? null : replace(replace(urlencode(queue.value.prefix), "%2F", "/"), "~", "%7E")
      filter_suffix = queue.value.suffix == "" ? null : replace(replace(urlencode(queue.value.suffix), "%2F", "/"), "~", "%7E")
    }
  }
  depends_on = [aws_sqs_queue_policy.queue]
  lifecycle {
    precondition {
      condition     = var.floe_toml == null ? true : alltrue([for r in var.routes : strcontains(var.floe_toml, "\"${r.prefix}\"")])
      error_message = "Each routes[*].prefix must be one of floe_toml's table prefixes (quoted there, e.g. prefixes = [\"events/\"]): a notified object no table claims is quarantined as unrouted."
    }
  }
}
