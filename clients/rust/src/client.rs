use crate::error::{protocol_major, Error, Result};
use crate::framing::{Framing, MAX_MESSAGE_BYTES};
use crate::{
    methods, server_requests, ClientInfo, ErrorKind, ErrorObject, InitializeParams, InitializeResult, Method,
    ProgressParams, ServerNotification, ServerRequest, Settings, SummarizeParams, SummarizeResult, WorkDoneProgress,
    PROTOCOL_VERSION,
};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::ffi::OsString;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::marker::PhantomData;
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A `$/progress` callback; it runs on the client's reader thread, so keep it short.
pub type ProgressFn = Box<dyn FnMut(WorkDoneProgress) + Send + 'static>;
type SummarizeFn = dyn Fn(SummarizeParams) -> std::result::Result<SummarizeResult, ErrorObject> + Send + Sync;
type NotificationFn = dyn Fn(ServerNotification) + Send + Sync;
/// A typed handler: takes its own notification (None), hands any other back.
type TypedFn = dyn Fn(ServerNotification) -> Option<ServerNotification> + Send + Sync;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// -- the answer slot of one request ---------------------------------------------------

#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    ready: Condvar,
}

#[derive(Default)]
struct SlotState {
    outcome: Option<Result<Value>>,
    taken: bool,
    waker: Option<Waker>,
}

impl Slot {
    fn filled(outcome: Result<Value>) -> Arc<Slot> {
        let slot = Arc::new(Slot::default());
        slot.fill(outcome);
        slot
    }

    fn fill(&self, outcome: Result<Value>) {
        let waker = {
            let mut state = lock(&self.state);
            if state.outcome.is_some() || state.taken {
                return;
            }
            state.outcome = Some(outcome);
            state.waker.take()
        };
        self.ready.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn is_done(&self) -> bool {
        let state = lock(&self.state);
        state.outcome.is_some() || state.taken
    }

    /// Blocks until the outcome is there, or until `deadline`.
    fn wait(&self, deadline: Option<Instant>) -> Option<Result<Value>> {
        let mut state = lock(&self.state);
        loop {
            if let Some(outcome) = state.outcome.take() {
                state.taken = true;
                return Some(outcome);
            }
            match deadline {
                None => state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return None;
                    }
                    state = self.ready.wait_timeout(state, d - now).unwrap_or_else(|e| e.into_inner()).0;
                }
            }
        }
    }
}

// -- the connection shared by the client, its reader thread and pending calls ---------------

struct Pending {
    slot: Arc<Slot>,
    token: Option<String>,
}

#[derive(Default)]
struct Table {
    pending: HashMap<i64, Pending>,
    progress: HashMap<String, Arc<Mutex<ProgressFn>>>,
    /// Errors answered with `id: null`, not yet matched to the call they were for.
    orphans: Vec<Orphan>,
    closed: bool,
    /// The spawned sidecar's status, once the reader saw its output end and it had exited.
    exit: Option<ExitStatus>,
}

/// An error the sidecar answered with `id: null`: it could not read the id of a frame (not
/// UTF-8, not JSON, over the size limit with an unreadable head). That frame was one of the
/// requests in flight when the error came: the suspects. Our notifications cannot be it:
/// serde_json writes valid JSON and frames over the limit are refused before sending.
struct Orphan {
    error: ErrorObject,
    suspects: HashSet<i64>,
}

impl Table {
    /// Matches null-id errors to calls where the match is certain, and returns what to fill.
    /// Every request gets exactly one answer, so a call answered by its id is no suspect; an
    /// error left with one suspect was that call's; when the suspects of all unmatched errors
    /// number as many as the errors, each is one error's call (errors in the order they came,
    /// calls in the order they were sent). A call given up on (dropped, timed out) stays a
    /// suspect: it can absorb an error, never make another call take one not its own.
    fn settle_orphans(&mut self) -> Vec<(Arc<Slot>, Result<Value>)> {
        let mut settled = Vec::new();
        loop {
            self.orphans.retain(|o| !o.suspects.is_empty());
            let Some(i) = self.orphans.iter().position(|o| o.suspects.len() == 1) else { break };
            let orphan = self.orphans.remove(i);
            let id = *orphan.suspects.iter().next().expect("one suspect");
            settled.extend(self.settle(id, orphan.error));
        }
        let union: HashSet<i64> = self.orphans.iter().flat_map(|o| o.suspects.iter().copied()).collect();
        if !self.orphans.is_empty() && union.len() == self.orphans.len() {
            let mut ids: Vec<i64> = union.into_iter().collect();
            ids.sort_unstable();
            let orphans = std::mem::take(&mut self.orphans);
            for (id, orphan) in ids.into_iter().zip(orphans) {
                settled.extend(self.settle(id, orphan.error));
            }
        }
        settled
    }

