//! Turns token pieces (raw bytes that may end mid-character) into valid UTF-8 text.

/// Buffers bytes until they form complete UTF-8 characters.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Adds bytes and returns the text that is complete so far (may be empty).
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(text) => {
                    out.push_str(text);
                    self.pending.clear();
                    return out;
                }
                Err(err) => {
                    let valid = err.valid_up_to();
                    out.push_str(&String::from_utf8_lossy(&self.pending[..valid]));
                    match err.error_len() {
                        // Incomplete sequence at the end: wait for more bytes.
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                        // Invalid bytes can never become valid: replace and go on.
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + bad);
                        }
                    }
                }
            }
        }
    }

    /// Flushes whatever is left (an unfinished character becomes U+FFFD).
    pub fn finish(&mut self) -> String {
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_multibyte_characters_are_joined() {
        let text = "héllo 🦀!";
        let bytes = text.as_bytes();
        let mut stream = Utf8Stream::default();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&stream.push(std::slice::from_ref(b)));
        }
        out.push_str(&stream.finish());
        assert_eq!(out, text);
    }

    #[test]
    fn invalid_bytes_become_replacement_and_stream_continues() {
        let mut stream = Utf8Stream::default();
        assert_eq!(stream.push(b"a\xffb"), "a\u{fffd}b");
        assert_eq!(stream.push(&[0xe2, 0x82]), "");
        assert_eq!(stream.finish(), "\u{fffd}");
    }
}
