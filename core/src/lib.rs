//! sidecar_core: the compiled path of sidecar/corepath (see its __init__.py for the interface).
//!
//! Four things, each one a profile named: a stretch of whole lines read for the
//! tree's fields (scan.rs), in place of msgspec's decode of the stretch and the
//! Python loop over its lines (a large session's open); redaction's gate on
//! an entry's line (gate.rs), in place of rules.py's (an export's first look);
//! the tree's index of those entries and its path walk (tree.rs), in place of
//! store/tree.py's loops (the same open, right after the scan); and a Codex
//! rollout's lines mapped to pi entries (import_codex.rs), in place of
//! importers/codex.py's per-line mapping (an import's mapping).

mod gate;
mod import_codex;
mod scan;
mod tree;

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use scan::{envelope_into, Envelope, Head, Value};

/// A multiply-and-rotate hash (FxHash's) for the few short keys of a scan's lookups: SipHash, the default, cost
/// a tenth of the scan.
#[derive(Default)]
struct QuickHasher(u64);

impl Hasher for QuickHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type Quick = BuildHasherDefault<QuickHasher>;

/// How many distinct types and heads a scan remembers (past that, each further one is made anew).
const MAX_REMEMBERED: usize = 32;

/// The offset of the next newline in `data` at or after `from`, or None.
pub(crate) fn next_newline(data: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::*;
        let newline = _mm_set1_epi8(b'\n' as i8);
        while at + 16 <= data.len() {
            let chunk = _mm_loadu_si128(data.as_ptr().add(at) as *const __m128i);
            let mask = _mm_movemask_epi8(_mm_cmpeq_epi8(chunk, newline)) as u32;
            if mask != 0 {
                return Some(at + mask.trailing_zeros() as usize);
            }
            at += 16;
        }
    }
    data[at..]
        .iter()
        .position(|&byte| byte == b'\n')
        .map(|offset| at + offset)
}

fn text_or_none(py: Python<'_>, value: &Value, line: &[u8]) -> PyObject {
    match value.text(line) {
        Some(text) => PyString::new(py, text).into_any().unbind(),
        None => py.None(),
    }
}

/// A head's fields as one key: a tag byte and the text of each, so equal heads are looked up once.
fn head_key(key: &mut Vec<u8>, head: &Head, line: &[u8]) {
    key.clear();
    for value in [&head.role, &head.provider, &head.model] {
        match value {
            Value::Absent => key.push(0),
            Value::Null => key.push(1),
            _ => {
                let text = value.text(line).unwrap_or("");
                key.push(2);
                key.extend_from_slice(&(text.len() as u64).to_le_bytes());
                key.extend_from_slice(text.as_bytes());
            }
        }
    }
}

/// The compiled line scanner: makes each head with `head_type(role, provider, model)`, `unset` for an absent
/// provider or model (an absent role is None, the head's default).
#[pyclass(frozen, module = "sidecar_core")]
struct LineScanner {
    head_type: PyObject,
    unset: PyObject,
}

#[pymethods]
impl LineScanner {
    #[new]
    fn new(head_type: PyObject, unset: PyObject) -> Self {
        LineScanner { head_type, unset }
    }

