"""An Iceberg REST catalog for the tests: the REST protocol over PyIceberg's SQL catalog.

No REST catalog server installs from the registries this machine reaches and starts without
Docker or a JVM (see docs/ARCHITECTURE.md, "Iceberg REST catalogs"), so the tests run this
one. It follows the REST spec's routes and error model, and leaves every table decision to
PyIceberg, an implementation independent of Floe: requirements are validated and updates
applied by `pyiceberg.table.update`, metadata.json is written by PyIceberg, and the pointer is
swapped in SQLite with a compare-and-set on the previous location.

    python server.py --db catalog.db --warehouse file:///tmp/wh [--port 0] [--prefix P]
                     [--token T | --client ID:SECRET [--token-lifetime S] | --sigv4 SERVICE:REGION]

It prints `listening on PORT` once it serves. Besides the spec's routes it has two for tests:
`POST /test/faults` (`{"lose_answers": n}`: the next n commits land but answer 500;
`{"fail_before": n}`: the next n commits answer 503 without landing; `{"race": n}`: before each
of the next n commits to a table with a snapshot another writer commits a snapshot first; `{"revoke_tokens": true}`) and
`GET /test/stats` (commits landed, conflicts, idempotent replays, tokens issued).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.table import CommitTableRequest
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.update import AddSnapshotUpdate, AssertRefSnapshotId, SetSnapshotRefUpdate


class Failure(Exception):
    """An error answer in the REST spec's shape."""

    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


class State:
    """The catalog, the tokens issued, test faults and counters; one lock for commits."""

    def __init__(self, args: argparse.Namespace):
        props = {"uri": f"sqlite:///{args.db}", "warehouse": args.warehouse}
        endpoint = os.environ.get("AWS_ENDPOINT_URL")
        if endpoint:
            props.update({
                "s3.endpoint": endpoint,
                "s3.access-key-id": os.environ.get("AWS_ACCESS_KEY_ID", "test"),
                "s3.secret-access-key": os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
                "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
                "s3.force-virtual-addressing": "false",
                "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
            })
        self.catalog = SqlCatalog("rest", **props)
        self.args = args
        self.lock = threading.Lock()
        self.tokens: dict[str, float] = {}
        self.faults = {"lose_answers": 0, "fail_before": 0, "race": 0}
        self.stats = {"commits": 0, "conflicts": 0, "replays": 0, "tokens_issued": 0, "lost_answers": 0,
                      "signed": 0}
        self.answers: dict[str, tuple[int, dict]] = {}


def table_result(table) -> dict:
    return {
        "metadata-location": table.metadata_location,
        "metadata": json.loads(table.metadata.model_dump_json()),
        "config": {},
    }