    fn settle(&mut self, id: i64, error: ErrorObject) -> Option<(Arc<Slot>, Result<Value>)> {
        for o in &mut self.orphans {
            o.suspects.remove(&id);
        }
        let p = self.pending.remove(&id)?;
        if let Some(t) = p.token {
            self.progress.remove(&t);
        }
        Some((p.slot, Err(Error::Rpc(error))))
    }

    /// Why a call cannot be answered any more: the process's status when known.
    fn gone(&self) -> Error {
        match self.exit {
            Some(status) => Error::Exited(status),
            None => Error::Disconnected,
        }
    }
}

struct Shared {
    framing: Framing,
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    table: Mutex<Table>,
    next_id: AtomicI64,
    summarizer: Option<Arc<SummarizeFn>>,
    on_notification: Option<Arc<NotificationFn>>,
    typed: Vec<Arc<TypedFn>>,
    /// The spawned sidecar (None for attached streams); the reader reads its status at the end.
    child: Mutex<Option<Child>>,
    /// Set by close and kill: later calls and notifications fail with [`Error::Closed`].
    closing: AtomicBool,
}

/// The `payloadTooLarge` error a frame over the limit gets, before anything is sent.
fn payload_too_large(method: &str, size: usize) -> Error {
    Error::Rpc(ErrorObject {
        code: ErrorKind::PayloadTooLarge.code(),
        message: format!(
            "{method}: the message is {size} bytes, over the sidecar's limit of {MAX_MESSAGE_BYTES} (64 MiB); nothing was sent"
        ),
        data: json!({"kind": "payloadTooLarge", "size": size, "limit": MAX_MESSAGE_BYTES}),
    })
}

impl Shared {
    fn send(&self, message: &Value) -> Result<()> {
        let body = serde_json::to_vec(message).map_err(Error::Encode)?;
        if body.len() > MAX_MESSAGE_BYTES {
            return Err(payload_too_large(message.get("method").and_then(Value::as_str).unwrap_or("message"), body.len()));
        }
        self.send_body(&body)
    }

    fn send_body(&self, body: &[u8]) -> Result<()> {
        let mut writer = lock(&self.writer);
        match writer.as_mut() {
            Some(w) => self.framing.write(w.as_mut(), body).map_err(|e| match e.kind() {
                // The sidecar closed its input: it has exited, or is about to.
                std::io::ErrorKind::BrokenPipe => Error::Disconnected,
                _ => Error::Io(e),
            }),
            None => Err(Error::Disconnected),
        }
    }

    fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            message["params"] = p;
        }
        self.send(&message)
    }

    fn start(&self, method: &str, params: Value, progress: Option<ProgressFn>) -> (i64, Arc<Slot>) {
        if self.closing.load(Ordering::SeqCst) && method != methods::Shutdown::NAME {
            return (0, Slot::filled(Err(Error::Closed)));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut params = params;
        let token = progress.is_some().then(|| format!("progress-{id}"));
        if let Some(token) = &token {
            if params.is_null() {
                params = json!({});
            }
            match params.as_object_mut() {
                Some(map) => {
                    map.insert("workDoneToken".into(), Value::String(token.clone()));
                }
                None => return (id, Slot::filled(Err(Error::Protocol("params must be an object to carry a progress token".into())))),
            }
        }
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        match serde_json::to_vec(&message) {
            Ok(body) => self.start_body(id, method, body, token, progress),
            Err(e) => (id, Slot::filled(Err(Error::Encode(e)))),
        }
    }

    /// A request whose params are JSON text as given (lone surrogate escapes included).
    fn start_raw_json(&self, method: &str, params: &RawValue) -> (i64, Arc<Slot>) {
        if self.closing.load(Ordering::SeqCst) {
            return (0, Slot::filled(Err(Error::Closed)));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let method_json = serde_json::to_string(method).expect("a string encodes");
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method_json},"params":{}}}"#, params.get());
        self.start_body(id, method, body.into_bytes(), None, None)
    }

    fn start_body(
        &self,
        id: i64,
        method: &str,
        body: Vec<u8>,
        token: Option<String>,
        progress: Option<ProgressFn>,
    ) -> (i64, Arc<Slot>) {
        if body.len() > MAX_MESSAGE_BYTES {
            return (id, Slot::filled(Err(payload_too_large(method, body.len()))));
        }
        let slot = Arc::new(Slot::default());
        {
            let mut table = lock(&self.table);
            if table.closed {
                return (id, Slot::filled(Err(table.gone())));
            }
            if let (Some(token), Some(f)) = (&token, progress) {
                table.progress.insert(token.clone(), Arc::new(Mutex::new(f)));
            }
            table.pending.insert(id, Pending { slot: slot.clone(), token });
        }
        if let Err(e) = self.send_body(&body) {
            self.forget(id);
            slot.fill(Err(match e {
                // The sidecar closed its input: say how it ended once the reader has seen it.
                Error::Disconnected => self.gone_within(Duration::from_secs(1)),
                e => e,
            }));
        }
        (id, slot)
    }

    /// Waits up to `limit` for the reader to see the end of the sidecar's output, then says
    /// why calls cannot be answered ([`Error::Exited`] with the status when known).
    fn gone_within(&self, limit: Duration) -> Error {
        let deadline = Instant::now() + limit;
        loop {
            {
                let table = lock(&self.table);
                if table.closed {
                    return table.gone();
                }
            }
            if Instant::now() >= deadline {
                return Error::Disconnected;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops tracking request `id` (its answer, if one comes, is dropped).
    fn forget(&self, id: i64) {
        let mut table = lock(&self.table);
        if let Some(p) = table.pending.remove(&id) {
            if let Some(t) = p.token {
                table.progress.remove(&t);
            }
        }
    }

    fn cancel(&self, id: i64) {
        let _ = self.notify("$/cancelRequest", Some(json!({ "id": id })));
    }

    // -- the reader thread -----------------------------------------------------------

    fn read_loop(self: Arc<Self>, mut input: Box<dyn BufRead + Send>) {
        // Until end of input or a frame that cannot be read (the stream is lost then).
        while let Ok(Some(body)) = self.framing.read(input.as_mut()) {
            // Not JSON: nothing in it can be matched to a request.
            if let Ok(message) = serde_json::from_slice::<Value>(&body) {
                self.dispatch(message);
            }
        }
        let exit = self.exit_status();
        let (pending, gone): (Vec<Pending>, _) = {
            let mut table = lock(&self.table);
            table.closed = true;
            table.exit = exit;
            table.progress.clear();
            table.orphans.clear();
            (table.pending.drain().map(|(_, p)| p).collect(), exit)
        };
        for p in pending {
            p.slot.fill(Err(match gone {
                Some(status) => Error::Exited(status),
                None => Error::Disconnected,
            }));
        }
    }

    /// The spawned sidecar's exit status, waiting briefly for the process to end after its
    /// output did (None for attached streams, or a process still running).
    fn exit_status(&self) -> Option<ExitStatus> {
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            // close() holds the child while it waits for it: never block on it here.
            if let Ok(mut child) = self.child.try_lock() {
                match child.as_mut() {
                    None => return None,
                    Some(c) => {
                        if let Ok(Some(status)) = c.try_wait() {
                            return Some(status);
                        }
                    }
                }
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn dispatch(self: &Arc<Self>, mut message: Value) {
        let method = message.get("method").and_then(Value::as_str).map(str::to_string);
        let params = message.get_mut("params").map(Value::take).unwrap_or(Value::Null);
        match (method, message.get("id").cloned()) {
            (Some(method), Some(id)) => self.answer_server_request(method, id, params),
            (Some(method), None) => self.on_notification(&method, params),
            (None, None | Some(Value::Null)) => {
                // An error for a frame the sidecar could not read the id of.
                let Some(error) = message.get_mut("error").map(Value::take) else { return };
                let error = serde_json::from_value::<ErrorObject>(error)
                    .unwrap_or_else(|e| ErrorObject::new(ErrorKind::ParseError.code(), format!("an unreadable error answer: {e}")));
                let settled = {
                    let mut table = lock(&self.table);
                    let suspects = table.pending.keys().copied().collect();
                    table.orphans.push(Orphan { error, suspects });
                    table.settle_orphans()
                };
                for (slot, outcome) in settled {
                    slot.fill(outcome);
                }
            }
            (None, Some(Value::Number(id))) => {
                let Some(id) = id.as_i64() else { return };
                let (pending, settled) = {
                    let mut table = lock(&self.table);
                    for o in &mut table.orphans {
                        o.suspects.remove(&id);
                    }
                    let settled = table.settle_orphans();
                    let p = table.pending.remove(&id);
                    if let Some(t) = p.as_ref().and_then(|p| p.token.as_ref()) {
                        table.progress.remove(t);
                    }
                    (p, settled)
                };
                for (slot, outcome) in settled {
                    slot.fill(outcome);
                }
                let Some(pending) = pending else { return };
                let outcome = match message.get_mut("error") {
                    Some(error) if !error.is_null() => match serde_json::from_value::<ErrorObject>(error.take()) {
                        Ok(e) => Err(Error::Rpc(e)),
                        Err(e) => Err(Error::Protocol(format!("an error object that does not fit the schema: {e}"))),
                    },
                    _ => Ok(message.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
                };
                pending.slot.fill(outcome);
            }
            _ => {} // an answer to no request of ours
        }
    }

    fn on_notification(&self, method: &str, params: Value) {
        if method == "$/progress" {
            if let Ok(p) = serde_json::from_value::<ProgressParams>(params.clone()) {
                let callback = match &p.token {
                    crate::NumberOrString::String(t) => lock(&self.table).progress.get(t).cloned(),
                    _ => None,
                };
                if let Some(callback) = callback {
                    (lock(&callback))(p.value);
                    return;
                }
            }
        }
        if self.on_notification.is_none() && self.typed.is_empty() {
            return;
        }
        let mut n = ServerNotification::decode(method, params.clone())
            .unwrap_or(ServerNotification::Other { method: method.to_string(), params });
        for handler in &self.typed {
            match handler(n) {
                None => return,
                Some(back) => n = back,
            }
        }
        if let Some(f) = &self.on_notification {
            f(n);
        }
    }

    fn answer_server_request(self: &Arc<Self>, method: String, id: Value, params: Value) {
        // autoCompact's progress token: accepted when someone listens for notifications
        // (its `$/progress` reaches `on_notification`), refused otherwise so none is sent.
        if method == server_requests::Create::NAME && (self.on_notification.is_some() || !self.typed.is_empty()) {
            let _ = self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            return;
        }
        let summarizer = match (method.as_str(), &self.summarizer) {
            (server_requests::Summarize::NAME, Some(s)) => s.clone(),
            _ => {
                let error = ErrorObject {
                    code: ErrorKind::MethodNotFound.code(),
                    message: format!("this client does not answer {method}"),
                    data: json!({"kind": "methodNotFound", "method": method}),
                };
                let _ = self.send(&json!({"jsonrpc": "2.0", "id": id, "error": error}));
                return;
            }
        };
        // The summarizer may take minutes (a model call): never on the reader thread.
        let shared = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("session-sidecar-summarize".into())
            .spawn(move || {
                let answer = match serde_json::from_value::<SummarizeParams>(params) {
                    // A panic must still answer, or the compaction would wait for ever.
                    Ok(p) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| summarizer(p))).unwrap_or_else(|panic| {
                        let what = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "a panic".into());
                        Err(ErrorObject::from(format!("the summarizer panicked: {what}")))
                    }),
                    Err(e) => Err(ErrorObject {
                        code: ErrorKind::InvalidParams.code(),
                        message: format!("session/summarize params do not fit: {e}"),
                        data: json!({"kind": "invalidParams"}),
                    }),
                };
                let message = match answer {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                };
                if let Some(shared) = shared.upgrade() {
                    let _ = shared.send(&message);
                }
            })
            .expect("spawn a thread");
    }
}

// -- pending calls ------------------------------------------------------------------

/// A request in flight: [`wait`](Self::wait) for it, [`cancel`](Self::cancel) it, or `.await` it.
///
/// Dropping it before its answer came sends `$/cancelRequest` (so a dropped future, e.g. the
/// loser of a `select!`, cancels its request). It is `Send`: move it to another thread, or
/// into an async task; the answer wakes whichever is waiting.
#[must_use = "dropping a PendingCall cancels the request"]
pub struct PendingCall<R> {
    id: i64,
    method: String,
    slot: Arc<Slot>,
    shared: Arc<Shared>,
    finished: bool,
    _result: PhantomData<fn() -> R>,
}

/// Cancels one request from anywhere (another thread, a signal handler's thread, a UI button).
#[derive(Clone)]
pub struct CancelHandle {
    id: i64,
    slot: Weak<Slot>,
    shared: Weak<Shared>,
}

impl CancelHandle {
    /// Sends `$/cancelRequest` unless the answer is already in. The server stops the request
    /// at its next safe point and answers `requestCancelled` (-32800), or finishes it and
    /// answers normally when it was past the point of no return.
    pub fn cancel(&self) {
        let (Some(slot), Some(shared)) = (self.slot.upgrade(), self.shared.upgrade()) else { return };
        if !slot.is_done() {
            shared.cancel(self.id);
        }
    }

    /// The JSON-RPC id of the request.
    pub fn id(&self) -> i64 {
        self.id
    }
}

impl<R: DeserializeOwned> PendingCall<R> {
    /// The JSON-RPC id of the request.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// Asks the server to cancel the request (see [`CancelHandle::cancel`]); then wait as usual.
    pub fn cancel(&self) {
        self.cancel_handle().cancel();
    }

    /// A handle that cancels this request, for another thread.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle { id: self.id, slot: Arc::downgrade(&self.slot), shared: Arc::downgrade(&self.shared) }
    }

    /// True once the answer is in (`wait` will not block).
    pub fn is_ready(&self) -> bool {
        self.slot.is_done()
    }

    /// Blocks until the answer comes.
    pub fn wait(mut self) -> Result<R> {
        let outcome = self.slot.wait(None).expect("waited without deadline");
        self.finish(outcome)
    }

    /// Blocks until the answer comes or `timeout` passes; then the request is cancelled and
    /// the error is [`Error::Timeout`].
    pub fn wait_timeout(mut self, timeout: Duration) -> Result<R> {
        match self.slot.wait(Some(Instant::now() + timeout)) {
            Some(outcome) => self.finish(outcome),
            None => Err(Error::Timeout { method: self.method.clone(), after: timeout }),
        }
    }

    fn finish(&mut self, outcome: Result<Value>) -> Result<R> {
        self.finished = true;
        let value = outcome?;
        serde_json::from_value(value).map_err(|source| Error::Decode { method: self.method.clone(), source })
    }
}

impl<R: DeserializeOwned> Future for PendingCall<R> {
    type Output = Result<R>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<R>> {
        let this = self.get_mut();
        let outcome = {
            let mut state = lock(&this.slot.state);
            match state.outcome.take() {
                Some(o) => {
                    state.taken = true;
                    o
                }
                None => {
                    state.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
            }
        };
        Poll::Ready(this.finish(outcome))
    }
}

impl<R> Drop for PendingCall<R> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let done = self.slot.is_done();
        self.shared.forget(self.id);
        if !done {
            self.shared.cancel(self.id);
        }
    }
}

