//! A client for session-sidecar: the standalone process that owns
//! pi-mono compatible coding-agent sessions and speaks JSON-RPC 2.0 over stdio.
//!
//! ```no_run
//! use session_sidecar::{Client, CreateParams, AppendParams, BuildContextParams, entries};
//!
//! # fn main() -> session_sidecar::Result<()> {
//! let client = Client::builder().root("/tmp/sessions").spawn()?; // spawns `session-sidecar`, initializes
//! let session = client.create(CreateParams { cwd: "/work".into(), ..Default::default() })?;
//! client.append(AppendParams {
//!     session_id: session.session_id.clone(),
//!     entries: vec![entries::user("Hello"), entries::assistant_text("Hi! How can I help?")],
//!     ..Default::default()
//! })?;
//! let context = client.build_context(BuildContextParams { session_id: session.session_id, ..Default::default() })?;
//! assert_eq!(context.messages.len(), 2);
//! client.close()?; // shutdown, exit, and the process is gone
//! # Ok(()) }
//! ```
//!
//! * Every protocol method has a typed, blocking method on [`Client`] (`create`, `append`,
//!   `build_context`, ...), generated from `protocol/schema.json` together with every
//!   params and result type.
//! * [`Client::start`] sends a request and returns a [`PendingCall`]: wait on it, cancel it
//!   (`$/cancelRequest`), drop it (which cancels too) or `.await` it from async code.
//!   [`Client::start_with_progress`] also reports the call's `$/progress`.
//! * Server errors are [`Error::Rpc`] carrying the [`ErrorObject`] (code, message, `data`);
//!   [`Error::kind`] maps the code to an [`ErrorKind`].
//! * [`ClientBuilder::summarizer`] answers the server's `session/summarize` requests (the
//!   `client` compaction provider) with your own model.
//!
//! # Typed entries and messages
//!
//! `build_context` returns [`AgentMessage`]s, `get_entries` and `session/didAppend`
//! [`SessionEntry`]s: enums with one variant per `role` / `type` and an `Unknown` variant
//! keeping anything else as read (other tools' entries, newer versions'). A misspelt field or
//! variant does not compile:
//!
//! ```
//! use session_sidecar::{AgentMessage, AssistantContentBlock};
//! fn tool_calls(m: &AgentMessage) -> Vec<&str> {
//!     match m {
//!         AgentMessage::Assistant(a) => a.content.iter().flatten().filter_map(|b| match b {
//!             AssistantContentBlock::ToolCall(call) => Some(call.name.as_str()),
//!             _ => None,
//!         }).collect(),
//!         AgentMessage::ToolResult(r) => vec![r.tool_call_id.as_str()],
//!         _ => vec![],
//!     }
//! }
//! ```
//!
//! ```compile_fail
//! fn id(r: &session_sidecar::ToolResultMessage) -> &str { &r.tool_cal_id } // misspelt field
//! ```
//!
//! ```compile_fail
//! fn is_call(m: &session_sidecar::AgentMessage) -> bool { matches!(m, session_sidecar::AgentMessage::ToolCal(_)) } // no such role
//! ```
//!
//! ```compile_fail
//! fn role(m: &session_sidecar::ToolResultMessage) -> i64 { m.tool_name } // a string is not a number
//! ```
//!
//! One typed handler per notification; a misspelt one does not compile either:
//!
//! ```no_run
//! let client = session_sidecar::Client::builder().on_did_append(|p| println!("{} entries", p.entries.len())).spawn();
//! ```
//!
//! ```compile_fail
//! let client = session_sidecar::Client::builder().on_did_apend(|p| println!("{} entries", p.entries.len())).spawn();
//! ```
//!
//! The [`Client`] is `Send + Sync`: share it in an `Arc` across threads; calls on one
//! session run in the order they were sent, calls on different sessions run side by side.

mod client;
mod error;
mod framing;
mod generated;
#[cfg(unix)]
mod server;

pub mod entries;

pub use client::{CancelHandle, Client, ClientBuilder, PendingCall, ProgressFn};
pub use error::{Error, Result};
pub use framing::{Framing, MAX_MESSAGE_BYTES};
#[cfg(unix)]
pub use server::Server;
pub use generated::*;

use serde::{de::DeserializeOwned, Serialize};

/// A protocol method (client -> server): its name, params and result types.
///
/// [`methods`] has one marker type per method, e.g. `client.start::<methods::Compact>(params)`.
pub trait Method {
    /// The JSON-RPC method name, e.g. `session/create`.
    const NAME: &'static str;
    type Params: Serialize;
    type Result: DeserializeOwned;
}

/// A request the server sends to the client ([`server_requests`]).
pub trait ServerRequest {
    const NAME: &'static str;
    type Params: DeserializeOwned;
    type Result: Serialize;
}

/// Fields where absent, null and a value mean three things: `Option<Option<T>>`.
pub(crate) mod nullable {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize>(value: &Option<Option<T>>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(Some(v)) => v.serialize(s),
            _ => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

/// `value` (an object) with `key: tag` added: how a variant of a union carries its tag.
pub(crate) fn with_tag(key: &str, tag: &str, mut value: serde_json::Value) -> serde_json::Value {
    if let Some(map) = value.as_object_mut() {
        map.insert(key.to_string(), serde_json::Value::String(tag.to_string()));
    }
    value
}

/// The summarizing providers a sidecar knows (`CompactParams.provider`; `capabilities.providers`
/// lists what a running sidecar has).
pub mod providers {
    /// No model: an extractive summary; the default when no key is set.
    pub const OFFLINE: &str = "offline";
    /// Your own model, through [`crate::ClientBuilder::summarizer`].
    pub const CLIENT: &str = "client";
    /// Needs a key (settings or `ANTHROPIC_API_KEY`).
    pub const ANTHROPIC: &str = "anthropic";
    /// Needs a key (settings or `OPENAI_API_KEY`).
    pub const OPENAI: &str = "openai";
}

impl From<i64> for NumberOrString {
    fn from(n: i64) -> Self {
        NumberOrString::Number(n)
    }
}

impl From<&str> for NumberOrString {
    fn from(s: &str) -> Self {
        NumberOrString::String(s.to_string())
    }
}

impl From<String> for NumberOrString {
    fn from(s: String) -> Self {
        NumberOrString::String(s)
    }
}

impl std::fmt::Display for NumberOrString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NumberOrString::Number(n) => write!(f, "{n}"),
            NumberOrString::String(s) => f.write_str(s),
        }
    }
}
