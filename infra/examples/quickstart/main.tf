# Floe quickstart: the whole pipeline in one region, from the functions `make lambda` builds.
#
#   make deploy                      # cargo lambda build + terraform apply of this folder
#   make deploy-local                # the same against LocalStack or moto (AWS_ENDPOINT_URL)
#
# See README.md here for the variables and what to do next.

terraform {
  required_version = ">= 1.7.0"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.81.0, < 7.0.0"
    }
  }
}

locals {
  emulated = var.aws_endpoint_url != null
}

provider "aws" {
  # Null: AWS_REGION, AWS_DEFAULT_REGION or the profile's region, as the AWS CLI picks it.
  region = var.region

  # Against LocalStack or moto every service goes to one endpoint, with test credentials and
  # path-style S3; on AWS (aws_endpoint_url = null) these settings stay unset.
  s3_use_path_style           = local.emulated
  skip_credentials_validation = local.emulated
  skip_metadata_api_check     = local.emulated
  skip_requesting_account_id  = local.emulated
  skip_region_validation      = local.emulated

  endpoints {
    cloudwatch     = var.aws_endpoint_url
    cloudwatchlogs = var.aws_endpoint_url
    dynamodb       = var.aws_endpoint_url_dynamodb == null ? var.aws_endpoint_url : var.aws_endpoint_url_dynamodb
    events         = var.aws_endpoint_url
    glue           = var.aws_endpoint_url
    iam            = var.aws_endpoint_url
    kms            = var.aws_endpoint_url
    lambda         = var.aws_endpoint_url
    s3             = var.aws_endpoint_url
    sqs            = var.aws_endpoint_url
    sts            = var.aws_endpoint_url
  }

  default_tags {
    tags = { "floe:deployment" = var.name_prefix }
  }
}

module "floe" {
  source = "../.."

  name_prefix                         = var.name_prefix
  artifacts_dir                       = var.artifacts_dir
  architecture                        = var.architecture
  catalog                             = var.catalog
  glue_databases                      = var.glue_databases
  glue_create_databases               = var.glue_create_databases
  kms_key_arn                         = var.kms_key_arn
  warehouse_versioning                = var.warehouse_versioning
  ingest_senders                      = var.ingest_senders
  commit_senders                      = var.commit_senders
  check_sender_ids                    = var.check_sender_ids
  commit_sender_ids                   = var.commit_sender_ids
  s3tables_namespaces                 = var.s3tables_namespaces
  rest_uri                            = var.rest_uri
  rest_warehouse                      = var.rest_warehouse
  rest_token                          = var.rest_token
  rest_token_arn                      = var.rest_token_arn
  rest_credential_arn                 = var.rest_credential_arn
  rest_allow_http                     = var.rest_allow_http
  rest_credential                     = var.rest_credential
  rest_reader_token                   = var.rest_reader_token
  rest_reader_credential              = var.rest_reader_credential
  rest_reader_token_arn               = var.rest_reader_token_arn
  rest_reader_credential_arn          = var.rest_reader_credential_arn
  rest_readers_share_committer_secret = var.rest_readers_share_committer_secret
  rest_oauth2_server_uri              = var.rest_oauth2_server_uri
  rest_sigv4                          = var.rest_sigv4
  rest_signing_name                   = var.rest_signing_name
  default_table                       = var.default_table
  floe_toml                           = var.floe_toml_path == null ? null : file(var.floe_toml_path)
  routes                              = var.routes
  compact_tables                      = var.compact_tables
  force_destroy                       = var.force_destroy
  landing_expiration_days             = var.landing_expiration_days
  deletion_protection                 = var.deletion_protection
  # null passes the module's default (its throughput variables are not nullable).
  writer_batch_size              = var.writer_batch_size
  writer_batching_window_seconds = var.writer_batching_window_seconds
  expected_object_mb             = var.expected_object_mb
  committer_memory_mb            = var.committer_memory_mb
  committer_reserved_concurrency = var.committer_reserved_concurrency
  compactor_max_tasks            = var.compactor_max_tasks
  compactor_max_invocations      = var.compactor_max_invocations
  orphan_sweep_older_than_hours  = var.orphan_sweep_older_than_hours
  alarm_actions                  = var.alarm_actions
  event_sources_enabled          = var.event_sources_enabled
  committer_recursion_allowed    = var.committer_recursion_allowed == null ? !local.emulated : var.committer_recursion_allowed
  aws_endpoint_url               = var.aws_endpoint_url
  aws_endpoint_url_dynamodb      = var.aws_endpoint_url_dynamodb
  # Emulators serve plain HTTP; on AWS every request must use TLS.
  require_tls = var.require_tls == null ? !local.emulated : var.require_tls
}