impl<R> std::fmt::Debug for PendingCall<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingCall").field("id", &self.id).field("method", &self.method).finish()
    }
}

// -- the client -------------------------------------------------------------------

/// A connection to one session-sidecar: spawned by [`ClientBuilder::spawn`] or attached to
/// streams by [`ClientBuilder::connect`], initialized and ready.
///
/// `Send + Sync`: share it with `Arc<Client>`. [`close`](Self::close) ends it politely
/// (`shutdown`, `exit`, then the process is waited for, and killed after the close timeout);
/// dropping it does the same.
pub struct Client {
    shared: Arc<Shared>,
    reader: Mutex<Option<JoinHandle<()>>>,
    init: InitializeResult,
    close_timeout: Duration,
    exit: Mutex<Option<Option<ExitStatus>>>,
    pid: Option<u32>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("pid", &self.pid).field("server", &self.init.server_info).finish()
    }
}

impl Client {
    /// Options for spawning or attaching.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Spawns `session-sidecar` with the default options (see [`ClientBuilder`]).
    pub fn spawn() -> Result<Client> {
        ClientBuilder::default().spawn()
    }

    /// What the server answered to `initialize`: its version, capabilities, sessions root, settings.
    pub fn server(&self) -> &InitializeResult {
        &self.init
    }

