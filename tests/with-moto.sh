#!/usr/bin/env bash
# Runs a command with moto's AWS emulator (S3, SQS, DynamoDB) serving on a free loopback port,
# with the standard AWS_* variables pointing at it; stops it afterwards. A failed start fails
# the run and prints moto's log: the AWS tests are never skipped.
set -euo pipefail
VENV=${VENV:-.venv}
py="$VENV/bin/python"
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp -t moto.XXXXXX.log)
"$VENV/bin/moto_server" -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"; }
trap cleanup EXIT
for _ in $(seq 1 150); do
  if "$py" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/', timeout=1)" 2>/dev/null; then
    ready=1; break
  fi
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.2
done
if [ -z "${ready:-}" ]; then
  echo "moto_server did not start on port $port; its log:" >&2
  cat "$log" >&2
  exit 1
fi
export AWS_ENDPOINT_URL="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_SESSION_TOKEN=test
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
echo "moto_server ready at $AWS_ENDPOINT_URL" >&2
"$@"
