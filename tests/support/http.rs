//! A small HTTP/1.1 file server on 127.0.0.1 for the `model pull` tests: `GET /files/NAME`
//! (with `Range: bytes=N-`), `/redirect/NAME` (302 to the file), 404 for anything else.
//! It can be told to ignore ranges, to close the connection at a byte offset, or to stall
//! there, and it logs every request with the range asked for and the bytes it sent.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the next answers misbehave.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Answer 200 with the whole file whatever the Range header says.
    pub ignore_range: bool,
    /// Close the connection when the file offset reaches this.
    pub cut_at: Option<u64>,
    /// Stop sending at this file offset (the connection stays open) until `release`.
    pub stall_at: Option<u64>,
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub range: Option<String>,
    pub status: u16,
    /// Body bytes written, and whether all of the answer's body was written.
    pub sent: u64,
    pub complete: bool,
}

#[derive(Default)]
struct State {
    files: Mutex<HashMap<String, Arc<Vec<u8>>>>,
    rules: Mutex<Rules>,
    log: Mutex<Vec<Seen>>,
    released: std::sync::atomic::AtomicBool,
}

pub struct Server {
    base: String,
    state: Arc<State>,
}

impl Server {
    /// Listens on a free loopback port; each connection gets a thread.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State::default());
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let state = Arc::clone(&shared);
                std::thread::spawn(move || answer(stream, &state));
            }
        });
        Self { base, state }
    }

    pub fn serve(&self, name: &str, bytes: Arc<Vec<u8>>) {
        self.state
            .files
            .lock()
            .unwrap()
            .insert(name.to_string(), bytes);
    }

    pub fn set(&self, rules: Rules) {
        *self.state.rules.lock().unwrap() = rules;
    }

    /// Lets a stalled answer go on.
    pub fn release(&self) {
        self.state
            .released
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.state.log.lock().unwrap().clone()
    }
}

fn answer(stream: TcpStream, state: &State) {
    let Some((path, range)) = read_request(&stream) else {
        return;
    };
    let index = {
        let mut log = state.log.lock().unwrap();
        log.push(Seen {
            path: path.clone(),
            range: range.clone(),
            status: 0,
            sent: 0,
            complete: false,
        });
        log.len() - 1
    };
    let (status, sent, complete) = route(stream, state, &path, range.as_deref());
    let mut log = state.log.lock().unwrap();
    (log[index].status, log[index].sent, log[index].complete) = (status, sent, complete);
}

/// The request line's path and the Range header.
fn read_request(stream: &TcpStream) -> Option<(String, Option<String>)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let path = request_line.split_whitespace().nth(1)?.to_string();
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("range") {
                range = Some(value.trim().to_string());
            }
        }
    }
    Some((path, range))
}

/// Answers one request: (status, body bytes sent, body complete).
fn route(
    mut stream: TcpStream,
    state: &State,
    path: &str,
    range: Option<&str>,
) -> (u16, u64, bool) {
    if let Some(name) = path.strip_prefix("/redirect/") {
        let _ = stream.write_all(
            format!("HTTP/1.1 302 Found\r\nLocation: /files/{name}\r\n{EMPTY}").as_bytes(),
        );
        return (302, 0, true);
    }
    let file = path
        .strip_prefix("/files/")
        .and_then(|name| state.files.lock().unwrap().get(name).cloned());
    let Some(file) = file else {
        let body = "no such file\n";
        let head = format!(
            "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        return (404, 0, true);
    };
    let rules = state.rules.lock().unwrap().clone();
    let len = file.len() as u64;
    let start = range
        .filter(|_| !rules.ignore_range)
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<u64>().ok());
    let (status, head) = match start {
        Some(s) if s >= len => {
            let head = format!(
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\n{EMPTY}"
            );
            let _ = stream.write_all(head.as_bytes());
            return (416, 0, true);
        }
        Some(s) => (
            206,
            format!(
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {s}-{}/{len}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                len - 1,
                len - s
            ),
        ),
        None => (
            200,
            format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"),
        ),
    };
    if stream.write_all(head.as_bytes()).is_err() {
        return (status, 0, false);
    }
    let (sent, complete) = send_body(&mut stream, &file, start.unwrap_or(0), &rules, state);
    (status, sent, complete)
}

/// The end of a header block with no body.
const EMPTY: &str = "Content-Length: 0\r\nConnection: close\r\n\r\n";

/// Writes the file from `from`, obeying the cut and stall rules. Returns the bytes
/// written and whether the body was finished.
fn send_body(
    stream: &mut TcpStream,
    file: &[u8],
    from: u64,
    rules: &Rules,
    state: &State,
) -> (u64, bool) {
    let len = file.len() as u64;
    let mut at = from;
    let stop = rules
        .cut_at
        .filter(|c| *c > from && *c < len)
        .unwrap_or(len);
    let stall = rules.stall_at.filter(|s| *s > from && *s < len);
    while at < stop {
        let next = (at + 64 * 1024).min(stop);
        let next = stall.filter(|s| at < *s).map_or(next, |s| next.min(s));
        if stream.write_all(&file[at as usize..next as usize]).is_err() {
            return (at - from, false);
        }
        at = next;
        if Some(at) == stall {
            let _ = stream.flush();
            let until = Instant::now() + Duration::from_secs(60);
            while !state.released.load(std::sync::atomic::Ordering::SeqCst)
                && Instant::now() < until
            {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
    (at - from, at == len)
}
