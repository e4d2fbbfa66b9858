//! The file name a pull is saved under: `--name`, or the URL's last path segment (query
//! and fragment stripped, percent escapes decoded). Pure.

use std::path::{Path, PathBuf};

/// The name to save `url` under, `.gguf` appended to a `--name` that lacks it. The error
/// says what is wrong and what to pass instead.
pub fn resolve(url: &str, name: Option<&str>) -> Result<String, String> {
    let name = match name {
        Some(n) if n.to_ascii_lowercase().ends_with(".gguf") => n.to_string(),
        Some(n) => format!("{n}.gguf"),
        None => {
            let segment = last_segment(url);
            if !segment.to_ascii_lowercase().ends_with(".gguf") {
                return Err(format!(
                    "the URL does not end in a .gguf file name (its last part is {segment:?}): \
                     pass --name NAME.gguf"
                ));
            }
            segment
        }
    };
    check(&name)?;
    Ok(name)
}

/// Where the bytes collect until every check has passed: `NAME.gguf.part` beside it.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    dest.with_file_name(name)
}

fn last_segment(url: &str) -> String {
    let without_fragment = url.split('#').next().unwrap_or_default();
    let path = without_fragment.split('?').next().unwrap_or_default();
    let after_scheme = path.split_once("://").map_or(path, |(_, rest)| rest);
    let segment = match after_scheme.split_once('/') {
        Some((_host, path)) => path.rsplit('/').next().unwrap_or_default(),
        None => "",
    };
    percent_decode(segment)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn check(name: &str) -> Result<(), String> {
    let bad = name.contains(['/', '\\', '\0'])
        || name.starts_with('.')
        || name.chars().any(char::is_control)
        || name.len() <= ".gguf".len();
    if bad {
        return Err(format!(
            "{name:?} cannot be a model file name (no path separators, no leading dot): \
             pass --name NAME.gguf"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_urls_and_flags() {
        let hf = "https://huggingface.co/org/repo/resolve/main/Model-Q4_K_M.gguf?download=true";
        let table: &[(&str, Option<&str>, Result<&str, &str>)] = &[
            (hf, None, Ok("Model-Q4_K_M.gguf")),
            ("http://127.0.0.1:8080/a/b.gguf#frag", None, Ok("b.gguf")),
            ("http://h/x/my%20model.GGUF", None, Ok("my model.GGUF")),
            ("http://h/x/model.bin", None, Err("--name")),
            ("http://h/", None, Err("--name")),
            ("http://h", None, Err("--name")),
            ("http://h/x/model.bin", Some("small"), Ok("small.gguf")),
            (hf, Some("mine.gguf"), Ok("mine.gguf")),
            (hf, Some("../up"), Err("path separators")),
            (hf, Some(".hidden.gguf"), Err("leading dot")),
            (
                "http://h/x/%2e%2e%2fevil.gguf",
                None,
                Err("path separators"),
            ),
            (hf, Some(".gguf"), Err("cannot be")),
        ];
        for (url, name, want) in table {
            match (resolve(url, *name), want) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want, "{url} {name:?}"),
                (Err(got), Err(part)) => assert!(got.contains(part), "{url}: {got}"),
                (got, want) => panic!("{url} {name:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn the_part_file_sits_beside_the_model() {
        assert_eq!(
            part_path(Path::new("models/a.gguf")),
            Path::new("models/a.gguf.part")
        );
    }
}
