"""A recording HTTP proxy in front of moto: every request is forwarded unchanged, and each is
noted as the IAM action(s) it needs, with the resource and the condition keys IAM would see
(`s3:if-none-match`, `s3:prefix`, `dynamodb:LeadingKeys`, `dynamodb:Attributes`).

Point a process's AWS_ENDPOINT_URL at `Recorder.url` (the Rust SDK sends every service there,
S3 path-style) and read `Recorder.calls` afterwards. The service comes from the request's SigV4
credential scope; the action from the S3 method, path and query, or from the X-Amz-Target header
(SQS, DynamoDB, Glue: JSON protocols) or the `Action` form field (query protocol); the resource
from the bucket and key, the QueueUrl, the TableName, or the DatabaseName and table name.

A request it cannot name is recorded as `unknown:<what>`, never dropped: a test that checks
every call against a policy then fails on it instead of passing it by.
"""

import http.client
import json
import re
import threading
import urllib.parse
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "expect",
       "content-length"}

# Batch calls IAM authorises as their single-message action.
SQS_ACTIONS = {"SendMessageBatch": "SendMessage", "DeleteMessageBatch": "DeleteMessage",
               "ChangeMessageVisibilityBatch": "ChangeMessageVisibility"}

# Words of DynamoDB expressions that name no attribute.
EXPRESSION_WORDS = {"SET", "REMOVE", "ADD", "DELETE", "AND", "OR", "NOT", "BETWEEN", "IN", "attribute_exists",
                    "attribute_not_exists", "attribute_type", "begins_with", "contains", "size", "if_not_exists",
                    "list_append"}


class Call(tuple):
    """(action, resource, context): one IAM authorisation a request needs."""

    __slots__ = ()

    def __new__(cls, action, resource, context=None):
        return super().__new__(cls, (action, resource, dict(context or {})))

    action = property(lambda self: self[0])
    resource = property(lambda self: self[1])
    context = property(lambda self: self[2])


