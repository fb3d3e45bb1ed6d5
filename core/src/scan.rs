//! The line scan: a stretch of session lines read for the fields the tree needs, without Python.
//!
//! What this accepts must be exactly what msgspec accepts when it decodes the
//! same stretch into the sidecar's strict envelope (sidecar/corepath/python.py),
//! with the same values. It may refuse more: a refused stretch (`None`) is read
//! by the pure-Python path, which is the reference. So wherever msgspec's
//! behaviour is not plainly JSON's (escaped keys, repeated fields, lone
//! surrogates, deep nesting, text that is not UTF-8 in a field we keep) the
//! scan refuses rather than guesses.

/// Whether `key` is `word`: compared as one fixed-size array (a few integer compares, no call to memcmp, which
/// a slice compare costs and every key of every line pays).
#[inline(always)]
pub(crate) fn is<const N: usize>(key: &[u8], word: &[u8; N]) -> bool {
    if key.len() != N {
        return false;
    }
    let mut differ = 0u8;
    for at in 0..N {
        differ |= key[at] ^ word[at];
    }
    differ == 0
}

/// A field's value as the envelope keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// The key was not in the object (for provider and model, msgspec's UNSET).
    Absent,
    Null,
    /// A string with no escapes: its bytes are `line[start..end]`, checked as UTF-8.
    Span(usize, usize),
    /// A string with escapes, decoded.
    Owned(String),
}

impl Value {
    pub fn text<'a>(&'a self, line: &'a [u8]) -> Option<&'a str> {
        match self {
            Value::Span(start, end) => Some(unsafe { std::str::from_utf8_unchecked(&line[*start..*end]) }),
            Value::Owned(text) => Some(text.as_str()),
            _ => None,
        }
    }
}

/// A message head: role, provider, model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Head {
    pub role: Value,
    pub provider: Value,
    pub model: Value,
}

/// What one line gives: type, id, parentId, timestamp and the message head (None: no message or a null one).
pub struct Envelope {
    pub kind: Value,
    pub id: Value,
    pub parent_id: Value,
    pub timestamp: Value,
    pub head: Option<Head>,
}

impl Envelope {
    pub fn new() -> Self {
        Envelope {
            kind: Value::Absent,
            id: Value::Absent,
            parent_id: Value::Absent,
            timestamp: Value::Absent,
            head: None,
        }
    }

    /// Back to `new`'s state, for the next line.
    pub fn clear(&mut self) {
        self.kind = Value::Absent;
        self.id = Value::Absent;
        self.parent_id = Value::Absent;
        self.timestamp = Value::Absent;
        self.head = None;
    }
}

/// Why a line was not read: the caller hands the stretch to the Python path, so no detail is kept.
pub struct Refused;

pub(crate) type Scan<T> = Result<T, Refused>;

/// Past this nesting the scan refuses (msgspec's own limit is Python's recursion limit, far deeper).
const MAX_DEPTH: usize = 64;

pub(crate) struct Reader<'a> {
    pub(crate) line: &'a [u8],
    pub(crate) at: usize,
}

/// The offset of the first `"`, `\` or control byte at or after `from`, or `line.len()`.
#[inline]
fn string_stop(line: &[u8], from: usize) -> usize {
    let mut at = from;
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::*;
        // SSE2 is part of x86_64: no feature check needed.
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let control = _mm_set1_epi8(0x1f);
        while at + 16 <= line.len() {
            let chunk = _mm_loadu_si128(line.as_ptr().add(at) as *const __m128i);
            let low = _mm_cmpeq_epi8(_mm_min_epu8(chunk, control), chunk);
            let hits = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)),
                low,
            );
            let mask = _mm_movemask_epi8(hits) as u32;
            if mask != 0 {
                return at + mask.trailing_zeros() as usize;
            }
            at += 16;
        }
    }
    while at < line.len() {
        let byte = line[at];
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

/// Bit i set when `line[from + i]` is a `"`, a `\\` or a control byte, for the 64 bytes from `from`
/// (bytes past the line's end read as none of them).
#[inline]
fn special_mask(line: &[u8], from: usize) -> u64 {
    if from + 64 <= line.len() {
        #[cfg(target_arch = "x86_64")]
        unsafe {
            use std::arch::x86_64::*;
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let control = _mm_set1_epi8(0x1f);
            let mut mask = 0u64;
            for part in 0..4 {
                let chunk = _mm_loadu_si128(line.as_ptr().add(from + part * 16) as *const __m128i);
                let low = _mm_cmpeq_epi8(_mm_min_epu8(chunk, control), chunk);
                let hits = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)),
                    low,
                );
                mask |= (_mm_movemask_epi8(hits) as u32 as u64) << (part * 16);
            }
            return mask;
        }
    }
    let mut mask = 0u64;
    for (offset, &byte) in line[from.min(line.len())..line.len().min(from + 64)].iter().enumerate() {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            mask |= 1 << offset;
        }
    }
    mask
}

