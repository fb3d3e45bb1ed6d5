//! A Codex rollout mapped to pi entries without Python (issue 42, goal 3): the per-line mapping of
//! sidecar/importers/codex.py and codex_lines.py, for the line shapes Codex writes most.
//!
//! What this gives must be exactly what the Python importer gives for the same file: the same entries
//! (their lines byte for byte, in the same order), the same counts. It may refuse instead: one refused line
//! refuses the whole file (`Err(Refused)`), which the Python importer then reads from the start, so a
//! refusal never changes an answer. It refuses whatever it does not reproduce exactly: lines msgspec would
//! read differently or not at all (damaged, escaped keys, repeated keys, lone surrogates, floats it would
//! have to write again), and the kinds of line whose mapping it does not carry (compactions, subagent spawns,
//! images, tool outputs that are not one short string, ...).

use std::collections::{HashMap, HashSet};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::Quick;

use crate::scan::{is, Reader, Refused, Scan, Value};

/// What the Python importer names (codex_lines.py, codex.py, common.py), handed over when the mapper is made.
pub struct Vocabulary {
    pub not_read: HashSet<String, Quick>,
    pub ui_events: HashSet<String, Quick>,
    pub response_ends: HashSet<String, Quick>,
    pub output_items: HashSet<String, Quick>,
    pub assistant_items: HashSet<String, Quick>,
    pub bookkeeping: HashSet<String, Quick>,
    pub context_prefixes: Vec<String>,
    pub max_chars: usize,
    pub blob_mark: Vec<u8>,
    pub no_usage: Vec<u8>,
    pub api: String,
    pub default_provider: String,
}

/// Why a record was counted as it was: the Python side holds the texts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reason {
    Origin,
    TurnModel,
    UiCopy,
    Kept,
    Context,
    Instructions,
    Unknown,
    Bookkeeping,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    Mapped,
    Kept,
    Skipped,
}

pub struct Count {
    pub kind: String,
    pub outcome: Outcome,
    pub times: usize,
    pub reason: Option<Reason>,
}

/// The shared message head an entry's line carries.
pub enum HeadOf {
    Nothing,
    ToolResult,
    User,
}

pub enum Made {
    /// An entry written as its line (Builder.made).
    Line {
        kind: &'static str,
        id: String,
        parent: Option<String>,
        timestamp: String,
        line: PyObject,
        blobs: bool,
        head: HeadOf,
    },
    /// An assistant message (made.Assistant), written as its line once the file is read.
    Assistant {
        id: String,
        parent: Option<String>,
        timestamp: String,
        ms: i64,
        provider: String,
        model: String,
        blocks: Vec<Vec<u8>>,
        stop: &'static str,
    },
    /// Builder.add's dict entries.
    ModelChange {
        id: String,
        parent: Option<String>,
        timestamp: String,
        provider: String,
        model: String,
    },
    CustomMessage {
        id: String,
        parent: Option<String>,
        timestamp: String,
        custom_type: String,
        texts: Vec<String>,
    },
}

pub struct Mapped {
    pub entries: Vec<Made>,
    /// In the order the Python importer counts them (the deferred ones after the rest).
    pub counts: Vec<Count>,
    pub unrecognised: Vec<String>,
    /// Where the first session_meta payload is in the buffer (Python reads the header's fields from it).
    pub meta: Option<(usize, usize)>,
}

// ---- JSON values, as msgspec decodes them and encodes them again ---------------------------------

