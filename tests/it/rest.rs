//! The Iceberg REST catalog path: Floe's committer sending its commits as `updateTable` changes
//! to a REST catalog (`tests/rest_catalog/server.py`, the REST protocol over PyIceberg's SQL
//! catalog), through the Lambda handlers on moto, read back by PyIceberg's REST client.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};

use floe::adapters::aws::Catalog;
use floe::adapters::rest::{RestAuth, RestSettings};

/// A REST catalog server of the test's own, stopped when dropped.
pub(crate) struct RestServer {
    child: Child,
    /// Its base URI.
    pub(crate) uri: String,
    _dir: tempfile::TempDir,
}

impl RestServer {
    /// Starts one with its own SQLite file; `args` as `server.py` takes them.
    pub(crate) fn start(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(python())
            .arg(root().join("tests/rest_catalog/server.py"))
            .arg("--db")
            .arg(dir.path().join("catalog.db"))
            .args(["--warehouse", &format!("file://{}", dir.path().display())])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the REST catalog (python from .venv)");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        std::io::BufReader::new(stdout).read_line(&mut line).expect("the server's first line");
        let port = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("REST catalog said `{line}`"));
        RestServer { child, uri: format!("http://127.0.0.1:{port}"), _dir: dir }
    }

    /// Sets the server's test faults (`/test/faults`).
    pub(crate) fn faults(&self, faults: serde_json::Value) {
        self.http(&format!("{}/test/faults", self.uri), Some(&faults.to_string()));
    }

    /// The server's counters (`/test/stats`).
    pub(crate) fn stats(&self) -> serde_json::Value {
        serde_json::from_str(&self.http(&format!("{}/test/stats", self.uri), None)).expect("stats")
    }

    /// One request with the test's Python (no HTTP client of the test's own to keep).
    fn http(&self, url: &str, body: Option<&str>) -> String {
        let script = "import sys, urllib.request as u\n\
            d = sys.argv[2].encode() if len(sys.argv) > 2 else None\n\
            r = u.Request(sys.argv[1], data=d, headers={'Content-Type': 'application/json'})\n\
            print(u.urlopen(r, timeout=10).read().decode())";
        let mut cmd = Command::new(python());
        cmd.args(["-c", script, url]);
        cmd.args(body);
        let out = cmd.output().expect("python");
        assert!(out.status.success(), "{url}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The catalog setting for Floe, signing in with `auth`.
    pub(crate) fn catalog(&self, auth: RestAuth) -> Catalog {
        Catalog::Rest(RestSettings { uri: self.uri.clone(), warehouse: None, auth })
    }
}

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf()
}

fn python() -> String {
    std::env::var("FLOE_TEST_PYTHON").unwrap_or_else(|_| root().join(".venv/bin/python").display().to_string())
}

impl Drop for RestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