fn hex_digit(byte: u8) -> Scan<u32> {
    match byte {
        b'0'..=b'9' => Ok((byte - b'0') as u32),
        b'a'..=b'f' => Ok((byte - b'a' + 10) as u32),
        b'A'..=b'F' => Ok((byte - b'A' + 10) as u32),
        _ => Err(Refused),
    }
}

impl<'a> Reader<'a> {
    #[inline]
    pub(crate) fn peek(&self) -> Scan<u8> {
        self.line.get(self.at).copied().ok_or(Refused)
    }

    #[inline]
    pub(crate) fn skip_space(&mut self) {
        while let Some(&byte) = self.line.get(self.at) {
            if byte == b' ' || byte == b'\t' || byte == b'\r' || byte == b'\n' {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    pub(crate) fn expect(&mut self, byte: u8) -> Scan<()> {
        if self.peek()? == byte {
            self.at += 1;
            Ok(())
        } else {
            Err(Refused)
        }
    }

    pub(crate) fn literal<const N: usize>(&mut self, word: &[u8; N]) -> Scan<()> {
        if self.line.get(self.at..self.at + N).is_some_and(|found| is(found, word)) {
            self.at += word.len();
            Ok(())
        } else {
            Err(Refused)
        }
    }

    fn unicode_escape(&mut self) -> Scan<u32> {
        if self.at + 4 > self.line.len() {
            return Err(Refused);
        }
        let mut code = 0;
        for offset in 0..4 {
            code = code * 16 + hex_digit(self.line[self.at + offset])?;
        }
        self.at += 4;
        Ok(code)
    }

    /// One escape after its backslash; the character it stands for.
    fn escape(&mut self) -> Scan<char> {
        let byte = self.peek()?;
        self.at += 1;
        Ok(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.unicode_escape()?;
                match first {
                    0xD800..=0xDBFF => {
                        // Only a high surrogate followed by an escaped low one is a character.
                        self.literal(b"\\u")?;
                        let second = self.unicode_escape()?;
                        if !(0xDC00..=0xDFFF).contains(&second) {
                            return Err(Refused);
                        }
                        char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)).ok_or(Refused)?
                    }
                    0xDC00..=0xDFFF => return Err(Refused),
                    _ => char::from_u32(first).ok_or(Refused)?,
                }
            }
            _ => return Err(Refused),
        })
    }

    /// A string at the opening quote, passed over: its escapes and bytes checked as msgspec checks them (not its
    /// UTF-8). The string reads a block of 64 bytes at a time into one mask of its quotes, backslashes and control
    /// bytes, and steps from bit to bit: a tool's output holds an escape every few dozen bytes.
    pub(crate) fn skip_string(&mut self) -> Scan<()> {
        self.expect(b'"')?;
        let line = self.line;
        let mut block = self.at;
        loop {
            let mut mask = special_mask(line, block);
            while mask != 0 {
                let at = block + mask.trailing_zeros() as usize;
                match line[at] {
                    b'"' => {
                        self.at = at + 1;
                        return Ok(());
                    }
                    b'\\' => {
                        let next = at + 1;
                        let after = match line.get(next) {
                            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => next + 1,
                            Some(b'u') => {
                                self.at = next;
                                self.escape()?;
                                self.at
                            }
                            _ => return Err(Refused),
                        };
                        if after >= block + 64 {
                            block = after;
                            mask = special_mask(line, block);
                            continue;
                        }
                        // Drop the bits of the escape's bytes (all below ``after``).
                        mask &= !0u64 << (after - block);
                    }
                    _ => return Err(Refused), // a raw control character: not JSON
                }
            }
            block += 64;
            if block >= line.len() {
                return Err(Refused); // no closing quote
            }
        }
    }

    /// A string at the opening quote. Kept (`keep`): its value, its bytes checked as UTF-8; else only passed over
    /// (msgspec does not check the UTF-8 of what it skips, so neither does this).
    pub(crate) fn string(&mut self, keep: bool) -> Scan<Value> {
        self.expect(b'"')?;
        let start = self.at;
        let mut decoded: Option<String> = None;
        let mut piece = start;
        loop {
            let stop = string_stop(self.line, self.at);
            let byte = *self.line.get(stop).ok_or(Refused)?;
            match byte {
                b'"' => {
                    self.at = stop + 1;
                    if !keep {
                        return Ok(Value::Absent);
                    }
                    return match decoded {
                        None => {
                            std::str::from_utf8(&self.line[start..stop]).map_err(|_| Refused)?;
                            Ok(Value::Span(start, stop))
                        }
                        Some(mut text) => {
                            text.push_str(std::str::from_utf8(&self.line[piece..stop]).map_err(|_| Refused)?);
                            Ok(Value::Owned(text))
                        }
                    };
                }
                b'\\' => {
                    self.at = stop + 1;
                    if keep {
                        let text = decoded.get_or_insert_with(String::new);
                        text.push_str(std::str::from_utf8(&self.line[piece..stop]).map_err(|_| Refused)?);
                        let character = self.escape()?;
                        decoded.as_mut().unwrap().push(character);
                    } else {
                        self.escape()?;
                    }
                    piece = self.at;
                }
                _ => return Err(Refused), // a raw control character: not JSON
            }
        }
    }

    /// An object key at its opening quote; refused when it holds an escape (msgspec would match the decoded key).
    pub(crate) fn key(&mut self) -> Scan<(usize, usize)> {
        self.expect(b'"')?;
        let start = self.at;
        let stop = string_stop(self.line, start);
        if self.line.get(stop) != Some(&b'"') {
            return Err(Refused);
        }
        self.at = stop + 1;
        Ok((start, stop))
    }

    pub(crate) fn number(&mut self) -> Scan<()> {
        let line = self.line;
        let digits = |at: &mut usize| {
            let from = *at;
            while *at < line.len() && line[*at].is_ascii_digit() {
                *at += 1;
            }
            *at > from
        };
        let mut at = self.at;
        if line.get(at) == Some(&b'-') {
            at += 1;
        }
        match line.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => {
                digits(&mut at);
            }
            _ => return Err(Refused),
        }
        if line.get(at) == Some(&b'.') {
            at += 1;
            if !digits(&mut at) {
                return Err(Refused);
            }
        }
        if matches!(line.get(at), Some(b'e') | Some(b'E')) {
            at += 1;
            if matches!(line.get(at), Some(b'+') | Some(b'-')) {
                at += 1;
            }
            if !digits(&mut at) {
                return Err(Refused);
            }
        }
        self.at = at;
        Ok(())
    }

    /// Any JSON value, passed over but checked as msgspec checks it.
    pub(crate) fn skip_value(&mut self, depth: usize) -> Scan<()> {
        if depth > MAX_DEPTH {
            return Err(Refused);
        }
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => {
                self.at += 1;
                self.skip_space();
                if self.peek()? == b'}' {
                    self.at += 1;
                    return Ok(());
                }
                loop {
                    self.skip_space();
                    self.skip_string()?;
                    self.skip_space();
                    self.expect(b':')?;
                    self.skip_space();
                    self.skip_value(depth + 1)?;
                    self.skip_space();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Ok(());
                        }
                        _ => return Err(Refused),
                    }
                }
            }
            b'[' => {
                self.at += 1;
                self.skip_space();
                if self.peek()? == b']' {
                    self.at += 1;
                    return Ok(());
                }
                loop {
                    self.skip_space();
                    self.skip_value(depth + 1)?;
                    self.skip_space();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Ok(());
                        }
                        _ => return Err(Refused),
                    }
                }
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Refused),
        }
    }

    /// A field the envelope keeps: a string or null, anything else refused (msgspec's validation error).
    fn text_or_null(&mut self) -> Scan<Value> {
        match self.peek()? {
            b'"' => self.string(true),
            b'n' => self.literal(b"null").map(|_| Value::Null),
            _ => Err(Refused),
        }
    }

    /// The members of an object at its `{`, each key handed to `member` (which reads its value).
    pub(crate) fn members(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Scan<()>) -> Scan<()> {
        self.expect(b'{')?;
        self.skip_space();
        if self.peek()? == b'}' {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.skip_space();
            let (start, stop) = self.key()?;
            self.skip_space();
            self.expect(b':')?;
            self.skip_space();
            let line = self.line;
            member(self, &line[start..stop])?;
            self.skip_space();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Refused),
            }
        }
    }

    fn head(&mut self) -> Scan<Option<Head>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Ok(None);
        }
        if self.peek()? != b'{' {
            return Err(Refused);
        }
        let mut head = Head {
            role: Value::Absent,
            provider: Value::Absent,
            model: Value::Absent,
        };
        self.members(|reader, key| {
            let slot = if is(key, b"role") {
                &mut head.role
            } else if is(key, b"provider") {
                &mut head.provider
            } else if is(key, b"model") {
                &mut head.model
            } else {
                return reader.skip_value(2);
            };
            if *slot != Value::Absent {
                return Err(Refused); // a repeated field
            }
            *slot = reader.text_or_null()?;
            Ok(())
        })?;
        Ok(Some(head))
    }
}

/// The envelope of one line (no newline in it) read into `found` (as made by `Envelope::new`), or refused.
/// Read in place, one envelope for all the lines: moving one (some 200 bytes) per line cost a twelfth of the scan.
pub fn envelope_into(line: &[u8], found: &mut Envelope) -> Scan<()> {
    let mut reader = Reader { line, at: 0 };
    let mut saw_message = false;
    reader.members(|reader, key| {
        let slot = if is(key, b"type") {
            &mut found.kind
        } else if is(key, b"id") {
            &mut found.id
        } else if is(key, b"parentId") {
            &mut found.parent_id
        } else if is(key, b"timestamp") {
            &mut found.timestamp
        } else if is(key, b"message") {
            if saw_message {
                return Err(Refused);
            }
            saw_message = true;
            found.head = reader.head()?;
            return Ok(());
        } else {
            return reader.skip_value(1);
        };
        if *slot != Value::Absent {
            return Err(Refused);
        }
        *slot = reader.text_or_null()?;
        Ok(())
    })?;
    // The object must end the line: the caller checked it ends with "}", and one more value would be two per line.
    if reader.at != line.len() {
        return Err(Refused);
    }
    Ok(())
}