/// A decoded JSON value the mapping writes again: only what msgspec writes back as one text
/// (no floats in other forms, no integers near the edges of 64 bits, no repeated keys).
pub enum Json {
    Null,
    True,
    False,
    /// An integer, or a float already written as msgspec writes it: its text as it came.
    Number(String),
    Str(String),
    List(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

const MAX_DEPTH: usize = 64;

fn value_text(value: Value, line: &[u8]) -> String {
    match value {
        Value::Span(start, end) => unsafe { std::str::from_utf8_unchecked(&line[start..end]) }.to_owned(),
        Value::Owned(text) => text,
        _ => String::new(),
    }
}

fn parse(reader: &mut Reader, depth: usize) -> Scan<Json> {
    if depth > MAX_DEPTH {
        return Err(Refused);
    }
    reader.skip_space();
    Ok(match reader.peek()? {
        b'"' => Json::Str(value_text(reader.string(true)?, reader.line)),
        b'{' => {
            reader.at += 1;
            let mut members: Vec<(String, Json)> = Vec::new();
            reader.skip_space();
            if reader.peek()? == b'}' {
                reader.at += 1;
                return Ok(Json::Object(members));
            }
            loop {
                reader.skip_space();
                if reader.peek()? != b'"' {
                    return Err(Refused);
                }
                let key = value_text(reader.string(true)?, reader.line);
                if members.iter().any(|(k, _)| *k == key) {
                    return Err(Refused); // a repeated key: msgspec keeps the last value in the first's place
                }
                reader.skip_space();
                reader.expect(b':')?;
                let value = parse(reader, depth + 1)?;
                members.push((key, value));
                reader.skip_space();
                match reader.peek()? {
                    b',' => reader.at += 1,
                    b'}' => {
                        reader.at += 1;
                        return Ok(Json::Object(members));
                    }
                    _ => return Err(Refused),
                }
            }
        }
        b'[' => {
            reader.at += 1;
            let mut items = Vec::new();
            reader.skip_space();
            if reader.peek()? == b']' {
                reader.at += 1;
                return Ok(Json::List(items));
            }
            loop {
                items.push(parse(reader, depth + 1)?);
                reader.skip_space();
                match reader.peek()? {
                    b',' => reader.at += 1,
                    b']' => {
                        reader.at += 1;
                        return Ok(Json::List(items));
                    }
                    _ => return Err(Refused),
                }
            }
        }
        b't' => {
            reader.literal(b"true")?;
            Json::True
        }
        b'f' => {
            reader.literal(b"false")?;
            Json::False
        }
        b'n' => {
            reader.literal(b"null")?;
            Json::Null
        }
        _ => {
            let start = reader.at;
            reader.number()?;
            let text = &reader.line[start..reader.at];
            let text = unsafe { std::str::from_utf8_unchecked(text) };
            if text.bytes().any(|b| b == b'e' || b == b'E') || text == "-0" {
                return Err(Refused); // (msgspec writes "-0" as 0, and its exponents in a form of its own)
            }
            if text.contains('.') {
                // msgspec writes a float back as its shortest digits, in plain decimals between 1e-4 and 1e16 (as
                // Rust's Display does): a text that is already that form is written as it came, any other refused.
                let value: f64 = text.parse().map_err(|_| Refused)?;
                if !(1e-4..1e16).contains(&value.abs()) || format!("{value}") != text {
                    return Err(Refused);
                }
            } else if text.len() > 18 {
                return Err(Refused); // (integers near the edges of 64 bits: msgspec's own reading)
            }
            Json::Number(text.to_owned())
        }
    })
}

/// One JSON text (the whole of `text`, blanks around it allowed, as msgspec reads a document).
fn parse_document(text: &[u8]) -> Scan<Json> {
    let mut reader = Reader { line: text, at: 0 };
    let value = parse(&mut reader, 0)?;
    reader.skip_space();
    if reader.at != text.len() {
        return Err(Refused);
    }
    Ok(value)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `text` as msgspec's encoder writes a str.
pub fn encode_str(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut piece = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let escaped: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[piece..at]);
        if escaped.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(byte >> 4) as usize]);
            out.push(HEX[(byte & 15) as usize]);
        } else {
            out.extend_from_slice(escaped);
        }
        piece = at + 1;
    }
    out.extend_from_slice(&bytes[piece..]);
    out.push(b'"');
}

pub fn encode(out: &mut Vec<u8>, value: &Json) {
    match value {
        Json::Null => out.extend_from_slice(b"null"),
        Json::True => out.extend_from_slice(b"true"),
        Json::False => out.extend_from_slice(b"false"),
        Json::Number(text) => out.extend_from_slice(text.as_bytes()),
        Json::Str(text) => encode_str(out, text),
        Json::List(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                encode(out, item);
            }
            out.push(b']');
        }
        Json::Object(members) => {
            out.push(b'{');
            for (index, (key, item)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                encode_str(out, key);
                out.push(b':');
                encode(out, item);
            }
            out.push(b'}');
        }
    }
}

// ---- SHA-1 (common.short_id's digest) ------------------------------------------------------------

pub fn sha1_hex(data: &[u8]) -> String {
    let mut state: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    // The padded message: on the stack for a short key (an entry's: a line number), else on the heap.
    let padded = (data.len() + 9).div_ceil(64) * 64;
    let mut short = [0u8; 128];
    let mut long = Vec::new();
    let message: &mut [u8] = if padded <= short.len() {
        &mut short[..padded]
    } else {
        long.resize(padded, 0);
        &mut long
    };
    message[..data.len()].copy_from_slice(data);
    message[data.len()] = 0x80;
    message[padded - 8..].copy_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in message.chunks(64) {
        let mut words = [0u32; 80];
        for index in 0..16 {
            words[index] = u32::from_be_bytes([
                block[index * 4],
                block[index * 4 + 1],
                block[index * 4 + 2],
                block[index * 4 + 3],
            ]);
        }
        for index in 16..80 {
            words[index] = (words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = state;
        for (index, &word) in words.iter().enumerate() {
            let (mix, constant) = match index {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6u32),
            };
            let next = a
                .rotate_left(5)
                .wrapping_add(mix)
                .wrapping_add(e)
                .wrapping_add(constant)
                .wrapping_add(word);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = next;
        }
        for (slot, add) in state.iter_mut().zip([a, b, c, d, e]) {
            *slot = slot.wrapping_add(add);
        }
    }
    let mut out = String::with_capacity(40);
    for word in state {
        for byte in word.to_be_bytes() {
            out.push(HEX[(byte >> 4) as usize] as char);
            out.push(HEX[(byte & 15) as usize] as char);
        }
    }
    out
}

/// common.short_id: 8 hex digits of the key's SHA-1, longer only on a clash.
fn short_id(key: &str, taken: &mut HashSet<String, Quick>) -> String {
    let digest = sha1_hex(key.as_bytes());
    for width in [8, 12, 16, 40] {
        let candidate = &digest[..width];
        if !taken.contains(candidate) {
            taken.insert(candidate.to_owned());
            return candidate.to_owned();
        }
    }
    let mut n = 0;
    loop {
        let candidate = format!("{digest}-{n}");
        if !taken.contains(&candidate) {
            taken.insert(candidate.clone());
            return candidate;
        }
        n += 1;
    }
}

// ---- time (common.ms_of_iso for pi's own shape) ---------------------------------------------------

fn digits(text: &[u8]) -> Option<i64> {
    let mut value = 0i64;
    for &byte in text {
        if !byte.is_ascii_digit() {
            return None;
        }
        value = value * 10 + (byte - b'0') as i64;
    }
    Some(value)
}

fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = if year >= 0 { year } else { year - 399 } / 400;
    let of_era = year - era * 400;
    let of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let of_cycle = of_era * 365 + of_era / 4 - of_era / 100 + of_year;
    era * 146097 + of_cycle - 719468
}

