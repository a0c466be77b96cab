#!/usr/bin/env bash
# Proves each crate under vendor/ is the published crate plus its vendor/<crate>.patch and nothing
# else: downloads the crate from crates.io, applies the patch, trims what vendor/README.md says
# was trimmed, and compares the trees. Needs network access to static.crates.io.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check CRATE EXTRA_PATHS_TO_TRIM...
check() {
    local crate=$1
    shift
    local version
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/$crate/Cargo.toml" | head -1)
    curl -sSfL "https://static.crates.io/crates/$crate/$crate-$version.crate" | tar -xz -C "$work"
    local up="$work/$crate-$version"
    (cd "$up" && patch -s -p1 < "$here/$crate.patch")
    (cd "$up" && rm -rf .cargo-ok .cargo_vcs_info.json Cargo.lock Cargo.toml.orig "$@")
    # The manifest drops the targets and dev-dependencies of the removed folders, and parquet's
    # test-only feature's dependency on one of them (the feature stays, empty).
    python3 - "$up/Cargo.toml" <<'PY'
import re, sys
p = sys.argv[1]
blocks = re.split(r'(?m)^(?=\[)', open(p).read())
drop = re.compile(r'\[\[(bin|example|test|bench)\]\]|\[dev-dependencies')
text = ''.join(b for b in blocks if not drop.match(b))
open(p, 'w').write(text.replace('test_common = ["arrow/test_utils"]', 'test_common = []'))
PY
    diff -r "$up" "$here/$crate" && echo "vendor/$crate = $crate $version + vendor/$crate.patch"
}

check parquet CONTRIBUTING.md regen.sh THRIFT.md benches tests examples pytest src/bin
check arrow-avro benches
check iceberg testdata public-api.txt DEPENDENCIES.rust.tsv
