#!/usr/bin/env bash
# Proves vendor/parquet is the published parquet crate plus vendor/parquet.patch and nothing else:
# downloads the crate from crates.io, applies the patch, trims what vendor/README.md says was
# trimmed, and compares the trees. Needs network access to static.crates.io.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/parquet/Cargo.toml" | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -sSfL "https://static.crates.io/crates/parquet/parquet-$version.crate" | tar -xz -C "$work"
up="$work/parquet-$version"
(cd "$up" && patch -s -p1 < "$here/parquet.patch")
(cd "$up" && rm -rf .cargo-ok .cargo_vcs_info.json Cargo.lock Cargo.toml.orig CONTRIBUTING.md \
    regen.sh THRIFT.md benches tests examples pytest src/bin)
# The manifest drops the targets and dev-dependencies of the removed folders, and the
# test-only feature's dependency on one of them (the feature stays, empty).
python3 - "$up/Cargo.toml" <<'PY'
import re, sys
p = sys.argv[1]
blocks = re.split(r'(?m)^(?=\[)', open(p).read())
drop = re.compile(r'\[\[(bin|example|test|bench)\]\]|\[dev-dependencies')
text = ''.join(b for b in blocks if not drop.match(b))
open(p, 'w').write(text.replace('test_common = ["arrow/test_utils"]', 'test_common = []'))
PY
diff -r "$up" "$here/parquet" && echo "vendor/parquet = parquet $version + vendor/parquet.patch"