/// The epoch milliseconds of a timestamp of the exact shape `YYYY-MM-DDTHH:MM:SS.mmmZ` with a real date, the
/// arithmetic ms_of_iso does; None for any other text (the Python path reads those).
pub fn ms_of_pi_stamp(text: &[u8]) -> Option<i64> {
    if text.len() != 24
        || text[4] != b'-'
        || text[7] != b'-'
        || text[10] != b'T'
        || text[13] != b':'
        || text[16] != b':'
        || text[19] != b'.'
        || text[23] != b'Z'
    {
        return None;
    }
    let (year, month, day) = (digits(&text[0..4])?, digits(&text[5..7])?, digits(&text[8..10])?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if year < 1 || !(1..=12).contains(&month) || day < 1 || day > month_days[(month - 1) as usize] {
        return None;
    }
    let (hour, minute) = (digits(&text[11..13])?, digits(&text[14..16])?);
    let (second, milli) = (digits(&text[17..19])?, digits(&text[20..23])?);
    let start = (days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60) * 1000;
    Some(start + second * 1000 + milli)
}

/// Python's str.isspace for the characters str.lstrip takes off (Unicode 14's, as Python 3.11 has them).
fn python_space(character: char) -> bool {
    matches!(
        character,
        ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r' | '\x1c'..='\x1f' | '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

// ---- the lines ------------------------------------------------------------------------------------

type Spans<'a> = Vec<(&'a [u8], usize, usize)>;

/// The members of the object at `start` as (key, value start, value end), each value checked as msgspec checks
/// it; refused when a key holds an escape or comes twice (msgspec would match the decoded key, keep the last).
/// The members of `nested`'s value, when it is an object, are read in the same pass (its own spans).
fn spans<'a>(line: &'a [u8], start: usize, nested: Option<&[u8]>) -> Scan<(Spans<'a>, Option<Spans<'a>>, usize)> {
    let mut reader = Reader { line, at: start };
    // (room for the members of a Codex payload at once: growing the list member by member cost a tenth of a map)
    let mut found: Spans<'a> = Vec::with_capacity(16);
    let mut inner: Option<Spans<'a>> = None;
    reader.members(|reader, key| {
        let from = reader.at;
        if nested == Some(key) && reader.peek()? == b'{' {
            let (members, _, end) = spans(line, from, None)?;
            inner = Some(members);
            reader.at = end;
        } else {
            reader.skip_value(2)?;
        }
        let key: &'a [u8] = unsafe { std::slice::from_raw_parts(key.as_ptr(), key.len()) };
        if found.iter().any(|(k, _, _)| *k == key) {
            return Err(Refused);
        }
        found.push((key, from, reader.at));
        Ok(())
    })?;
    Ok((found, inner, reader.at))
}

fn span_of(fields: &[(&[u8], usize, usize)], key: &[u8]) -> Option<(usize, usize)> {
    fields.iter().find(|(k, _, _)| *k == key).map(|&(_, s, e)| (s, e))
}

fn find_mark(line: &[u8], mark: &[u8]) -> bool {
    if mark.len() < 2 {
        return mark.is_empty() || line.contains(&mark[0]);
    }
    if line.len() < mark.len() {
        return false;
    }
    let last_start = line.len() - mark.len();
    let matches_at = |at: usize| &line[at..at + mark.len()] == mark;
    let mut at = 0;
    // Candidates are where the mark's first two bytes stand side by side, sixteen starts at a time (a quote
    // alone is in every few bytes of a JSON line).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::*;
        let first = _mm_set1_epi8(mark[0] as i8);
        let second = _mm_set1_epi8(mark[1] as i8);
        while at + 17 <= line.len() && at <= last_start {
            let here = _mm_loadu_si128(line.as_ptr().add(at) as *const __m128i);
            let next = _mm_loadu_si128(line.as_ptr().add(at + 1) as *const __m128i);
            let mut mask =
                _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(here, first), _mm_cmpeq_epi8(next, second))) as u32;
            while mask != 0 {
                let start = at + mask.trailing_zeros() as usize;
                if start <= last_start && matches_at(start) {
                    return true;
                }
                mask &= mask - 1;
            }
            at += 16;
        }
    }
    while at <= last_start {
        if matches_at(at) {
            return true;
        }
        at += 1;
    }
    false
}

struct Stamp<'a> {
    text: &'a str,
    ms: i64,
}