    /// The lines of `buffer[start:stop]` (`stop` where a newline is) as columns: (types, ids, parent ids,
    /// timestamps, heads, starts, lengths), starts relative to the buffer; None when the Python path must read them.
    fn scan<'py>(
        &self,
        py: Python<'py>,
        buffer: &Bound<'py, PyAny>,
        start: usize,
        stop: usize,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let view = PyBuffer::<u8>::get(buffer)?;
        if !view.is_c_contiguous() || start > stop || stop > view.len_bytes() {
            return Ok(None);
        }
        // The buffer stays exported (so neither freed nor resized) until `view` is dropped at the end.
        let data: &[u8] = unsafe { std::slice::from_raw_parts(view.buf_ptr() as *const u8, view.len_bytes()) };
        let stretch = &data[start..stop];
        // One pass: each line is read and its objects made at once (a refused stretch, rare, drops what it made).
        let mut types = Vec::new();
        let mut ids = Vec::new();
        let mut parents = Vec::new();
        let mut stamps = Vec::new();
        let mut heads = Vec::new();
        let mut starts = Vec::new();
        let mut lengths = Vec::new();
        let mut kinds: HashMap<Vec<u8>, PyObject, Quick> = HashMap::default();
        let mut made_heads: HashMap<Vec<u8>, PyObject, Quick> = HashMap::default();
        let mut key = Vec::new();
        // Most entries' parent is the entry before: its id's string object serves for both.
        let mut last_id: Vec<u8> = Vec::new();
        let mut last_id_made: Option<PyObject> = None;
        let mut found = Envelope::new();
        let mut at = 0;
        loop {
            let end = next_newline(stretch, at).unwrap_or(stretch.len());
            let line = &stretch[at..end];
            // A blank line fails here too, as it does in the Python path.
            if line.first() != Some(&b'{') || line.last() != Some(&b'}') {
                return Ok(None);
            }
            found.clear();
            if envelope_into(line, &mut found).is_err() {
                return Ok(None);
            }
            types.push(match found.kind.text(line) {
                Some(text) => match kinds.get(text.as_bytes()) {
                    Some(made) => made.clone_ref(py),
                    None => {
                        let made = PyString::new(py, text).into_any().unbind();
                        if kinds.len() < MAX_REMEMBERED {
                            kinds.insert(text.as_bytes().to_vec(), made.clone_ref(py));
                        }
                        made
                    }
                },
                None => py.None(),
            });
            let parent = match (found.parent_id.text(line), &last_id_made) {
                (Some(text), Some(made)) if text.as_bytes() == last_id.as_slice() => made.clone_ref(py),
                _ => text_or_none(py, &found.parent_id, line),
            };
            parents.push(parent);
            let id = text_or_none(py, &found.id, line);
            match found.id.text(line) {
                Some(text) => {
                    last_id.clear();
                    last_id.extend_from_slice(text.as_bytes());
                    last_id_made = Some(id.clone_ref(py));
                }
                None => last_id_made = None,
            }
            ids.push(id);
            stamps.push(text_or_none(py, &found.timestamp, line));
            heads.push(match &found.head {
                None => py.None(),
                Some(head) => {
                    head_key(&mut key, head, line);
                    match made_heads.get(key.as_slice()) {
                        Some(made) => made.clone_ref(py),
                        None => {
                            let field = |value: &Value, absent: &PyObject| match value {
                                Value::Absent => absent.clone_ref(py),
                                _ => text_or_none(py, value, line),
                            };
                            let made = self.head_type.call1(
                                py,
                                (
                                    field(&head.role, &py.None()),
                                    field(&head.provider, &self.unset),
                                    field(&head.model, &self.unset),
                                ),
                            )?;
                            if made_heads.len() < MAX_REMEMBERED {
                                made_heads.insert(key.clone(), made.clone_ref(py));
                            }
                            made
                        }
                    }
                }
            });
            starts.push(start + at);
            lengths.push(end - at);
            if end == stretch.len() {
                break;
            }
            at = end + 1;
        }
        drop(view);
        let columns = [
            PyList::new(py, types)?.into_any(),
            PyList::new(py, ids)?.into_any(),
            PyList::new(py, parents)?.into_any(),
            PyList::new(py, stamps)?.into_any(),
            PyList::new(py, heads)?.into_any(),
            PyList::new(py, starts)?.into_any(),
            PyList::new(py, lengths)?.into_any(),
        ];
        Ok(Some(PyTuple::new(py, columns)?))
    }
}

/// Redaction's gate on an entry's line (gate.rs): made with what rules.py owns, the needles a run may hold,
/// the stems of secret-sounding names, the keys known to name none, and `names_secret(key: bytes) -> bool`
/// for a key not met before (its verdict remembered when it names none).
#[pyclass(frozen, module = "sidecar_core")]
struct LineGate {
    rules: gate::GateRules,
    plain_keys: HashSet<Vec<u8>>,
    // The keys found plain so far. Held while a call reads lines, across `names_secret`'s Python (where
    // another thread may run, and call in): a call that finds it held reads with the first keys alone, a
    // little slower, rather than wait for it with the GIL held (which would never be let go).
    learned: Mutex<HashSet<Vec<u8>>>,
    names_secret: PyObject,
}

