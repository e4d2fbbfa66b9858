//! The HTTP boundary of `model pull`: the only importer of `ureq`. One GET, optionally from
//! a byte offset, following redirects; the answer is classified by what the caller must do
//! with it (write from the start, append, or nothing is left to fetch).
//!
//! Statuses other than 200/206/416 are errors that carry the URL; network errors say what
//! to try next.

use std::io::Read;
use std::time::Duration;

/// How long a connection may take to open, and a response to start.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);
/// A body that sends nothing for this long is given up (the part file is kept).
const READ_TIMEOUT: Duration = Duration::from_secs(120);

/// What the server answered to a GET from `offset`.
pub enum Reply {
    /// 200: the whole file from byte 0 (a server that ignores `Range` answers this too).
    Whole {
        length: Option<u64>,
        body: Box<dyn Read + Send>,
    },
    /// 206: the bytes from `start`, of a file of `total` bytes (when the server says).
    Partial {
        start: u64,
        total: Option<u64>,
        body: Box<dyn Read + Send>,
    },
    /// 416: nothing at or after the offset; `total` is the file's size if given.
    NotSatisfiable { total: Option<u64> },
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The server answered with an error status: the URL is wrong or the file is gone.
    #[error("{url}: the server answered HTTP {status}{}", status_hint(*status))]
    Status { url: String, status: u16 },
    /// The URL cannot be used.
    #[error("{url}: {problem}")]
    BadUrl { url: String, problem: String },
    /// The network failed: try again later (a resume continues where it stopped).
    #[error("{url}: {problem}")]
    Network { url: String, problem: String },
}

fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (access denied: the file may need a login or a token, or the URL is wrong)",
        404 | 410 => " (not found: check the URL)",
        429 => " (too many requests: wait a while and try again)",
        500..=599 => " (a server error: try again later)",
        _ => "",
    }
}

/// GETs `url`, asking for the bytes from `offset` on when it is not 0.
pub fn get(url: &str, offset: u64) -> Result<Reply, FetchError> {
    check_url(url)?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .timeout_recv_response(Some(RESPONSE_TIMEOUT))
        .timeout_per_read(Some(READ_TIMEOUT))
        .user_agent(concat!("harvey/", env!("CARGO_PKG_VERSION")))
        .tls_config(
            // The system's trust store, as curl uses: a proxy's or a company's CA works.
            ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::PlatformVerifier)
                .build(),
        )
        .build()
        .into();
    let mut request = agent.get(url);
    if offset > 0 {
        request = request.header("Range", format!("bytes={offset}-"));
    }
    let response = request.call().map_err(|e| network(url, &e))?;
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_range = header("content-range");
    let length = header("content-length").and_then(|v| v.trim().parse().ok());
    match status {
        200 => Ok(Reply::Whole {
            length,
            body: Box::new(response.into_body().into_reader()),
        }),
        206 => {
            let (start, total) = content_range
                .as_deref()
                .and_then(super::range::parse_content_range)
                .ok_or_else(|| FetchError::Network {
                    url: url.to_string(),
                    problem: format!(
                        "the server sent part of the file without a usable Content-Range \
                         ({content_range:?}); try again, or delete the .part file to start over"
                    ),
                })?;
            Ok(Reply::Partial {
                start,
                total,
                body: Box::new(response.into_body().into_reader()),
            })
        }
        416 => Ok(Reply::NotSatisfiable {
            total: content_range
                .as_deref()
                .and_then(super::range::parse_unsatisfied_total),
        }),
        _ => Err(FetchError::Status {
            url: url.to_string(),
            status,
        }),
    }
}

/// Only http:// and https:// are pulled.
pub fn check_url(url: &str) -> Result<(), FetchError> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(());
    }
    Err(FetchError::BadUrl {
        url: url.to_string(),
        problem: "only http:// and https:// URLs can be pulled".into(),
    })
}

fn tls_problem(e: &ureq::Error) -> String {
    format!(
        "TLS failed ({e}): the server's certificate is not trusted here; check the machine's \
         clock, the system's CA certificates (package ca-certificates) and the URL"
    )
}

fn network(url: &str, e: &ureq::Error) -> FetchError {
    let problem = match e {
        ureq::Error::BadUri(why) => {
            return FetchError::BadUrl {
                url: url.to_string(),
                problem: format!("not a usable URL ({why})"),
            }
        }
        ureq::Error::HostNotFound => {
            "the host name does not resolve: check the URL and that this machine is online"
                .to_string()
        }
        ureq::Error::ConnectionFailed => {
            "the connection failed: check that this machine is online and the server is up"
                .to_string()
        }
        ureq::Error::Timeout(what) => {
            format!("timed out ({what}): the network or the server is slow; try again")
        }
        ureq::Error::TooManyRedirects => "too many redirects: check the URL".to_string(),
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => tls_problem(e),
        ureq::Error::Io(io) if io.to_string().contains("certificate") => tls_problem(e),
        ureq::Error::Io(io) => {
            format!("{io}: check that this machine is online and the server is up, then try again")
        }
        other => format!("{other}: try again"),
    };
    FetchError::Network {
        url: url.to_string(),
        problem,
    }
}