    /// The sidecar's process id, when this client spawned it.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Calls method `M` and blocks until its answer: `client.call::<methods::List>(params)`.
    pub fn call<M: Method>(&self, params: M::Params) -> Result<M::Result> {
        self.start::<M>(params).wait()
    }

    /// Sends a request for method `M` and returns at once with its [`PendingCall`].
    pub fn start<M: Method>(&self, params: M::Params) -> PendingCall<M::Result> {
        self.start_inner::<M>(params, None)
    }

    /// Like [`start`](Self::start), with `on_progress` called for each `$/progress` of this
    /// request (`begin`, `report`s, `end`, all before the answer), on the reader thread.
    pub fn start_with_progress<M: Method>(
        &self,
        params: M::Params,
        on_progress: impl FnMut(WorkDoneProgress) + Send + 'static,
    ) -> PendingCall<M::Result> {
        self.start_inner::<M>(params, Some(Box::new(on_progress)))
    }

    fn start_inner<M: Method>(&self, params: M::Params, progress: Option<ProgressFn>) -> PendingCall<M::Result> {
        match serde_json::to_value(&params) {
            Ok(params) => {
                let (id, slot) = self.shared.start(M::NAME, params, progress);
                self.pending(id, M::NAME, slot)
            }
            Err(e) => self.pending(0, M::NAME, Slot::filled(Err(Error::Encode(e)))),
        }
    }

    /// Any method with JSON params and result (for methods newer than this crate).
    pub fn start_raw(&self, method: &str, params: Value, progress: Option<ProgressFn>) -> PendingCall<Value> {
        let (id, slot) = self.shared.start(method, params, progress);
        self.pending(id, method, slot)
    }

    /// [`start_raw`](Self::start_raw), waited for.
    pub fn call_raw(&self, method: &str, params: Value) -> Result<Value> {
        self.start_raw(method, params, None).wait()
    }

