use std::io::{self, BufRead, Write};

/// How messages are delimited on the pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// `Content-Length: N\r\n\r\n` then N bytes of JSON, as LSP (the default).
    #[default]
    Lsp,
    /// One JSON object per line (`session-sidecar --jsonl`).
    Jsonl,
}

/// Upper bound on one message body, the server's own (64 MiB): the client refuses to send
/// a larger one (`payloadTooLarge`, nothing sent) and to read one.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

impl Framing {
    /// `body` (one JSON message) framed, ready to write.
    pub fn encode(self, body: &[u8]) -> Vec<u8> {
        match self {
            Framing::Lsp => {
                let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
                out.extend_from_slice(body);
                out
            }
            Framing::Jsonl => {
                let mut out = body.to_vec();
                out.push(b'\n');
                out
            }
        }
    }

    pub(crate) fn write(self, w: &mut dyn Write, body: &[u8]) -> io::Result<()> {
        w.write_all(&self.encode(body))?;
        w.flush()
    }

    /// Reads the next message body from `r`; `None` at the end of the stream.
    pub fn read(self, r: &mut dyn BufRead) -> io::Result<Option<Vec<u8>>> {
        match self {
            Framing::Lsp => read_lsp(r),
            Framing::Jsonl => loop {
                let mut line = Vec::new();
                if r.read_until(b'\n', &mut line)? == 0 {
                    return Ok(None);
                }
                if line.iter().any(|b| !b.is_ascii_whitespace()) {
                    return Ok(Some(line));
                }
            },
        }
    }
}

fn bad(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn read_lsp(r: &mut dyn BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut length: Option<usize> = None;
    let mut seen_header = false;
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line)? == 0 {
            return if seen_header { Err(bad("the stream ended inside a header block".into())) } else { Ok(None) };
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.trim().is_empty() {
            if seen_header {
                break;
            }
            continue;
        }
        seen_header = true;
        let (name, value) = text.split_once(':').ok_or_else(|| bad(format!("not a header line: {text:?}")))?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n = value.trim().parse::<usize>().map_err(|_| bad(format!("bad Content-Length: {value:?}")))?;
            length = Some(n);
        }
    }
    let n = length.ok_or_else(|| bad("a header block without Content-Length".into()))?;
    if n > MAX_MESSAGE_BYTES {
        return Err(bad(format!("a message of {n} bytes is over the {MAX_MESSAGE_BYTES}-byte limit")));
    }
    let mut body = vec![0; n];
    r.read_exact(&mut body)?;
    Ok(Some(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsp_frames_round_trip_and_tolerate_extra_headers() {
        let mut data = Framing::Lsp.encode(br#"{"a":1}"#);
        data.extend_from_slice(b"content-length: 2\r\nContent-Type: application/json\r\n\r\n{}");
        let mut r = io::Cursor::new(data);
        assert_eq!(Framing::Lsp.read(&mut r).unwrap().unwrap(), br#"{"a":1}"#);
        assert_eq!(Framing::Lsp.read(&mut r).unwrap().unwrap(), b"{}");
        assert!(Framing::Lsp.read(&mut r).unwrap().is_none());
    }

    #[test]
    fn lsp_refuses_a_frame_without_length_and_a_truncated_body() {
        let mut r = io::Cursor::new(b"X-Foo: 1\r\n\r\n{}".to_vec());
        assert_eq!(Framing::Lsp.read(&mut r).unwrap_err().kind(), io::ErrorKind::InvalidData);
        let mut r = io::Cursor::new(b"Content-Length: 10\r\n\r\n{}".to_vec());
        assert_eq!(Framing::Lsp.read(&mut r).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn jsonl_skips_blank_lines() {
        let mut r = io::Cursor::new(b"\n{\"a\":1}\n\r\n{}\n".to_vec());
        assert_eq!(Framing::Jsonl.read(&mut r).unwrap().unwrap(), b"{\"a\":1}\n");
        assert_eq!(Framing::Jsonl.read(&mut r).unwrap().unwrap(), b"{}\n");
        assert!(Framing::Jsonl.read(&mut r).unwrap().is_none());
    }
}
