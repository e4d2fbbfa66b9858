//! `harvey model pull`: the real default GGUF served by a loopback HTTP server that cuts,
//! stalls, ignores ranges or answers 404; the result must equal the source byte for byte,
//! and no half file may ever carry the final name.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::support::http::{Rules, Server};
use crate::support::model_path;
use crate::support::process::{harvey, run, text, workspace};

const NAME: &str = "Smol-copy.gguf";

/// The default model's bytes, read once for every test here.
fn source() -> Arc<Vec<u8>> {
    static BYTES: OnceLock<Arc<Vec<u8>>> = OnceLock::new();
    BYTES
        .get_or_init(|| Arc::new(std::fs::read(model_path()).unwrap()))
        .clone()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A server with the model as `/files/NAME`, and a workspace to pull into.
fn setup() -> (Server, tempfile::TempDir) {
    let server = Server::start();
    server.serve(NAME, source());
    (server, workspace())
}

fn pull(ws: &Path, url: &str, extra: &[&str]) -> Output {
    let mut args = vec!["model", "pull", url];
    args.extend_from_slice(extra);
    run(ws, &args)
}

fn dest(ws: &Path) -> PathBuf {
    ws.join("models").join(NAME)
}

fn part(ws: &Path) -> PathBuf {
    ws.join("models").join(format!("{NAME}.part"))
}

fn assert_pulled_whole(ws: &Path, out: &Output) {
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pulled = std::fs::read(dest(ws)).unwrap();
    assert!(
        pulled == *source(),
        "the pulled file equals the source byte for byte"
    );
    assert!(!part(ws).exists(), "the part file is gone after the rename");
    assert!(
        text(&out.stdout).contains(&format!("sha256 {}", sha256_hex(&source()))),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_cut_download_resumes_from_the_cut_through_a_redirect_and_is_then_listed() {
    let (server, ws) = setup();
    let src = source();
    let half = src.len() as u64 / 2;
    let sha = sha256_hex(&src);
    server.set(Rules {
        cut_at: Some(half),
        ..Rules::default()
    });
    let url = server.url(&format!("/files/{NAME}"));
    let cut = pull(ws.path(), &url, &["--sha256", &sha]);
    let stderr = text(&cut.stderr);
    assert_eq!(cut.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("run the same command again to resume"),
        "{stderr}"
    );
    assert!(
        !dest(ws.path()).exists(),
        "no half file under the final name"
    );
    assert_eq!(std::fs::metadata(part(ws.path())).unwrap().len(), half);

    server.set(Rules::default());
    let resumed = pull(
        ws.path(),
        &server.url(&format!("/redirect/{NAME}")),
        &["--sha256", &sha.to_uppercase()],
    );
    assert_pulled_whole(ws.path(), &resumed);
    assert!(
        text(&resumed.stdout).contains("resumed at"),
        "{}",
        text(&resumed.stdout)
    );
    assert!(
        text(&resumed.stderr).contains("100%"),
        "{}",
        text(&resumed.stderr)
    );
    let last = server.requests().pop().unwrap();
    assert_eq!(last.path, format!("/files/{NAME}"));
    assert_eq!(
        last.range.as_deref(),
        Some(format!("bytes={half}-").as_str())
    );
    assert_eq!((last.status, last.sent), (206, src.len() as u64 - half));

    let list = run(ws.path(), &["model", "list", "--json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&list.stdout).unwrap();
    let row = rows
        .iter()
        .find(|r| r["path"].as_str().is_some_and(|p| p.ends_with(NAME)))
        .unwrap_or_else(|| panic!("{NAME} listed: {rows:?}"));
    assert_eq!(row["info"]["architecture"], "llama");

    let again = pull(ws.path(), &url, &[]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("--force"),
        "{}",
        text(&again.stderr)
    );
    let forced = pull(ws.path(), &url, &["--force"]);
    assert_pulled_whole(ws.path(), &forced);
}

#[test]
fn a_wrong_sha256_a_page_and_a_404_leave_no_file() {
    let (server, ws) = setup();
    let url = server.url(&format!("/files/{NAME}"));
    let wrong = pull(ws.path(), &url, &["--sha256", &"0".repeat(64)]);
    assert_eq!(wrong.status.code(), Some(1));
    let stderr = text(&wrong.stderr);
    assert!(
        stderr.contains("sha256 mismatch") && stderr.contains("deleted"),
        "{stderr}"
    );
    assert!(!dest(ws.path()).exists() && !part(ws.path()).exists());

    let bad_flag = pull(ws.path(), &url, &["--sha256", "abc"]);
    assert_eq!(
        bad_flag.status.code(),
        Some(2),
        "{}",
        text(&bad_flag.stderr)
    );

    let page: Vec<u8> = b"<!doctype html><p>sign in</p>\n".repeat(600_000);
    server.serve("page.gguf", Arc::new(page));
    let html = pull(ws.path(), &server.url("/files/page.gguf"), &[]);
    let stderr = text(&html.stderr);
    assert_eq!(html.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is not a GGUF file") && stderr.contains("<!do"),
        "{stderr}"
    );
    assert!(std::fs::read_dir(ws.path().join("models"))
        .unwrap()
        .next()
        .is_none());
    let page_request = server.requests().pop().unwrap();
    assert!(
        !page_request.complete,
        "refused at the first bytes, not after the whole body: {page_request:?}"
    );

    let missing = server.url("/files/nothing.gguf");
    let gone = pull(ws.path(), &missing, &[]);
    let stderr = text(&gone.stderr);
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        stderr.contains(&missing) && stderr.contains("HTTP 404"),
        "{stderr}"
    );

    let no_name = pull(ws.path(), &server.url("/files/model.bin"), &[]);
    assert!(
        text(&no_name.stderr).contains("--name"),
        "{}",
        text(&no_name.stderr)
    );
}

#[test]
fn a_part_file_the_server_cannot_continue_is_started_over() {
    let (server, ws) = setup();
    let src = source();
    let models = ws.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    let url = server.url(&format!("/files/{NAME}"));

    // The server ignores Range: 200 with the whole file.
    std::fs::write(part(ws.path()), &src[..1_000_000]).unwrap();
    server.set(Rules {
        ignore_range: true,
        ..Rules::default()
    });
    let ignored = pull(ws.path(), &url, &[]);
    assert_pulled_whole(ws.path(), &ignored);
    assert!(
        text(&ignored.stderr).contains("starting over"),
        "{}",
        text(&ignored.stderr)
    );
    let last = server.requests().pop().unwrap();
    assert_eq!(
        (last.range.as_deref(), last.status),
        (Some("bytes=1000000-"), 200)
    );

    // A part longer than the file: 416 with another size, so it starts over.
    server.set(Rules::default());
    std::fs::remove_file(dest(ws.path())).unwrap();
    let mut longer = src.to_vec();
    longer.extend_from_slice(b"trailing junk");
    std::fs::write(part(ws.path()), &longer).unwrap();
    let too_long = pull(ws.path(), &url, &[]);
    assert_pulled_whole(ws.path(), &too_long);
    assert!(text(&too_long.stderr).contains("starting over"));

    // A complete part: 416 with its own size, nothing left to fetch.
    std::fs::remove_file(dest(ws.path())).unwrap();
    std::fs::write(part(ws.path()), src.as_slice()).unwrap();
    let before = server.requests().len();
    let complete = pull(ws.path(), &url, &[]);
    assert_pulled_whole(ws.path(), &complete);
    let asked = &server.requests()[before..];
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].status, 416);
}

#[test]
fn ctrl_c_keeps_the_part_file_and_the_next_pull_finishes_it() {
    let (server, ws) = setup();
    let quarter = source().len() as u64 / 4;
    server.set(Rules {
        stall_at: Some(quarter),
        ..Rules::default()
    });
    let url = server.url(&format!("/files/{NAME}"));
    let child = harvey(ws.path())
        .args(["model", "pull", &url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(part(ws.path())).map_or(0, |m| m.len()) < quarter {
        assert!(
            Instant::now() < deadline,
            "the part file never reached the stall"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    server.release();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted") && stderr.contains("resume"),
        "{stderr}"
    );
    assert_eq!(std::fs::metadata(part(ws.path())).unwrap().len(), quarter);
    assert!(!dest(ws.path()).exists());

    server.set(Rules::default());
    let resumed = pull(ws.path(), &url, &[]);
    assert_pulled_whole(ws.path(), &resumed);
    let last = server.requests().pop().unwrap();
    assert_eq!(
        last.range.as_deref(),
        Some(format!("bytes={quarter}-").as_str())
    );
}

/// A write that fails (here a file-size limit, the same path as a full disk) keeps what
/// was written as the part file, says so, and the next pull resumes from it.
#[test]
fn a_failed_write_keeps_the_part_file_for_a_resume() {
    let (server, ws) = setup();
    let url = server.url(&format!("/files/{NAME}"));
    let limit_kb = 20_000;
    // bash: the limit is in KB; SIGXFSZ ignored so the write fails with EFBIG instead.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -f {limit_kb}; trap '' XFSZ; exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_harvey"))
        .env("HARVEY_CACHE_DIR", crate::support::process::SHARED_CACHE)
        .args([
            "--workdir",
            ws.path().to_str().unwrap(),
            "model",
            "pull",
            &url,
        ])
        .env_remove("HARVEY_MODEL")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write") && stderr.contains("file-size limit"),
        "{stderr}"
    );
    assert!(
        stderr.contains("run the same command again to resume"),
        "{stderr}"
    );
    let kept = std::fs::read(part(ws.path())).unwrap();
    assert_eq!(kept.len() as u64, limit_kb * 1024);
    assert!(
        kept == source()[..kept.len()],
        "the part file is a prefix of the source"
    );
    assert!(!dest(ws.path()).exists());

    let resumed = pull(ws.path(), &url, &[]);
    assert_pulled_whole(ws.path(), &resumed);
    let last = server.requests().pop().unwrap();
    assert_eq!(
        last.range.as_deref(),
        Some(format!("bytes={}-", limit_kb * 1024).as_str())
    );
}