    /// Sends a request whose params are JSON text exactly as given: for what a Rust `String`
    /// cannot hold, such as the lone surrogate escape `"\ud83d"` JavaScript writes for a cut
    /// emoji. Over [`MAX_MESSAGE_BYTES`] it is not sent (`payloadTooLarge`).
    pub fn start_raw_json(&self, method: &str, params: &RawValue) -> PendingCall<Value> {
        let (id, slot) = self.shared.start_raw_json(method, params);
        self.pending(id, method, slot)
    }

    /// Sends a notification (nothing answers it). After [`close`](Self::close): [`Error::Closed`].
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        if self.shared.closing.load(Ordering::SeqCst) {
            return Err(Error::Closed);
        }
        self.shared.notify(method, params)
    }

    fn pending<R>(&self, id: i64, method: &str, slot: Arc<Slot>) -> PendingCall<R> {
        PendingCall { id, method: method.to_string(), slot, shared: self.shared.clone(), finished: false, _result: PhantomData }
    }

    /// Ends the session politely: `shutdown` (the server finishes what is in flight and
    /// closes its sessions), `exit`, end of input; then waits for the process. Whatever is
    /// still running when the close timeout is over is killed. The process's exit status
    /// (`None` for attached streams). Calling it again returns the same status.
    pub fn close(&self) -> Result<Option<ExitStatus>> {
        let mut exit = lock(&self.exit);
        if let Some(status) = *exit {
            return Ok(status);
        }
        let deadline = Instant::now() + self.close_timeout;
        self.shared.closing.store(true, Ordering::SeqCst);
        let (id, slot) = self.shared.start(methods::Shutdown::NAME, Value::Null, None);
        let shutdown = slot.wait(Some(deadline));
        if shutdown.is_none() {
            self.shared.forget(id);
        }
        let _ = self.shared.notify("exit", None);
        lock(&self.shared.writer).take(); // end of input for the server
        let status = match lock(&self.shared.child).as_mut() {
            Some(child) => Some(wait_or_kill(child, deadline)?),
            None => None,
        };
        if status.is_some() {
            // The process is gone, so its stdout is closed and the reader ends.
            if let Some(reader) = lock(&self.reader).take() {
                let _ = reader.join();
            }
        }
        *exit = Some(status);
        Ok(status)
    }

    /// Kills the sidecar at once, without `shutdown` (it loses nothing fsynced; see the
    /// store's fsync policy). Calls in flight fail with [`Error::Exited`]; later calls with [`Error::Closed`].
    pub fn kill(&self) -> Result<Option<ExitStatus>> {
        let mut exit = lock(&self.exit);
        self.shared.closing.store(true, Ordering::SeqCst);
        let status = match lock(&self.shared.child).as_mut() {
            Some(child) => {
                let _ = child.kill();
                Some(child.wait()?)
            }
            None => None,
        };
        lock(&self.shared.writer).take();
        *exit = Some(status);
        Ok(status)
    }
}

fn wait_or_kill(child: &mut Child, deadline: Instant) -> Result<ExitStatus> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            return Ok(child.wait()?);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

// -- the builder ------------------------------------------------------------------

/// How to start (or attach to) a sidecar. Every option has a default:
///
/// ```no_run
/// # use session_sidecar::Client;
/// # use std::time::Duration;
/// let client = Client::builder()
///     .program("/opt/bin/session-sidecar")     // else $SESSION_SIDECAR_BIN, else `session-sidecar` on PATH
///     .root("/home/me/.pi/agent/sessions")     // the sessions root (initialize's sessionRoot)
///     .client_name("my-agent", "1.2.0")
///     .close_timeout(Duration::from_secs(5))
///     .spawn()?;
/// # Ok::<(), session_sidecar::Error>(())
/// ```
pub struct ClientBuilder {
    program: Option<PathBuf>,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    stderr: Option<Stdio>,
    framing: Framing,
    root: Option<PathBuf>,
    settings: Option<Settings>,
    client_info: ClientInfo,
    startup_timeout: Duration,
    close_timeout: Duration,
    summarizer: Option<Arc<SummarizeFn>>,
    on_notification: Option<Arc<NotificationFn>>,
    typed: Vec<Arc<TypedFn>>,
    token: Option<String>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            program: None,
            args: Vec::new(),
            envs: Vec::new(),
            stderr: None,
            framing: Framing::Lsp,
            root: None,
            settings: None,
            client_info: ClientInfo { name: "session-sidecar-rust".into(), version: Some(env!("CARGO_PKG_VERSION").into()) },
            startup_timeout: Duration::from_secs(30),
            close_timeout: Duration::from_secs(10),
            summarizer: None,
            on_notification: None,
            typed: Vec::new(),
            token: None,
        }
    }
}

impl ClientBuilder {
    /// The program to run: the sidecar executable (a path, or a name on `PATH`), or a launcher
    /// whose leading arguments follow with [`ClientBuilder::arg`] (`.program("uvx").arg("session-sidecar")`).
    /// Default: `$SESSION_SIDECAR_BIN` if set, else `session-sidecar` on `PATH`.
    pub fn program(mut self, program: impl Into<PathBuf>) -> Self {
        self.program = Some(program.into());
        self
    }

    /// An extra command-line argument for the sidecar (e.g. `--config FILE`).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// An environment variable for the sidecar.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Where the sidecar's log goes. Default: inherited (your stderr).
    pub fn stderr(mut self, stderr: Stdio) -> Self {
        self.stderr = Some(stderr);
        self
    }

    /// LSP framing (default) or one JSON object per line.
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// The sessions root (sent as initialize's `sessionRoot`). Default: the sidecar's own
    /// (`--root`, `$SESSION_SIDECAR_HOME` or the user data folder).
    pub fn root(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = Some(root.into());
        self
    }

    /// Settings overrides sent with `initialize` (store, compaction, providers).
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// Who is calling (initialize's `clientInfo`).
    pub fn client_name(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info = ClientInfo { name: name.into(), version: Some(version.into()) };
        self
    }

    /// How long `initialize` may take. Default 30 s.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// How long [`Client::close`] waits (for `shutdown`, then for the process to exit)
    /// before it kills the process. Default 10 s.
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// Answers the server's `session/summarize` requests (compaction with `provider:
    /// "client"`) with your own model. It runs on a thread of its own, one per request; an
    /// `Err` is sent back as the error answer (the compaction then fails with `providerError`).
    pub fn summarizer(
        mut self,
        f: impl Fn(SummarizeParams) -> std::result::Result<SummarizeResult, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.summarizer = Some(Arc::new(f));
        self
    }

    /// Called (on the reader thread) for every notification from the server that no typed
    /// handler (`on_did_append`, `on_did_compact`, ...) took and that is not the progress of
    /// a call started with a progress callback: the escape hatch (`ServerNotification::Other`
    /// for methods newer than this crate).
    pub fn on_notification(mut self, f: impl Fn(ServerNotification) + Send + Sync + 'static) -> Self {
        self.on_notification = Some(Arc::new(f));
        self
    }

    /// Adds a typed handler (the generated `on_did_append`, `on_did_change_leaf`, ... use it):
    /// it takes its notification and returns `None`, or hands any other back.
    #[doc(hidden)]
    pub fn typed_notification(mut self, f: impl Fn(ServerNotification) -> Option<ServerNotification> + Send + Sync + 'static) -> Self {
        self.typed.push(Arc::new(f));
        self
    }

    /// The token of a sidecar serving TCP (`serve --listen`, its `--token-file`), sent in
    /// `initialize`. Without it, or with another, connecting fails with the server's
    /// `unauthorized` error (-33071) and the server hangs up.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Attaches to a shared sidecar's unix socket (`serve --socket PATH`) and initializes it.
    #[cfg(unix)]
    pub fn connect_unix(self, path: impl AsRef<Path>) -> Result<Client> {
        let stream = UnixStream::connect(path).map_err(Error::Io)?;
        let reading = stream.try_clone().map_err(Error::Io)?;
        self.connect(reading, SocketWriter(stream))
    }