impl LineGate {
    fn verdicts<'a>(&self, py: Python<'_>, raws: impl Iterator<Item = &'a [u8]>) -> PyResult<Vec<bool>> {
        let mut spare;
        let mut held = self.learned.try_lock();
        let plain = match held {
            Ok(ref mut learned) => &mut **learned,
            Err(_) => {
                spare = self.plain_keys.clone();
                &mut spare
            }
        };
        let judge = &self.names_secret;
        let mut names_secret =
            |key: &[u8]| -> PyResult<bool> { judge.call1(py, (PyBytes::new(py, key),))?.is_truthy(py) };
        raws.map(|raw| gate::line_may_hold_secret(raw, &self.rules, plain, &mut names_secret))
            .collect()
    }
}

#[pymethods]
impl LineGate {
    #[new]
    fn new(run_needles: Vec<Vec<u8>>, stems: Vec<Vec<u8>>, plain_keys: Vec<Vec<u8>>, names_secret: PyObject) -> Self {
        let plain_keys: HashSet<Vec<u8>> = plain_keys.into_iter().take(gate::MAX_PLAIN_KEYS).collect();
        LineGate {
            rules: gate::GateRules { run_needles, stems },
            learned: Mutex::new(plain_keys.clone()),
            plain_keys,
            names_secret,
        }
    }

    /// False only when the full redaction walk would change nothing in the entry of this line.
    fn may_hold_secret(&self, py: Python<'_>, raw: &[u8]) -> PyResult<bool> {
        Ok(self.verdicts(py, std::iter::once(raw))?[0])
    }

    /// `may_hold_secret` of each line, in one call.
    fn which_may_hold_secret(&self, py: Python<'_>, raws: Vec<PyBackedBytes>) -> PyResult<Vec<bool>> {
        self.verdicts(py, raws.iter().map(|raw| &raw[..]))
    }

    /// Where the free text of `raw` begins and ends (its envelope and its message's tail left out).
    #[staticmethod]
    fn free_bounds(raw: &[u8]) -> (usize, usize) {
        gate::free_bounds(raw)
    }
}

/// The compiled Codex importer's mapping (import_codex.rs): made with what the Python importer names (a
/// `vocabulary` object: the kinds of line, the reasons counted, the entry type and message heads), it maps a
/// main rollout's buffer to the entries and counts codex.py gives, or None where the Python importer must.
#[pyclass(frozen, module = "sidecar_core")]
struct CodexMapper {
    vocabulary: import_codex::Vocabulary,
    entry_type: PyObject,
    tool_result_head: PyObject,
    user_head: PyObject,
    assistant_head: PyObject,
    reasons: HashMap<String, PyObject>,
    bookkeeping_reasons: HashMap<String, PyObject>,
}

