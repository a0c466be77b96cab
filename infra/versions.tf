terraform {
  required_version = ">= 1.7.0" # removed blocks (catalog.tf)

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 5.81: the first release with the aws_s3tables_* resources (catalog = "s3tables").
      version = ">= 5.81.0, < 7.0.0"
    }
  }
}
