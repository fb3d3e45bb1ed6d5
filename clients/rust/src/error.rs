use crate::{ErrorKind, ErrorObject};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// What a call can fail with.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error: `code`, `message` and `data` (`data.kind` names it).
    Rpc(ErrorObject),
    /// The sidecar could not be started.
    Spawn { program: PathBuf, source: std::io::Error },
    /// Writing to or reading from the sidecar failed.
    Io(std::io::Error),
    /// The connection ended (the sidecar closed its output) before the answer came, and no
    /// exit status is known (attached streams, or a process still running).
    Disconnected,
    /// The spawned sidecar exited before the answer came: its status names the exit code or
    /// the signal that killed it (`signal: 9 (SIGKILL)`).
    Exited(std::process::ExitStatus),
    /// [`crate::Client::close`] (or `kill`) was called: every later call and notification
    /// fails with this, whatever state the sidecar is in.
    Closed,
    /// No answer within the time given ([`crate::PendingCall::wait_timeout`], startup, close);
    /// the request was cancelled.
    Timeout { method: String, after: Duration },
    /// The answer did not fit the result type (a server speaking another protocol version?).
    Decode { method: String, source: serde_json::Error },
    /// Params that could not be turned into JSON.
    Encode(serde_json::Error),
    /// The server broke the wire protocol (a bad frame).
    Protocol(String),
    /// The sidecar speaks a protocol whose major version differs from this client's
    /// (PROTOCOL.md, Lifecycle: the same major is compatible); the sidecar was stopped.
    ProtocolVersion { server: String, client: String },
}

/// `Result<T, session_sidecar::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The server's error object, for [`Error::Rpc`].
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Error::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// The JSON-RPC error code, for [`Error::Rpc`].
    pub fn code(&self) -> Option<i64> {
        self.rpc().map(|e| e.code)
    }

    /// The protocol's name for the error, for [`Error::Rpc`] with a code the schema knows.
    pub fn kind(&self) -> Option<ErrorKind> {
        self.rpc().and_then(ErrorObject::kind)
    }

    /// True when the sidecar is gone: [`Error::Disconnected`] or [`Error::Exited`].
    pub fn is_disconnected(&self) -> bool {
        matches!(self, Error::Disconnected | Error::Exited(_))
    }

    /// True when the server reports the request cancelled (`-32800`) or the client gave up waiting.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Error::Timeout { .. }) || self.kind() == Some(ErrorKind::RequestCancelled)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc(e) => write!(f, "{e}"),
            Error::Spawn { program, source } => write!(f, "cannot start {}: {source}", program.display()),
            Error::Io(e) => write!(f, "talking to the sidecar failed: {e}"),
            Error::Disconnected => f.write_str("the sidecar closed the connection before answering"),
            Error::Exited(status) => write!(f, "the sidecar exited before answering ({status})"),
            Error::Closed => f.write_str("the client is closed"),
            Error::Timeout { method, after } => write!(f, "{method}: no answer within {after:?}; cancelled"),
            Error::Decode { method, source } => write!(f, "{method}: the answer does not fit its type: {source}"),
            Error::Encode(e) => write!(f, "params cannot be encoded as JSON: {e}"),
            Error::Protocol(m) => write!(f, "protocol error: {m}"),
            Error::ProtocolVersion { server, client } => write!(
                f,
                "session-sidecar speaks protocol {server} but this client speaks {client}: the major versions must match; \
                 run a session-sidecar whose protocol is {}.x or use a client for protocol {server}",
                protocol_major(client)
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Rpc(e) => Some(e),
            Error::Spawn { source, .. } => Some(source),
            Error::Io(e) => Some(e),
            Error::Decode { source, .. } => Some(source),
            Error::Encode(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<ErrorObject> for Error {
    fn from(e: ErrorObject) -> Self {
        Error::Rpc(e)
    }
}

impl ErrorObject {
    /// An error object with an empty `data`, e.g. for a summarizer to fail with.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: serde_json::json!({}) }
    }

    /// The kind for `code`, if the schema has it.
    pub fn kind(&self) -> Option<ErrorKind> {
        ErrorKind::from_code(self.code)
    }

    /// `data.kind` as the server sent it.
    pub fn data_kind(&self) -> Option<&str> {
        self.data.get("kind").and_then(|v| v.as_str())
    }

    /// `data.field`: the bad field of an `invalidParams` error.
    pub fn field(&self) -> Option<&str> {
        self.data.get("field").and_then(|v| v.as_str())
    }
}

impl From<&str> for ErrorObject {
    /// An internal error (`-32603`) with this message.
    fn from(message: &str) -> Self {
        ErrorObject::new(ErrorKind::InternalError.code(), message)
    }
}

impl From<String> for ErrorObject {
    fn from(message: String) -> Self {
        ErrorObject::new(ErrorKind::InternalError.code(), message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.data_kind() {
            Some(kind) => write!(f, "{} ({kind}): {}", self.code, self.message),
            None => write!(f, "{}: {}", self.code, self.message),
        }
    }
}

impl std::error::Error for ErrorObject {}

/// The major part of a protocolVersion ("1.0" -> "1").
pub(crate) fn protocol_major(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}