fn strings(vocabulary: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<String>> {
    vocabulary
        .getattr(name)?
        .try_iter()?
        .map(|item| item?.extract::<String>())
        .collect()
}

#[pymethods]
impl CodexMapper {
    #[new]
    fn new(vocabulary: &Bound<'_, PyAny>) -> PyResult<Self> {
        let set =
            |name: &str| -> PyResult<HashSet<String, Quick>> { Ok(strings(vocabulary, name)?.into_iter().collect()) };
        let bookkeeping: HashMap<String, PyObject> = vocabulary.getattr("bookkeeping")?.extract()?;
        let reasons: HashMap<String, PyObject> = vocabulary.getattr("reasons")?.extract()?;
        for name in [
            "origin",
            "turn_model",
            "ui_copy",
            "kept",
            "context",
            "instructions",
            "unknown",
        ] {
            if !reasons.contains_key(name) {
                return Err(pyo3::exceptions::PyKeyError::new_err(name.to_owned()));
            }
        }
        Ok(CodexMapper {
            vocabulary: import_codex::Vocabulary {
                not_read: set("not_read")?,
                ui_events: set("ui_events")?,
                response_ends: set("response_ends")?,
                output_items: set("output_items")?,
                assistant_items: set("assistant_items")?,
                bookkeeping: bookkeeping.keys().cloned().collect(),
                context_prefixes: strings(vocabulary, "context_prefixes")?,
                max_chars: vocabulary.getattr("max_chars")?.extract()?,
                blob_mark: vocabulary.getattr("blob_mark")?.extract()?,
                no_usage: vocabulary.getattr("no_usage")?.extract()?,
                api: vocabulary.getattr("api")?.extract()?,
                default_provider: vocabulary.getattr("default_provider")?.extract()?,
            },
            entry_type: vocabulary.getattr("entry_type")?.unbind(),
            tool_result_head: vocabulary.getattr("tool_result_head")?.unbind(),
            user_head: vocabulary.getattr("user_head")?.unbind(),
            assistant_head: vocabulary.getattr("assistant_head")?.unbind(),
            reasons,
            bookkeeping_reasons: bookkeeping,
        })
    }

    /// The rollout in `buffer` as (entries, counts, unrecognised kinds, the span of its session_meta payload or
    /// None); None when a line is one this does not vouch for. Counts are (kind, outcome, times, reason or None).
    fn map<'py>(&self, py: Python<'py>, buffer: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let view = PyBuffer::<u8>::get(buffer)?;
        if !view.is_c_contiguous() {
            return Ok(None);
        }
        // The buffer stays exported (neither freed nor resized) until `view` is dropped.
        let data: &[u8] = unsafe { std::slice::from_raw_parts(view.buf_ptr() as *const u8, view.len_bytes()) };
        let mapped = match import_codex::Mapper::new(&self.vocabulary, py).map(data) {
            Ok(mapped) => mapped,
            Err(_) => return Ok(None),
        };
        let v = &self.vocabulary;
        let mut heads: HashMap<(String, String), PyObject> = HashMap::new();
        let text = |value: &str| PyString::new(py, value).into_any().unbind();
        let parent_of = |parent: &Option<String>| match parent {
            None => py.None(),
            Some(parent) => text(parent),
        };
        let mut entries = Vec::with_capacity(mapped.entries.len());
        for made in mapped.entries {
            entries.push(match made {
                import_codex::Made::Line {
                    kind,
                    id,
                    parent,
                    timestamp,
                    line,
                    blobs,
                    head,
                } => {
                    let head = match head {
                        import_codex::HeadOf::Nothing => py.None(),
                        import_codex::HeadOf::ToolResult => self.tool_result_head.clone_ref(py),
                        import_codex::HeadOf::User => self.user_head.clone_ref(py),
                    };
                    self.entry_type.call1(
                        py,
                        (
                            kind,
                            text(&id),
                            parent_of(&parent),
                            text(&timestamp),
                            line,
                            head,
                            -1,
                            0,
                            py.None(),
                            blobs,
                        ),
                    )?
                }
                import_codex::Made::Assistant {
                    id,
                    parent,
                    timestamp,
                    ms,
                    provider,
                    model,
                    blocks,
                    stop,
                } => {
                    let mut line = Vec::with_capacity(256 + blocks.iter().map(Vec::len).sum::<usize>());
                    line.extend_from_slice(b"{\"type\":\"message\",\"id\":");
                    import_codex::encode_str(&mut line, &id);
                    line.extend_from_slice(b",\"parentId\":");
                    match &parent {
                        None => line.extend_from_slice(b"null"),
                        Some(parent) => import_codex::encode_str(&mut line, parent),
                    }
                    line.extend_from_slice(b",\"timestamp\":");
                    import_codex::encode_str(&mut line, &timestamp);
                    line.extend_from_slice(b",\"message\":{\"role\":\"assistant\",\"content\":[");
                    line.extend_from_slice(&blocks.join(&b","[..]));
                    line.extend_from_slice(b"],\"api\":");
                    import_codex::encode_str(&mut line, &v.api);
                    line.extend_from_slice(b",\"provider\":");
                    import_codex::encode_str(&mut line, &provider);
                    line.extend_from_slice(b",\"model\":");
                    import_codex::encode_str(&mut line, &model);
                    line.extend_from_slice(b",\"usage\":");
                    line.extend_from_slice(&v.no_usage);
                    line.extend_from_slice(b",\"stopReason\":");
                    import_codex::encode_str(&mut line, stop);
                    line.extend_from_slice(b",\"timestamp\":");
                    line.extend_from_slice(ms.to_string().as_bytes());
                    line.extend_from_slice(b"}}");
                    let key = (provider, model);
                    let head = match heads.get(&key) {
                        Some(head) => head.clone_ref(py),
                        None => {
                            let head = self
                                .assistant_head
                                .call1(py, (v.api.as_str(), key.0.as_str(), key.1.as_str()))?;
                            heads.insert(key, head.clone_ref(py));
                            head
                        }
                    };
                    let blobs = import_codex::holds_mark(&line, &v.blob_mark);
                    self.entry_type.call1(
                        py,
                        (
                            "message",
                            text(&id),
                            parent_of(&parent),
                            text(&timestamp),
                            PyBytes::new(py, &line),
                            head,
                            -1,
                            0,
                            py.None(),
                            blobs,
                        ),
                    )?
                }
                import_codex::Made::ModelChange {
                    id,
                    parent,
                    timestamp,
                    provider,
                    model,
                } => {
                    let entry = PyDict::new(py);
                    entry.set_item("type", "model_change")?;
                    entry.set_item("id", id)?;
                    entry.set_item("parentId", parent_of(&parent))?;
                    entry.set_item("timestamp", timestamp)?;
                    entry.set_item("provider", provider)?;
                    entry.set_item("modelId", model)?;
                    entry.into_any().unbind()
                }
                import_codex::Made::CustomMessage {
                    id,
                    parent,
                    timestamp,
                    custom_type,
                    texts,
                } => {
                    let entry = PyDict::new(py);
                    entry.set_item("type", "custom_message")?;
                    entry.set_item("id", id)?;
                    entry.set_item("parentId", parent_of(&parent))?;
                    entry.set_item("timestamp", timestamp)?;
                    entry.set_item("customType", custom_type)?;
                    let content = PyList::empty(py);
                    for block_text in texts {
                        let block = PyDict::new(py);
                        block.set_item("type", "text")?;
                        block.set_item("text", block_text)?;
                        content.append(block)?;
                    }
                    entry.set_item("content", content)?;
                    entry.set_item("display", false)?;
                    entry.into_any().unbind()
                }
            });
        }
        drop(view);
        let mut counts = Vec::with_capacity(mapped.counts.len());
        for count in mapped.counts {
            let outcome = match count.outcome {
                import_codex::Outcome::Mapped => "mapped",
                import_codex::Outcome::Kept => "kept",
                import_codex::Outcome::Skipped => "skipped",
            };
            use import_codex::Reason;
            let reason = match count.reason {
                None => py.None(),
                Some(Reason::Bookkeeping) => self
                    .bookkeeping_reasons
                    .get(&count.kind)
                    .map_or_else(|| py.None(), |r| r.clone_ref(py)),
                Some(reason) => {
                    let name = match reason {
                        Reason::Origin => "origin",
                        Reason::TurnModel => "turn_model",
                        Reason::UiCopy => "ui_copy",
                        Reason::Kept => "kept",
                        Reason::Context => "context",
                        Reason::Instructions => "instructions",
                        _ => "unknown",
                    };
                    self.reasons[name].clone_ref(py)
                }
            };
            counts.push(PyTuple::new(
                py,
                [
                    text(&count.kind),
                    text(outcome),
                    count.times.into_pyobject(py)?.into_any().unbind(),
                    reason,
                ],
            )?);
        }
        let meta = match mapped.meta {
            None => py.None(),
            Some((start, end)) => PyTuple::new(py, [start, end])?.into_any().unbind(),
        };
        let columns = [
            PyList::new(py, entries)?.into_any().unbind(),
            PyList::new(py, counts)?.into_any().unbind(),
            PyList::new(py, mapped.unrecognised)?.into_any().unbind(),
            meta,
        ];
        Ok(Some(PyTuple::new(py, columns)?))
    }
}

#[pymodule]
fn sidecar_core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<LineScanner>()?;
    module.add_class::<LineGate>()?;
    module.add_class::<tree::TreeIndex>()?;
    module.add_class::<CodexMapper>()?;
    Ok(())
}