class Recorder:
    def __init__(self, upstream, region="us-east-1", account="123456789012"):
        self.upstream = urllib.parse.urlsplit(upstream)
        self.region, self.account = region, account
        self.calls, self.errors = [], []
        self._lock = threading.Lock()
        self._hash_keys = {}
        self._ddb = boto3.client("dynamodb", endpoint_url=upstream, region_name=region,
                                 aws_access_key_id="test", aws_secret_access_key="test")
        recorder = self

        class Handler(_Handler):
            pass

        Handler.recorder = recorder
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def add(self, calls):
        with self._lock:
            self.calls.extend(calls)

    # --- naming a request ---------------------------------------------------------------

    def name(self, method, path, headers, body):
        auth = headers.get("Authorization", "")
        scope = re.search(r"Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/aws4_request", auth)
        service = scope.group(2) if scope else None
        target = headers.get("X-Amz-Target")
        if service == "s3":
            return self._s3(method, path, headers, body)
        if target:
            prefix, action = target.split(".", 1)
            payload = json.loads(body or b"{}")
            return self._json(service or prefix, action, payload)
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace")) if body else {}
        if "Action" in form:
            payload = {k: v[0] for k, v in form.items()}
            return self._json(service, payload["Action"], payload)
        return [Call(f"unknown:{service}:{method} {path}", "*")]

    def _s3(self, method, path, headers, body):
        raw_path, _, query = path.partition("?")
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        bucket, _, key = raw_path.lstrip("/").partition("/")
        bucket, key = urllib.parse.unquote(bucket), urllib.parse.unquote(key)
        arn = f"arn:aws:s3:::{bucket}"
        obj = f"{arn}/{key}"
        sub = sorted(set(q) - {"list-type", "prefix", "delimiter", "continuation-token", "max-keys", "start-after",
                               "encoding-type", "fetch-owner", "x-id", "versionId", "partNumber", "uploadId"})
        if not key:
            if method == "GET" and (not sub or sub == ["versions"]) and "versions" not in q:
                prefix = q.get("prefix", [None])[0]
                return [Call("s3:ListBucket", arn, {"s3:prefix": prefix} if prefix is not None else {})]
            if method == "GET" and "versions" in q:
                return [Call("s3:ListBucketVersions", arn)]
            if method == "GET" and sub == ["location"]:
                return [Call("s3:GetBucketLocation", arn)]
            if method == "HEAD" and not sub:
                return [Call("s3:ListBucket", arn)]
            if method == "POST" and sub == ["delete"]:
                keys = [e.text for e in ET.fromstring(body).iter() if e.tag.endswith("Key")]
                return [Call("s3:DeleteObject", f"{arn}/{k}") for k in keys]
            return [Call(f"unknown:s3:{method} bucket?{'&'.join(sub)}", arn)]
        if sub:
            return [Call(f"unknown:s3:{method} object?{'&'.join(sub)}", obj)]
        versioned = "versionId" in q
        created = {"s3:if-none-match": headers["If-None-Match"]} if headers.get("If-None-Match") else {}
        if method in ("GET", "HEAD"):
            return [Call("s3:GetObjectVersion" if versioned else "s3:GetObject", obj)]
        if method == "PUT":
            calls = [Call("s3:PutObject", obj, created)]
            if headers.get("x-amz-copy-source"):
                src = urllib.parse.unquote(headers["x-amz-copy-source"].lstrip("/")).split("?")[0]
                calls.append(Call("s3:GetObject", f"arn:aws:s3:::{src}"))
            return calls
        if method == "POST" and ("uploads" in q or "uploadId" in q):
            return [Call("s3:PutObject", obj, created)]
        if method == "DELETE":
            if "uploadId" in q:
                return [Call("s3:AbortMultipartUpload", obj)]
            return [Call("s3:DeleteObjectVersion" if versioned else "s3:DeleteObject", obj)]
        return [Call(f"unknown:s3:{method} object", obj)]

    def _json(self, service, action, p):
        if service == "sqs":
            action = SQS_ACTIONS.get(action, action)
            if "QueueUrl" in p:
                account, name = p["QueueUrl"].rstrip("/").rsplit("/", 2)[-2:]
            else:
                account, name = p.get("QueueOwnerAWSAccountId") or self.account, p.get("QueueName", "?")
            return [Call(f"sqs:{action}", f"arn:aws:sqs:{self.region}:{account}:{name}")]
        if service == "dynamodb":
            return self._dynamodb(action, p)
        if service == "glue":
            catalog = p.get("CatalogId") or self.account
            base = f"arn:aws:glue:{self.region}:{catalog}"
            if action in ("GetDatabase", "CreateDatabase"):
                db = p.get("Name") or p.get("DatabaseInput", {}).get("Name")
                resources = [f"{base}:catalog", f"{base}:database/{db}"]
            else:
                db = p.get("DatabaseName")
                table = p.get("Name") or p.get("TableInput", {}).get("Name")
                resources = [f"{base}:catalog", f"{base}:database/{db}", f"{base}:table/{db}/{table}"]
            return [Call(f"glue:{action}", r) for r in resources]
        return [Call(f"unknown:{service}:{action}", "*")]

    def _hash_key(self, table):
        if table not in self._hash_keys:
            schema = self._ddb.describe_table(TableName=table)["Table"]["KeySchema"]
            self._hash_keys[table] = next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")
        return self._hash_keys[table]

    def _dynamodb(self, action, p):
        arn = lambda t: f"arn:aws:dynamodb:{self.region}:{self.account}:table/{t}"  # noqa: E731
        value = lambda av: next(iter(av.values()))  # noqa: E731
        if action == "BatchGetItem":
            return [Call(f"dynamodb:{action}", arn(t), {
                "dynamodb:LeadingKeys": sorted({value(k[self._hash_key(t)]) for k in ka["Keys"]})})
                for t, ka in p["RequestItems"].items()]
        if action == "BatchWriteItem":
            out = []
            for t, writes in p["RequestItems"].items():
                for w in writes:
                    kind, item = next(iter(w.items()))
                    key = item.get("Item") or item.get("Key")
                    out.append(Call("dynamodb:PutItem" if kind == "PutRequest" else "dynamodb:DeleteItem", arn(t),
                                    {"dynamodb:LeadingKeys": [value(key[self._hash_key(t)])]}))
            return out
        if action == "TransactWriteItems":
            out = []
            for item in p["TransactItems"]:
                kind, op = next(iter(item.items()))
                inner = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                         "ConditionCheck": "ConditionCheckItem"}[kind]
                out += self._dynamodb(inner, op)
            return out
        table = p.get("TableName", "?")
        context = {}
        key = p.get("Key") or p.get("Item")
        if key:
            context["dynamodb:LeadingKeys"] = [value(key[self._hash_key(table)])]
            names = set(key)
            aliases = p.get("ExpressionAttributeNames") or {}
            for field in ("UpdateExpression", "ConditionExpression", "ProjectionExpression"):
                names |= expression_attributes(p.get(field), aliases)
            context["dynamodb:Attributes"] = sorted(names)
        return [Call(f"dynamodb:{action}", arn(table), context)]


def expression_attributes(expression, aliases):
    """The top-level attribute names a DynamoDB expression names (`#x` resolved)."""
    if not expression:
        return set()
    out = set()
    for m in re.finditer(r"(?<![:#\w])(#?[A-Za-z_][A-Za-z0-9_]*)", expression):
        word = m.group(1)
        if word.startswith("#"):
            out.add(aliases[word])
        elif word not in EXPRESSION_WORDS and word.upper() not in EXPRESSION_WORDS:
            # Only the first segment of a path (a.b[0]) is a top-level attribute.
            before = expression[:m.start()].rstrip()
            if not before.endswith("."):
                out.add(word)
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    recorder = None

    def log_message(self, *args):
        pass

    def _body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _forward(self):
        rec = self.recorder
        body = self._body()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        if body or self.command in ("PUT", "POST"):
            headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(rec.upstream.hostname, rec.upstream.port, timeout=300)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        self.send_response_only(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        length = resp.getheader("Content-Length") if self.command == "HEAD" else str(len(data))
        self.send_header("Content-Length", length or "0")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        try:
            rec.add(rec.name(self.command, self.path, self.headers, body))
        except Exception as e:  # noqa: BLE001 - a request it could not name is a finding
            with rec._lock:
                rec.errors.append(f"{self.command} {self.path}: {e!r}")

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward
