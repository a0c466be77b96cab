"""Loads a table through PyIceberg's DynamoDB or Glue catalog, or from the metadata location an
S3 Tables table bucket names (PyIceberg has no S3 Tables catalog of its own: boto3 reads the
pointer, PyIceberg's StaticTable reads the table), on the emulator in AWS_ENDPOINT_URL, and checks that its event ids are exactly the expected ones (`--ids-file`), or
that its rows are exactly the expected ones (`--rows-file`, JSON lines). Called by
tests/it/aws.rs and tests/it/evolve.rs."""

import argparse
import json
import os
import sys
import uuid

from pyiceberg.catalog import load_catalog


def s3tables_table(bucket_arn: str, name: str, ep: str, region: str, io: dict):
    import boto3
    from pyiceberg.table import StaticTable

    namespace, table = name.split(".", 1)
    client = boto3.client("s3tables", endpoint_url=ep, region_name=region)
    got = client.get_table_metadata_location(tableBucketARN=bucket_arn, namespace=namespace, name=table)
    location = got["metadataLocation"]
    if not location.startswith(got["warehouseLocation"]):
        raise SystemExit(f"metadata {location} is outside the table's warehouse location {got['warehouseLocation']}")
    return StaticTable.from_metadata(location, properties=io)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--catalog", choices=["dynamodb", "glue", "s3tables", "rest"], default="dynamodb")
    p.add_argument("--catalog-table", required=True, help="DynamoDB table, the S3 table bucket ARN, or the REST catalog's URI [and ID:SECRET]")
    p.add_argument("--table", required=True)
    p.add_argument("--ids-file")
    p.add_argument("--rows-file")
    a = p.parse_args()
    ep = os.environ["AWS_ENDPOINT_URL"]
    os.environ.setdefault("AWS_ENDPOINT_URL_DYNAMODB", ep)
    region = os.environ.get("AWS_REGION", "us-east-1")
    io = {
        "s3.endpoint": ep,
        "s3.region": region,
        "s3.access-key-id": os.environ["AWS_ACCESS_KEY_ID"],
        "s3.secret-access-key": os.environ["AWS_SECRET_ACCESS_KEY"],
        "s3.force-virtual-addressing": "false",
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
    }
    if a.catalog == "s3tables":
        table = s3tables_table(a.catalog_table, a.table, ep, region, io)
    elif a.catalog == "rest":
        uri, _, credential = a.catalog_table.partition(" ")
        auth = {"credential": credential, "oauth2-server-uri": f"{uri}/v1/oauth/tokens"} if credential else {}
        table = load_catalog("floe", type="rest", uri=uri, **auth, **io).load_table(a.table)
    else:
        if a.catalog == "glue":
            kind = {"type": "glue", "glue.endpoint": ep, "glue.region": region}
        else:
            kind = {"type": "dynamodb", "table-name": a.catalog_table, "dynamodb.region": region}
        table = load_catalog("floe", **kind, **io).load_table(a.table)
    if a.rows_file:
        want = sorted((json.loads(line) for line in open(a.rows_file) if line.strip()), key=lambda r: json.dumps(r, sort_keys=True))
        got = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: json.dumps(r, sort_keys=True))
        if got != want:
            print(f"rows differ:\n got {got}\nwant {want}", file=sys.stderr)
            return 1
        print(f"ok: {len(got)} rows read through the {a.catalog} catalog")
        return 0
    got = table.scan().to_arrow().column("event_id").to_pylist()
    norm = [str(uuid.UUID(bytes=g)) if isinstance(g, bytes) else str(g) for g in got]
    want = [line.strip() for line in open(a.ids_file) if line.strip()]
    if len(norm) != len(set(norm)):
        print(f"duplicate rows: {len(norm)} rows, {len(set(norm))} distinct", file=sys.stderr)
        return 1
    if set(norm) != set(want):
        print(f"rows differ: {len(set(norm) - set(want))} unexpected, {len(set(want) - set(norm))} missing", file=sys.stderr)
        return 1
    print(f"ok: {len(norm)} rows read through the {a.catalog} catalog")
    return 0


if __name__ == "__main__":
    sys.exit(main())