    /// [`connect_unix`](Self::connect_unix), retrying while nothing accepts on `path` yet
    /// (a sidecar still starting), for up to `wait`.
    #[cfg(unix)]
    pub fn connect_unix_waiting(self, path: impl AsRef<Path>, wait: Duration) -> Result<Client> {
        let deadline = Instant::now() + wait;
        let stream = loop {
            match UnixStream::connect(path.as_ref()) {
                Ok(stream) => break stream,
                Err(e) if Instant::now() >= deadline => return Err(Error::Io(e)),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        let reading = stream.try_clone().map_err(Error::Io)?;
        self.connect(reading, SocketWriter(stream))
    }

    /// Attaches to a sidecar serving TCP (`serve --listen HOST:PORT`; give its [`token`](Self::token))
    /// and initializes it.
    pub fn connect_tcp(self, addr: impl ToSocketAddrs) -> Result<Client> {
        let stream = TcpStream::connect(addr).map_err(Error::Io)?;
        let _ = stream.set_nodelay(true); // one small frame per call: do not wait to fill a packet
        let reading = stream.try_clone().map_err(Error::Io)?;
        self.connect(reading, SocketWriter(stream))
    }

    fn program_path(&self) -> PathBuf {
        if let Some(p) = &self.program {
            return p.clone();
        }
        match std::env::var_os("SESSION_SIDECAR_BIN") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => PathBuf::from("session-sidecar"),
        }
    }

    /// Starts the sidecar as a child process and initializes it.
    pub fn spawn(mut self) -> Result<Client> {
        let program = self.program_path();
        let mut command = Command::new(&program);
        command.args(&self.args);
        if self.framing == Framing::Jsonl {
            command.arg("--jsonl");
        }
        command.envs(self.envs.drain(..));
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(self.stderr.take().unwrap_or_else(Stdio::inherit));
        let mut child = command.spawn().map_err(|source| Error::Spawn { program, source })?;
        let stdin: ChildStdin = child.stdin.take().expect("piped stdin");
        let stdout: ChildStdout = child.stdout.take().expect("piped stdout");
        self.start(Box::new(BufReader::new(stdout)), Box::new(stdin), Some(child))
    }

    /// Attaches to a sidecar already running at the other end of `input` / `output` (a
    /// socket, pipes you made), and initializes it.
    pub fn connect(self, input: impl Read + Send + 'static, output: impl Write + Send + 'static) -> Result<Client> {
        self.start(Box::new(BufReader::new(input)), Box::new(output), None)
    }

    fn start(self, input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>, child: Option<Child>) -> Result<Client> {
        let shared = Arc::new(Shared {
            framing: self.framing,
            writer: Mutex::new(Some(output)),
            table: Mutex::new(Table::default()),
            next_id: AtomicI64::new(1),
            summarizer: self.summarizer,
            on_notification: self.on_notification,
            typed: self.typed,
            child: Mutex::new(child),
            closing: AtomicBool::new(false),
        });
        let reader = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("session-sidecar-reader".into())
                .spawn(move || shared.read_loop(input))
                .map_err(Error::Io)?
        };
        let pid = lock(&shared.child).as_ref().map(Child::id);
        let params = InitializeParams {
            client_info: Some(self.client_info),
            protocol_version: PROTOCOL_VERSION.to_string(),
            session_root: self.root.map(|p| p.to_string_lossy().into_owned()),
            settings: match self.settings {
                Some(s) => Some(serde_json::to_value(s).map_err(Error::Encode)?),
                None => None,
            },
            token: self.token,
            keep_serving: None,
        };
        let (id, slot) = shared.start(methods::Initialize::NAME, serde_json::to_value(params).map_err(Error::Encode)?, None);
        let answer = match slot.wait(Some(Instant::now() + self.startup_timeout)) {
            Some(outcome) => outcome.and_then(|v| {
                serde_json::from_value::<InitializeResult>(v)
                    .map_err(|source| Error::Decode { method: methods::Initialize::NAME.into(), source })
            }),
            None => {
                shared.forget(id);
                Err(Error::Timeout { method: methods::Initialize::NAME.into(), after: self.startup_timeout })
            }
        };
        let answer = match answer {
            // A sidecar of another major refuses our version and says which it speaks.
            Err(Error::Rpc(e)) if e.field() == Some("protocolVersion") && e.data.get("supported").is_some_and(|v| v.is_string()) => {
                Err(Error::ProtocolVersion {
                    server: e.data["supported"].as_str().unwrap_or_default().to_string(),
                    client: PROTOCOL_VERSION.to_string(),
                })
            }
            Ok(init) if protocol_major(&init.protocol_version) != protocol_major(PROTOCOL_VERSION) => {
                Err(Error::ProtocolVersion { server: init.protocol_version, client: PROTOCOL_VERSION.to_string() })
            }
            other => other,
        };
        let init = match answer.and_then(|init| shared.notify("initialized", Some(json!({}))).map(|_| init)) {
            Ok(init) => init,
            Err(e) => {
                lock(&shared.writer).take();
                if let Some(c) = lock(&shared.child).as_mut() {
                    let _ = c.kill();
                    let _ = c.wait();
                    let _ = reader.join();
                }
                return Err(e);
            }
        };
        Ok(Client {
            shared,
            reader: Mutex::new(Some(reader)),
            init,
            close_timeout: self.close_timeout,
            exit: Mutex::new(None),
            pid,
        })
    }
}

/// A socket's writing half. Dropped (on [`Client::close`]), it shuts the socket's writing
/// side, so the server reads the end of input as a spawned sidecar's stdin closing.
struct SocketWriter<S: ShutWrite>(S);

trait ShutWrite: Write {
    fn shut_write(&self);
}

impl ShutWrite for TcpStream {
    fn shut_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

#[cfg(unix)]
impl ShutWrite for UnixStream {
    fn shut_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

impl<S: ShutWrite> Write for SocketWriter<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl<S: ShutWrite> Drop for SocketWriter<S> {
    fn drop(&mut self) {
        self.0.shut_write();
    }
}