pub struct Mapper<'v, 'py> {
    v: &'v Vocabulary,
    py: Python<'py>,
    /// The buffer each entry's line is written in before it is made a bytes object.
    scratch: Vec<u8>,
    entries: Vec<Made>,
    taken: HashSet<String, Quick>,
    leaf: Option<String>,
    open: Option<usize>,
    tool_names: HashMap<String, String, Quick>,
    model: String,
    provider: String,
    last_change: Option<(String, String)>,
    counts: Counts,
    deferred: Counts,
    unrecognised: Vec<String>,
    meta: Option<(usize, usize)>,
    /// The key of the line being mapped (codex.py's f"{prefix}{number}", no prefix: a main rollout).
    key: String,
}

/// The counts in the order first met, and where each (kind, outcome) is among them.
#[derive(Default)]
struct Counts {
    counts: Vec<Count>,
    index: HashMap<(String, u8), usize, Quick>,
    key: String,
}

impl Counts {
    /// One more record of kind `prefix` + `name` counted (the kind's text kept only the first time it is met).
    fn add(&mut self, prefix: &str, name: &str, outcome: Outcome, reason: Option<Reason>) {
        self.key.clear();
        self.key.push_str(prefix);
        self.key.push_str(name);
        let key = (std::mem::take(&mut self.key), outcome as u8);
        match self.index.get(&key) {
            Some(&at) => {
                let count = &mut self.counts[at];
                count.times += 1;
                if count.reason.is_none() {
                    count.reason = reason;
                }
                self.key = key.0;
            }
            None => {
                self.counts.push(Count {
                    kind: key.0.clone(),
                    outcome,
                    times: 1,
                    reason,
                });
                self.index.insert(key, self.counts.len() - 1);
            }
        }
    }
}

fn string_of(line: &[u8], span: Option<(usize, usize)>) -> Scan<Option<String>> {
    match span {
        None => Ok(None),
        Some((start, end)) => match parse_document(&line[start..end])? {
            Json::Str(text) => Ok(Some(text)),
            Json::Null => Ok(None),
            _ => Err(Refused),
        },
    }
}

/// A field read with `str(field or "")`-like care: a string, or nothing for absent, null or "" (anything
/// else, which str() would write as its repr, refused).
fn text_or_empty(line: &[u8], span: Option<(usize, usize)>) -> Scan<String> {
    Ok(string_of(line, span)?.unwrap_or_default())
}

/// The envelope of an entry's line, with room for `more` bytes of fields after it (a large output is copied once).
fn envelope(mut line: Vec<u8>, kind: &str, id: &str, parent: &Option<String>, timestamp: &str, more: usize) -> Vec<u8> {
    line.clear();
    line.reserve(160 + more);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\",\"id\":");
    encode_str(&mut line, id);
    line.extend_from_slice(b",\"parentId\":");
    match parent {
        None => line.extend_from_slice(b"null"),
        Some(parent) => encode_str(&mut line, parent),
    }
    line.extend_from_slice(b",\"timestamp\":");
    encode_str(&mut line, timestamp);
    line.push(b',');
    line
}

impl<'v, 'py> Mapper<'v, 'py> {
    pub fn new(v: &'v Vocabulary, py: Python<'py>) -> Self {
        Mapper {
            v,
            py,
            scratch: Vec::new(),
            entries: Vec::new(),
            taken: HashSet::default(),
            leaf: None,
            open: None,
            tool_names: HashMap::default(),
            model: String::new(),
            provider: v.default_provider.clone(),
            last_change: None,
            counts: Counts::default(),
            deferred: Counts::default(),
            unrecognised: Vec::new(),
            meta: None,
            key: String::new(),
        }
    }