class Handler(BaseHTTPRequestHandler):
    state: State
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):  # quiet unless asked
        if os.environ.get("REST_CATALOG_LOG"):
            sys.stderr.write("rest-catalog: " + fmt % a + "\n")

    # -- plumbing -------------------------------------------------------------------------

    def answer(self, status: int, body: dict | None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self) -> dict:
        raw = self._raw
        if self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
            return {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        try:
            return json.loads(raw or b"{}")
        except json.JSONDecodeError as e:
            raise Failure(400, "BadRequestException", f"body is not JSON: {e}") from e

    def authorize(self, path: str, body: bytes) -> None:
        args = self.state.args
        if path in ("/v1/oauth/tokens",) or path.startswith("/test/"):
            return
        if args.sigv4:
            return self.check_signature(body)
        if not args.token and not args.client:
            return
        got = self.headers.get("Authorization", "")
        token = got[len("Bearer "):] if got.startswith("Bearer ") else None
        if args.token and token == args.token:
            return
        if args.client and token in self.state.tokens and self.state.tokens[token] > time.time():
            return
        raise Failure(401, "NotAuthorizedException", "missing, unknown or expired bearer token")

    def check_signature(self, body: bytes) -> None:
        """Recomputes the request's SigV4 signature with botocore (AWS's Python signer) from the
        credentials in this process's environment, and refuses a request it does not match."""
        service, region = self.state.args.sigv4.split(":")
        got = self.headers.get("Authorization", "")
        if not got.startswith("AWS4-HMAC-SHA256 "):
            raise Failure(403, "NotAuthorizedException", "not a SigV4 request")
        parts = dict(p.strip().split("=", 1) for p in got[len("AWS4-HMAC-SHA256 "):].split(","))
        signed = parts["SignedHeaders"].split(";")
        headers = {h: self.headers.get(h) for h in signed}
        request = AWSRequest(method=self.command, url=f"http://{self.headers['Host']}{self.path}", data=body,
                             headers=headers)
        request.context["timestamp"] = self.headers.get("X-Amz-Date", "")
        creds = Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"],
                            os.environ.get("AWS_SESSION_TOKEN"))
        auth = SigV4Auth(creds, service, region)
        want = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
        scope = parts["Credential"].split("/", 1)[1]
        if parts["Signature"] != want or scope != f"{request.context['timestamp'][:8]}/{region}/{service}/aws4_request":
            raise Failure(403, "NotAuthorizedException", "SigV4 signature does not match")
        self.state.stats["signed"] += 1

    def route(self, method: str) -> None:
        url = urlparse(self.path)
        try:
            self._raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.authorize(url.path, self._raw)
            status, body = self.dispatch(method, url.path, parse_qs(url.query))
            self.answer(status, body)
        except Failure as f:
            self.answer(f.status, {"error": {"message": f.message, "type": f.kind, "code": f.status}})
        except (NoSuchTableError, NoSuchNamespaceError) as e:
            kind = "NoSuchTableException" if isinstance(e, NoSuchTableError) else "NoSuchNamespaceException"
            self.answer(404, {"error": {"message": str(e), "type": kind, "code": 404}})
        except (TableAlreadyExistsError, NamespaceAlreadyExistsError) as e:
            self.answer(409, {"error": {"message": str(e), "type": "AlreadyExistsException", "code": 409}})
        except CommitFailedException as e:
            self.state.stats["conflicts"] += 1
            self.answer(409, {"error": {"message": str(e), "type": "CommitFailedException", "code": 409}})
        except (ValueError, KeyError, TypeError) as e:
            self.answer(400, {"error": {"message": f"{type(e).__name__}: {e}", "type": "BadRequestException", "code": 400}})

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")

    def do_HEAD(self):
        self.route("HEAD")

    # -- routes ---------------------------------------------------------------------------

    def dispatch(self, method: str, path: str, query: dict) -> tuple[int, dict | None]:
        s = self.state
        if path == "/v1/config" and method == "GET":
            overrides = {"prefix": s.args.prefix} if s.args.prefix else {}
            return 200, {"defaults": {}, "overrides": overrides, "idempotency-key-lifetime": "PT1H"}
        if path == "/v1/oauth/tokens" and method == "POST":
            return self.issue_token(self.body())
        if path == "/test/faults" and method == "POST":
            b = self.body()
            if b.pop("revoke_tokens", False):
                s.tokens.clear()
            s.faults.update({k: int(v) for k, v in b.items()})
            return 200, dict(s.faults)
        if path == "/test/stats" and method == "GET":
            return 200, dict(s.stats)
        parts = [unquote(p) for p in path.split("/") if p][1:]  # after "v1"
        if s.args.prefix:
            if not parts or parts[0] != s.args.prefix:
                raise Failure(404, "NotFoundException", f"no route {path} (prefix is {s.args.prefix})")
            parts = parts[1:]
        return self.catalog_route(method, parts)

    def catalog_route(self, method: str, parts: list[str]) -> tuple[int, dict | None]:
        c = self.state.catalog
        if parts == ["namespaces"] and method == "POST":
            b = self.body()
            c.create_namespace(tuple(b["namespace"]), b.get("properties") or {})
            return 200, {"namespace": b["namespace"], "properties": b.get("properties") or {}}
        if parts == ["namespaces"] and method == "GET":
            return 200, {"namespaces": [list(n) for n in c.list_namespaces()]}
        if len(parts) == 2 and parts[0] == "namespaces" and method == "GET":
            ns = tuple(parts[1].split("\x1f"))
            return 200, {"namespace": list(ns), "properties": c.load_namespace_properties(ns)}
        if len(parts) == 3 and parts[0] == "namespaces" and parts[2] == "register" and method == "POST":
            b = self.body()
            t = c.register_table((parts[1], b["name"]), b["metadata-location"])
            return 200, table_result(t)
        if len(parts) == 3 and parts[0] == "namespaces" and parts[2] == "tables" and method == "GET":
            return 200, {"identifiers": [{"namespace": [parts[1]], "name": n[-1]} for n in c.list_tables(parts[1])]}
        if len(parts) == 4 and parts[0] == "namespaces" and parts[2] == "tables":
            ident = (parts[1], parts[3])
            if method in ("GET", "HEAD"):
                t = c.load_table(ident)
                return (200, table_result(t)) if method == "GET" else (204, None)
            if method == "POST":
                return self.commit(ident, self.body())
            if method == "DELETE":
                c.drop_table(ident)
                return 204, None
        raise Failure(404, "NotFoundException", f"no route {method} /{'/'.join(parts)}")

    def issue_token(self, form: dict) -> tuple[int, dict]:
        """OAuth2 client credentials; errors in OAuth2's shape (RFC 6749 section 5.2)."""
        want = self.state.args.client
        if not want or form.get("grant_type") != "client_credentials":
            return 400, {"error": "invalid_request", "error_description": "client credentials not configured or not asked for"}
        if f"{form.get('client_id')}:{form.get('client_secret')}" != want:
            return 401, {"error": "invalid_client", "error_description": "unknown client or wrong secret"}
        token = secrets.token_hex(16)
        self.state.tokens[token] = time.time() + self.state.args.token_lifetime
        self.state.stats["tokens_issued"] += 1
        return 200, {"access_token": token, "token_type": "bearer", "expires_in": self.state.args.token_lifetime}

    def commit(self, ident: tuple[str, str], body: dict) -> tuple[int, dict]:
        s = self.state
        key = self.headers.get("Idempotency-Key")
        with s.lock:
            if key and key in s.answers:
                s.stats["replays"] += 1
                return s.answers[key]
            if s.faults["fail_before"] > 0:
                s.faults["fail_before"] -= 1
                raise Failure(503, "ServiceUnavailableException", "injected: commit refused before landing")
            request = CommitTableRequest.model_validate({**body, "identifier": {"namespace": [ident[0]], "name": ident[1]}})
            table = s.catalog.load_table(ident)
            if s.faults["race"] > 0 and table.metadata.current_snapshot() is not None:
                s.faults["race"] -= 1
                self.foreign_commit(table)
            response = s.catalog.commit_table(table, request.requirements, request.updates)
            s.stats["commits"] += 1
            result = (200, {"metadata-location": response.metadata_location,
                            "metadata": json.loads(response.metadata.model_dump_json())})
            if key:
                s.answers[key] = result
            if s.faults["lose_answers"] > 0:
                s.faults["lose_answers"] -= 1
                s.stats["lost_answers"] += 1
                raise Failure(500, "CommitStateUnknownException", "injected: the commit landed, its answer is lost")
            return result

    def foreign_commit(self, table) -> None:
        """Another writer's commit: a snapshot over the current one with the same files."""
        current = table.metadata.current_snapshot()
        snapshot = Snapshot(
            snapshot_id=random.getrandbits(62),
            parent_snapshot_id=current.snapshot_id,
            sequence_number=table.metadata.next_sequence_number(),
            timestamp_ms=int(time.time() * 1000),
            manifest_list=current.manifest_list,
            summary=Summary(Operation.APPEND, **{k: v for k, v in current.summary.additional_properties.items()
                                                if k.startswith("total-")}),
            schema_id=current.schema_id,
        )
        self.state.catalog.commit_table(
            table,
            (AssertRefSnapshotId(ref="main", snapshot_id=current.snapshot_id),),
            (AddSnapshotUpdate(snapshot=snapshot),
             SetSnapshotRefUpdate(ref_name="main", type="branch", snapshot_id=snapshot.snapshot_id)),
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True, help="SQLite file of the catalog")
    p.add_argument("--warehouse", required=True, help="where new tables would go (file:// or s3://)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--prefix", default="", help="path prefix the config hands out")
    p.add_argument("--token", help="the one bearer token accepted")
    p.add_argument("--client", help="ID:SECRET accepted at /v1/oauth/tokens")
    p.add_argument("--token-lifetime", type=int, default=3600)
    p.add_argument("--sigv4", help="SERVICE:REGION: require SigV4 signatures (checked with botocore)")
    args = p.parse_args()
    Handler.state = State(args)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