    /// The whole buffer, its lines cut as common.source_lines cuts them.
    pub fn map(mut self, data: &[u8]) -> Scan<Mapped> {
        let mut start = 0;
        let mut number = 0;
        while start < data.len() {
            let end = crate::next_newline(data, start).unwrap_or(data.len());
            number += 1;
            let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c);
            let (mut first, mut last) = (start, end);
            while first < last && blank(data[first]) {
                first += 1;
            }
            while last > first && blank(data[last - 1]) {
                last -= 1;
            }
            if last > first {
                self.line(number, &data[first..last], first)?;
            }
            start = end + 1;
        }
        let mut counts = self.counts.counts;
        counts.extend(self.deferred.counts);
        Ok(Mapped {
            entries: self.entries,
            counts,
            unrecognised: self.unrecognised,
            meta: self.meta,
        })
    }

    fn line(&mut self, number: usize, line: &[u8], offset: usize) -> Scan<()> {
        self.key = number.to_string();
        let mut reader = Reader { line, at: 0 };
        let mut kind: Option<String> = None;
        let mut stamp_span: Option<(usize, usize)> = None;
        let mut payload: Option<(usize, usize)> = None;
        let mut fields: Spans = Vec::new();
        let mut item: Option<Spans> = None;
        reader.members(|reader, key| {
            let from = reader.at;
            if is(key, b"type") {
                if kind.is_some() || reader.peek()? != b'"' {
                    return Err(Refused);
                }
                kind = Some(value_text(reader.string(true)?, reader.line));
                return Ok(());
            }
            if is(key, b"payload") {
                if payload.is_some() || reader.peek()? != b'{' {
                    return Err(Refused); // (a payload that is no object: damage, reported by the Python path)
                }
                let (members, inner, end) = spans(reader.line, from, Some(b"item"))?;
                fields = members;
                item = inner;
                reader.at = end;
                payload = Some((from, end));
                return Ok(());
            }
            reader.skip_value(1)?;
            if is(key, b"timestamp") {
                if stamp_span.is_some() {
                    return Err(Refused);
                }
                stamp_span = Some((from, reader.at));
            }
            Ok(())
        })?;
        if reader.at != line.len() {
            return Err(Refused);
        }
        let kind = kind.ok_or(Refused)?;
        let (payload_start, payload_end) = payload.ok_or(Refused)?;
        let stamp = stamp_span.and_then(|(s, e)| {
            let text = &line[s..e];
            if text.len() != 26 || text[0] != b'"' || text[25] != b'"' {
                return None;
            }
            let inner = &text[1..25];
            ms_of_pi_stamp(inner).map(|ms| Stamp {
                text: unsafe { std::str::from_utf8_unchecked(inner) },
                ms,
            })
        });
        if let Some((s, _)) = span_of(&fields, b"item") {
            if line[s] != b'{' && line[s] != b'n' {
                return Err(Refused); // codex_lines.Head would not decode: the Python path reads the line whole
            }
        }
        let sub: Option<String> = match span_of(&fields, b"type") {
            Some((s, e)) if line[s] == b'"' => match parse_document(&line[s..e])? {
                Json::Str(text) => Some(text),
                _ => return Err(Refused),
            },
            _ => None,
        };
        let v = self.v;
        if kind == "event_msg" {
            let sub = sub.ok_or(Refused)?;
            if v.not_read.contains(&sub) {
                if v.response_ends.contains(&sub) {
                    self.open = None;
                }
                if let Some(item) = &item {
                    {
                        let item_type = string_of(line, span_of(item, b"type")).unwrap_or(None);
                        if span_of(item, b"type").is_some_and(|(s, _)| line[s] != b'"' && line[s] != b'n')
                            || item_type.as_deref() == Some("CollabAgentToolCall")
                        {
                            return Err(Refused); // a subagent's spawn: noted by the Python path
                        }
                    }
                }
                self.deferred
                    .add("event_msg/", &sub, Outcome::Skipped, Some(Reason::UiCopy));
                return Ok(());
            }
            if v.response_ends.contains(&sub) {
                self.open = None;
            }
            if sub == "thread_settings_applied" {
                // The model of what follows: `(thread_settings or {}).get("model") or model`.
                let model = match span_of(&fields, b"thread_settings") {
                    None => String::new(),
                    Some((s, e)) => match parse_document(&line[s..e])? {
                        Json::Null => String::new(),
                        settings @ Json::Object(_) => match settings.get("model") {
                            None | Some(Json::Null) => String::new(),
                            Some(Json::Str(model)) => model.clone(),
                            Some(_) => return Err(Refused),
                        },
                        _ => return Err(Refused),
                    },
                };
                if !model.is_empty() {
                    self.model = model;
                }
            }
            if v.ui_events.contains(&sub) {
                self.counts
                    .add("event_msg/", &sub, Outcome::Skipped, Some(Reason::UiCopy));
                return Ok(());
            }
            return self.keep(
                &format!("event_msg/{sub}"),
                false,
                &kind,
                stamp,
                line,
                payload_start,
                payload_end,
            );
        }
        if kind == "response_item" {
            let sub = sub.ok_or(Refused)?;
            let output = span_of(&fields, b"output");
            if v.output_items.contains(&sub) && output.is_some_and(|(s, e)| line[s] == b'"' && e - s <= v.max_chars) {
                let stamp = stamp.ok_or(Refused)?;
                self.open = None;
                let call = text_or_empty(line, span_of(&fields, b"call_id"))?;
                let name = self.tool_names.get(&call).cloned().unwrap_or_default();
                let (s, e) = output.unwrap();
                let id = short_id(&self.key, &mut self.taken);
                let mut made = envelope(
                    std::mem::take(&mut self.scratch),
                    "message",
                    &id,
                    &self.leaf,
                    stamp.text,
                    160 + call.len() + name.len() + (e - s),
                );
                made.extend_from_slice(b"\"message\":{\"role\":\"toolResult\",\"toolCallId\":");
                encode_str(&mut made, &call);
                made.extend_from_slice(b",\"toolName\":");
                encode_str(&mut made, &name);
                made.extend_from_slice(b",\"content\":[{\"type\":\"text\",\"text\":");
                let tail = format!("}}],\"isError\":false,\"timestamp\":{}}}}}", stamp.ms);
                // The output is copied once, from the source into the line's bytes object.
                self.push_pieces(
                    "message",
                    id,
                    stamp.text,
                    made,
                    &line[s..e],
                    tail.as_bytes(),
                    HeadOf::ToolResult,
                )?;
                self.counts.add("response_item/", &sub, Outcome::Mapped, None);
                return Ok(());
            }
            let role = match span_of(&fields, b"role") {
                Some((s, e)) if line[s] == b'"' => match parse_document(&line[s..e])? {
                    Json::Str(text) => Some(text),
                    _ => None,
                },
                _ => None,
            };
            if matches!(sub.as_str(), "reasoning" | "function_call" | "custom_tool_call")
                || sub == "message" && role.as_deref() == Some("assistant")
            {
                let stamp = stamp.ok_or(Refused)?;
                self.assistant_part(&stamp, &sub, line, &fields)?;
                self.counts.add("response_item/", &sub, Outcome::Mapped, None);
                return Ok(());
            }
            if v.assistant_items.contains(&sub) || v.output_items.contains(&sub) {
                return Err(Refused); // (their whole items, or outputs of another shape: the Python path)
            }
            self.open = None;
            if sub == "message" {
                let stamp = stamp.ok_or(Refused)?;
                return self.message(&stamp, role.ok_or(Refused)?, line, &fields, payload_start, payload_end);
            }
            return self.keep(
                &format!("response_item/{sub}"),
                false,
                &kind,
                stamp,
                line,
                payload_start,
                payload_end,
            );
        }
        if v.bookkeeping.contains(&kind) {
            self.open = None;
            self.deferred
                .add("", &kind, Outcome::Skipped, Some(Reason::Bookkeeping));
            return Ok(());
        }
        if kind == "turn_context" {
            self.open = None;
            let model = text_or_empty(line, span_of(&fields, b"model"))?;
            if !model.is_empty() {
                self.model = model;
            }
            self.counts.add("", &kind, Outcome::Mapped, Some(Reason::TurnModel));
            return Ok(());
        }
        if v.response_ends.contains(&kind) {
            self.open = None;
        }
        if kind == "session_meta" {
            if self.meta.is_none() {
                if fields.is_empty() {
                    return Err(Refused); // an empty header: the Python path looks for the next
                }
                self.meta = Some((offset + payload_start, offset + payload_end));
                let provider = text_or_empty(line, span_of(&fields, b"model_provider"))?;
                if !provider.is_empty() {
                    self.provider = provider;
                }
            }
            self.counts.add("", &kind, Outcome::Mapped, Some(Reason::Origin));
            return Ok(());
        }
        if kind == "compacted" {
            return Err(Refused);
        }
        let known = kind == "world_state";
        let label = kind.clone();
        self.keep(&label, known, &kind, stamp, line, payload_start, payload_end)
    }

    /// An entry written as its line: its bytes made a Python bytes at once (from the one buffer every line is
    /// written in, so a large output is neither allocated nor freed once more).
    fn push_line(&mut self, kind: &'static str, id: String, timestamp: &str, line: Vec<u8>, head: HeadOf) {
        let parent = self.leaf.replace(id.clone());
        let blobs = find_mark(&line, &self.v.blob_mark);
        let bytes = PyBytes::new(self.py, &line).into_any().unbind();
        self.scratch = line;
        self.entries.push(Made::Line {
            kind,
            id,
            parent,
            timestamp: timestamp.to_owned(),
            line: bytes,
            blobs,
            head,
        });
    }

    /// An entry whose line is `head`, `middle` (a large text as the source wrote it) and `tail`, joined once.
    #[allow(clippy::too_many_arguments)]
    fn push_pieces(
        &mut self,
        kind: &'static str,
        id: String,
        timestamp: &str,
        head: Vec<u8>,
        middle: &[u8],
        tail: &[u8],
        shared: HeadOf,
    ) -> Scan<()> {
        let parent = self.leaf.replace(id.clone());
        let mut blobs = false;
        let mark = &self.v.blob_mark;
        let bytes = PyBytes::new_with(self.py, head.len() + middle.len() + tail.len(), |buffer| {
            buffer[..head.len()].copy_from_slice(&head);
            buffer[head.len()..head.len() + middle.len()].copy_from_slice(middle);
            buffer[head.len() + middle.len()..].copy_from_slice(tail);
            blobs = find_mark(buffer, mark);
            Ok(())
        });
        self.scratch = head;
        // (no memory for the line: refused, and the Python path meets the same want of memory itself)
        let bytes = bytes.map_err(|_| Refused)?.into_any().unbind();
        self.entries.push(Made::Line {
            kind,
            id,
            parent,
            timestamp: timestamp.to_owned(),
            line: bytes,
            blobs,
            head: shared,
        });
        Ok(())
    }

    /// codex._Reader._keep: a record kept as a custom entry holding its type, time and payload as they came.
    #[allow(clippy::too_many_arguments)]
    fn keep(
        &mut self,
        label: &str,
        known: bool,
        kind: &str,
        stamp: Option<Stamp>,
        line: &[u8],
        start: usize,
        end: usize,
    ) -> Scan<()> {
        let stamp = stamp.ok_or(Refused)?;
        if end - start > self.v.max_chars {
            return Err(Refused);
        }
        let id = short_id(&self.key, &mut self.taken);
        let mut made = envelope(
            std::mem::take(&mut self.scratch),
            "custom",
            &id,
            &self.leaf,
            stamp.text,
            96 + label.len() + kind.len() + (end - start),
        );
        made.extend_from_slice(b"\"customType\":");
        encode_str(&mut made, &format!("codex.{label}"));
        made.extend_from_slice(b",\"data\":{\"type\":");
        encode_str(&mut made, kind);
        made.extend_from_slice(b",\"timestamp\":");
        encode_str(&mut made, stamp.text);
        made.extend_from_slice(b",\"payload\":");
        made.extend_from_slice(&line[start..end]);
        made.extend_from_slice(b"}}");
        self.push_line("custom", id, stamp.text, made, HeadOf::Nothing);
        if known {
            self.counts.add("", label, Outcome::Kept, Some(Reason::Kept));
        } else {
            if !self.unrecognised.iter().any(|k| k == label) {
                self.unrecognised.push(label.to_owned());
            }
            self.counts.add("", label, Outcome::Kept, Some(Reason::Unknown));
        }
        Ok(())
    }

    /// codex._Reader._opened: the assistant message the next part goes into (opened after a model_change when
    /// the model differs from the last written).
    fn opened(&mut self, stamp: &Stamp) -> usize {
        if let Some(index) = self.open {
            return index;
        }
        let mut parent = self.leaf.clone();
        if !self.model.is_empty() {
            let now = (self.provider.clone(), self.model.clone());
            if self.last_change.as_ref() != Some(&now) {
                let id = short_id(&format!("{}/model", self.key), &mut self.taken);
                self.entries.push(Made::ModelChange {
                    id: id.clone(),
                    parent,
                    timestamp: stamp.text.to_owned(),
                    provider: now.0.clone(),
                    model: now.1.clone(),
                });
                self.last_change = Some(now);
                parent = Some(id);
            }
        }
        let id = short_id(&self.key, &mut self.taken);
        self.entries.push(Made::Assistant {
            id: id.clone(),
            parent,
            timestamp: stamp.text.to_owned(),
            ms: stamp.ms,
            provider: self.provider.clone(),
            model: self.model.clone(),
            blocks: Vec::new(),
            stop: "stop",
        });
        self.leaf = Some(id);
        self.open = Some(self.entries.len() - 1);
        self.entries.len() - 1
    }

    fn add_block(&mut self, index: usize, block: Vec<u8>, tool_use: bool) {
        if let Made::Assistant { blocks, stop, .. } = &mut self.entries[index] {
            blocks.push(block);
            if tool_use {
                *stop = "toolUse";
            }
        }
    }

    /// codex._Reader._assistant_fields: a reasoning, assistant message, function_call or custom_tool_call item.
    fn assistant_part(&mut self, stamp: &Stamp, sub: &str, line: &[u8], fields: &[(&[u8], usize, usize)]) -> Scan<()> {
        let json_of = |key: &[u8]| -> Scan<Json> {
            match span_of(fields, key) {
                None => Ok(Json::Null),
                Some((s, e)) => parse_document(&line[s..e]),
            }
        };
        // A list field as `value(field) or []` reads it: null for none, a list, anything else refused.
        let list_of = |key: &[u8]| -> Scan<Vec<Json>> {
            match json_of(key)? {
                Json::Null => Ok(Vec::new()),
                Json::List(items) => Ok(items),
                _ => Err(Refused),
            }
        };
        // `str(part.get(key, ""))` of an object part: a string, "" when absent, anything else refused.
        let text_in = |part: &Json, key: &str| -> Scan<String> {
            match part.get(key) {
                None => Ok(String::new()),
                Some(Json::Str(text)) => Ok(text.clone()),
                Some(_) => Err(Refused),
            }
        };
        if sub == "reasoning" {
            let mut texts = Vec::new();
            for part in list_of(b"summary")?.iter().chain(list_of(b"content")?.iter()) {
                if let Json::Object(_) = part {
                    let text = text_in(part, "text")?;
                    if !text.is_empty() {
                        texts.push(text);
                    }
                }
            }
            let signature = string_of(line, span_of(fields, b"encrypted_content"))?;
            let mut block = b"{\"type\":\"thinking\",\"thinking\":".to_vec();
            encode_str(&mut block, &texts.join("\n\n"));
            if let Some(signature) = signature.filter(|s| !s.is_empty()) {
                block.extend_from_slice(b",\"thinkingSignature\":");
                encode_str(&mut block, &signature);
            }
            block.push(b'}');
            let index = self.opened(stamp);
            self.add_block(index, block, false);
            return Ok(());
        }
        if sub == "message" {
            let mut made = Vec::new();
            for part in list_of(b"content")? {
                let kind = match part.get("type") {
                    Some(Json::Str(kind)) => kind.as_str(),
                    _ => continue,
                };
                let text = match kind {
                    "output_text" | "text" => text_in(&part, "text")?,
                    "refusal" => text_in(&part, "refusal")?,
                    _ => continue,
                };
                let mut block = b"{\"type\":\"text\",\"text\":".to_vec();
                encode_str(&mut block, &text);
                block.push(b'}');
                made.push(block);
            }
            let index = self.opened(stamp);
            for block in made {
                self.add_block(index, block, false);
            }
            return Ok(());
        }
        let mut call = text_or_empty(line, span_of(fields, b"call_id"))?;
        if call.is_empty() {
            call = text_or_empty(line, span_of(fields, b"id"))?;
        }
        let mut name = text_or_empty(line, span_of(fields, b"name"))?;
        if name.is_empty() {
            name = sub.to_owned();
        }
        let mut arguments = Vec::new();
        if sub == "function_call" {
            let text = match json_of(b"arguments")? {
                Json::Null => "{}".to_owned(),
                Json::Str(text) if text.is_empty() => "{}".to_owned(),
                Json::Str(text) => text,
                _ => return Err(Refused), // arguments written as JSON themselves: the Python path
            };
            let parsed = parse_document(text.as_bytes())?;
            if !matches!(parsed, Json::Object(_)) {
                return Err(Refused);
            }
            encode(&mut arguments, &parsed);
        } else {
            let input = match span_of(fields, b"input") {
                None => Json::Str(String::new()),
                Some((s, e)) => match parse_document(&line[s..e])? {
                    value @ (Json::Str(_) | Json::Null) => value,
                    _ => return Err(Refused),
                },
            };
            arguments.extend_from_slice(b"{\"input\":");
            encode(&mut arguments, &input);
            arguments.push(b'}');
        }
        let mut block = b"{\"type\":\"toolCall\",\"id\":".to_vec();
        encode_str(&mut block, &call);
        block.extend_from_slice(b",\"name\":");
        encode_str(&mut block, &name);
        block.extend_from_slice(b",\"arguments\":");
        block.extend_from_slice(&arguments);
        block.push(b'}');
        let index = self.opened(stamp);
        self.tool_names.insert(call, name);
        self.add_block(index, block, true);
        Ok(())
    }

    /// codex._Reader._item's messages that are not the assistant's: a user's, context injected as a user turn
    /// (a custom_message), or instructions (kept whole).
    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        stamp: &Stamp,
        role: String,
        line: &[u8],
        fields: &[(&[u8], usize, usize)],
        start: usize,
        end: usize,
    ) -> Scan<()> {
        let parts = match span_of(fields, b"content") {
            None => Json::Null,
            Some((s, e)) => parse_document(&line[s..e])?,
        };
        let parts = match parts {
            Json::Null => Vec::new(),
            Json::List(items) => items,
            _ => return Err(Refused), // (one that is no list: codex.py reads it for every role, some not at all)
        };
        if role != "user" {
            let item = parse_document(&line[start..end])?;
            let id = short_id(&self.key, &mut self.taken);
            let mut made = envelope(
                std::mem::take(&mut self.scratch),
                "custom",
                &id,
                &self.leaf,
                stamp.text,
                end - start,
            );
            made.extend_from_slice(b"\"customType\":");
            encode_str(&mut made, &format!("codex.{role}"));
            made.extend_from_slice(b",\"data\":");
            encode(&mut made, &item);
            made.push(b'}');
            self.push_line("custom", id, stamp.text, made, HeadOf::Nothing);
            self.counts.add(
                "response_item/message:",
                &role,
                Outcome::Kept,
                Some(Reason::Instructions),
            );
            return Ok(());
        }
        let mut texts = Vec::new();
        for part in &parts {
            if !matches!(part, Json::Object(_)) {
                continue;
            }
            match part.get("type") {
                Some(Json::Str(kind)) if matches!(kind.as_str(), "input_text" | "output_text" | "text") => {}
                _ => return Err(Refused), // images, and blocks written as their JSON: the Python path
            }
            texts.push(match part.get("text") {
                None => String::new(),
                Some(Json::Str(text)) => text.clone(),
                Some(_) => return Err(Refused),
            });
        }
        let joined = texts.concat();
        let mut rest = joined.as_str();
        while let Some(first) = rest.chars().next() {
            if !python_space(first) {
                break;
            }
            rest = &rest[first.len_utf8()..];
        }
        let context = self
            .v
            .context_prefixes
            .iter()
            .any(|prefix| rest.starts_with(prefix.as_str()));
        let id = short_id(&self.key, &mut self.taken);
        if context {
            let parent = self.leaf.replace(id.clone());
            self.entries.push(Made::CustomMessage {
                id,
                parent,
                timestamp: stamp.text.to_owned(),
                custom_type: "codex.context".to_owned(),
                texts,
            });
            self.counts
                .add("response_item/message:", "user", Outcome::Mapped, Some(Reason::Context));
            return Ok(());
        }
        let mut made = envelope(
            std::mem::take(&mut self.scratch),
            "message",
            &id,
            &self.leaf,
            stamp.text,
            64 + texts.iter().map(String::len).sum::<usize>(),
        );
        made.extend_from_slice(b"\"message\":{\"role\":\"user\",\"content\":[");
        for (index, text) in texts.iter().enumerate() {
            if index > 0 {
                made.push(b',');
            }
            made.extend_from_slice(b"{\"type\":\"text\",\"text\":");
            encode_str(&mut made, text);
            made.push(b'}');
        }
        made.extend_from_slice(b"],\"timestamp\":");
        made.extend_from_slice(stamp.ms.to_string().as_bytes());
        made.extend_from_slice(b"}}");
        self.push_line("message", id, stamp.text, made, HeadOf::User);
        self.counts.add("response_item/message:", "user", Outcome::Mapped, None);
        Ok(())
    }
}

/// Whether `line` holds `mark` (the blob mark: an entry's has_blobs).
pub fn holds_mark(line: &[u8], mark: &[u8]) -> bool {
    find_mark(line, mark)
}
