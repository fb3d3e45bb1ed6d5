//! The redaction pre-filter ("gate") on an entry's line as written: whether the full redaction walk must
//! look at it at all (issue 38).
//!
//! The reference is `line_may_hold_secret` in sidecar/export/redact/rules.py, whose comments say why each
//! test is sound; this reads the same line with the same tests, in one pass each instead of Python's
//! regexes and searches. It may answer "walk" more often than Python's, never "clean" for a line the
//! walk would change (tests/export/test_gate_differential.py holds it to both). What the rules own
//! (the needles a run may hold, the stems of secret-sounding names, which keys name no secret, and
//! whether a key does) comes from rules.py when the gate is made: one source for both paths.

use std::collections::HashSet;

/// What the gate is made with, from rules.py.
pub struct GateRules {
    /// The needles (case as written) any row matching inside one run holds.
    pub run_needles: Vec<Vec<u8>>,
    /// The stems of secret-sounding names, lowercase.
    pub stems: Vec<Vec<u8>>,
}

/// A run a row other than the named one can match: 12 non-space characters at least.
const RUN_MIN: usize = 12;
/// A run this long may be a bare secret (bearer, near a keyword, AWS, GCP, Azure, Telegram) whatever it holds.
const RUN_BARE: usize = 20;
/// How far from the line's end its message's tail is looked for.
const TAIL_REACH: usize = 1024;
/// How many keys found plain are remembered.
pub const MAX_PLAIN_KEYS: usize = 8192;

/// A byte's part in a run: a space (ASCII space as Python's str.isspace has it, or a quote), a separator
/// (":" or "="), or a run's own character (any other byte, non-ASCII included: a run can only look longer).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Space,
    Separator,
    Run,
}

const fn part_table() -> [Part; 256] {
    let mut table = [Part::Run; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        // str.isspace for the ASCII range: \t \n \v \f \r, \x1c..\x1f and the space.
        if matches!(b, 0x09..=0x0d | 0x1c..=0x20 | b'"') {
            table[byte] = Part::Space;
        } else if b == b':' || b == b'=' {
            table[byte] = Part::Separator;
        }
        byte += 1;
    }
    table
}

static PART: [Part; 256] = part_table();

/// The offset of `needle` in `hay`, or None.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    if needle.len() > hay.len() {
        return None;
    }
    let last_start = hay.len() - needle.len();
    let mut at = 0;
    while at <= last_start {
        let offset = hay[at..=last_start].iter().position(|&b| b == first)?;
        at += offset;
        if &hay[at + 1..at + needle.len()] == rest {
            return Some(at);
        }
        at += 1;
    }
    None
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

/// The offset of the last `needle` wholly inside `hay[from..]`, or None.
fn rfind_from(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > hay.len() || needle.len() > hay.len() - from {
        return None;
    }
    let mut at = hay.len() - needle.len();
    loop {
        if &hay[at..at + needle.len()] == needle {
            return Some(at);
        }
        if at == from {
            return None;
        }
        at -= 1;
    }
}

/// Past `[^"\\]*"` from `at` (at most `limit` bytes before the quote): the offset after the quote.
fn past_plain_string_body(raw: &[u8], at: usize, limit: usize) -> Option<usize> {
    let stop = raw[at..].iter().position(|&b| b == b'"' || b == b'\\')?;
    (raw[at + stop] == b'"' && stop <= limit).then_some(at + stop + 1)
}

fn literal(raw: &[u8], at: usize, text: &[u8]) -> Option<usize> {
    raw.get(at..at + text.len()).filter(|found| *found == text).map(|_| at + text.len())
}

/// The end of pi's envelope (type, id, parentId, timestamp, in that order, plain strings) at the line's start.
fn envelope_end(raw: &[u8]) -> Option<usize> {
    let at = literal(raw, 0, b"{\"type\":\"")?;
    let at = past_plain_string_body(raw, at, usize::MAX)?;
    let at = literal(raw, at, b",\"id\":\"")?;
    let at = past_plain_string_body(raw, at, usize::MAX)?;
    let at = literal(raw, at, b",\"parentId\":")?;
    let at = match literal(raw, at, b"null") {
        Some(after) => after,
        None => past_plain_string_body(raw, literal(raw, at, b"\"")?, usize::MAX)?,
    };
    let at = literal(raw, at, b",\"timestamp\":\"")?;
    past_plain_string_body(raw, at, usize::MAX)
}

/// Past `-?[0-9][0-9.eE+-]{0,30}` or `null`.
fn past_number(raw: &[u8], at: usize) -> Option<usize> {
    if let Some(after) = literal(raw, at, b"null") {
        return Some(after);
    }
    let mut at = at;
    if raw.get(at) == Some(&b'-') {
        at += 1;
    }
    if !raw.get(at)?.is_ascii_digit() {
        return None;
    }
    at += 1;
    let more = raw[at..].iter().take_while(|&&b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')).count();
    (more <= 30).then_some(at + more)
}

/// Past `{("[A-Za-z]{1,40}":VALUE,?)*}`, VALUE a number, or (`nested`) a number or such an object of numbers.
fn past_figures(raw: &[u8], at: usize, nested: bool) -> Option<usize> {
    let mut at = literal(raw, at, b"{")?;
    loop {
        match raw.get(at)? {
            b'}' => return Some(at + 1),
            b'"' => {
                let letters = raw[at + 1..].iter().take_while(|b| b.is_ascii_alphabetic()).count();
                if letters == 0 || letters > 40 {
                    return None;
                }
                at = literal(raw, at + 1 + letters, b"\":")?;
                at = match raw.get(at) {
                    Some(b'{') if nested => past_figures(raw, at, false)?,
                    _ => past_number(raw, at)?,
                };
                if raw.get(at) == Some(&b',') {
                    at += 1;
                }
            }
            _ => return None,
        }
    }
}

/// Whether a message's tail (api, provider, model, stopReason, usage, timestamp, in any order) starts at
/// `at` and runs to the closing braces that end the line.
fn tail_from(raw: &[u8], at: usize) -> bool {
    let mut at = at;
    let mut fields = 0;
    loop {
        let next = [&b",\"api\":\""[..], b",\"provider\":\"", b",\"model\":\"", b",\"stopReason\":\""]
            .iter()
            .find_map(|name| literal(raw, at, name))
            .and_then(|body| past_plain_string_body(raw, body, 200))
            .or_else(|| literal(raw, at, b",\"usage\":").and_then(|value| past_figures(raw, value, true)))
            .or_else(|| {
                let digits_at = literal(raw, at, b",\"timestamp\":")?;
                let digits = raw[digits_at..].iter().take_while(|b| b.is_ascii_digit()).count();
                (1..=20).contains(&digits).then_some(digits_at + digits)
            });
        match next {
            Some(after) => {
                at = after;
                fields += 1;
            }
            None => break,
        }
    }
    fields > 0 && (&raw[at..] == b"}}" || &raw[at..] == b"}}\n")
}

/// Where the free text of `raw` begins and ends: its envelope and its message's tail left out.
pub fn free_bounds(raw: &[u8]) -> (usize, usize) {
    let start = envelope_end(raw).unwrap_or(0);
    let end = raw.len();
    let near_end = start.max(end.saturating_sub(TAIL_REACH));
    for field in [&b",\"api\":\""[..], b",\"timestamp\":"] {
        if let Some(at) = rfind_from(raw, field, near_end) {
            if at > start && tail_from(raw, at) {
                return (start, at);
            }
        }
    }
    (start, end)
}

/// A run of 12 or more that a row other than the named one can match: 20 or more, or holding a needle.
fn runs_may_match(text: &[u8], needles: &[Vec<u8>]) -> bool {
    let mut at = 0;
    while at < text.len() {
        if PART[text[at] as usize] != Part::Run {
            at += 1;
            continue;
        }
        let run_end = at + text[at..].iter().take_while(|&&b| PART[b as usize] == Part::Run).count();
        let run = &text[at..run_end];
        if run.len() >= RUN_BARE || (run.len() >= RUN_MIN && needles.iter().any(|needle| contains(run, needle))) {
            return true;
        }
        at = run_end;
    }
    false
}

/// `://` user `:` password `@`, as rules.py's _URL_USERINFO reads it.
fn url_userinfo(text: &[u8]) -> bool {
    let user_char = |b: u8| !(b.is_ascii_whitespace() || b == 0x0b || matches!(b, b':' | b'/' | b'@' | b'\'' | b'"' | b'<' | b'>'));
    let password_char = |b: u8| !(b.is_ascii_whitespace() || b == 0x0b || matches!(b, b'@' | b'/' | b'\'' | b'"' | b'<' | b'>'));
    let mut from = 0;
    while let Some(offset) = find(&text[from..], b"://") {
        let scheme_end = from + offset + 3;
        let user = text[scheme_end..].iter().take_while(|&&b| user_char(b)).count();
        if user <= 64 && text.get(scheme_end + user) == Some(&b':') {
            let password_at = scheme_end + user + 1;
            let password = text[password_at..].iter().take_while(|&&b| password_char(b)).count();
            if (1..=128).contains(&password) && text.get(password_at + password) == Some(&b'@') {
                return true;
            }
        }
        from = from + offset + 1;
    }
    false
}

/// An escape that hides what the counts read: `\/`, `\u00[2-7]`, `\u2026`, or `\n[... ` (cut_text's marker).
fn telling_escape(text: &[u8]) -> bool {
    let mut from = 0;
    while let Some(offset) = text[from..].iter().position(|&b| b == b'\\') {
        let after = &text[from + offset + 1..];
        if after.first() == Some(&b'/')
            || (after.len() >= 4 && &after[..3] == b"u00" && (b'2'..=b'7').contains(&after[3]))
            || after.starts_with(b"u2026")
            || after.starts_with(b"n[... ")
        {
            return true;
        }
        from += offset + 1;
    }
    false
}

/// What a row reaching across runs always holds: a key block's "PRIVATE KEY", an escape that hides
/// separators, a URL's user:password@, a cut token's "…".
fn across_runs(text: &[u8]) -> bool {
    contains(text, b"PRIVATE KEY")
        || telling_escape(text)
        || (text.contains(&b'@') && url_userinfo(text))
        || contains(text, "…".as_bytes())
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Separators {
    None,
    InText,
    NamedKey,
}

/// Why this reading of the keys is sound is told in rules.py's `_separators_or_named_key`. `plain` holds
/// the keys known to name no secret; `names_secret` judges a key not met before.
fn separators_or_named_key<E>(
    raw: &[u8],
    start: usize,
    end: usize,
    plain: &mut HashSet<Vec<u8>>,
    names_secret: &mut dyn FnMut(&[u8]) -> Result<bool, E>,
) -> Result<Separators, E> {
    let mut found = if raw[start..end].contains(&b'=') { Separators::InText } else { Separators::None };
    let mut at = start;
    while let Some(offset) = raw[at..end].iter().position(|&b| b == b':') {
        let colon = at + offset;
        at = colon + 1;
        if colon < start + 2 {
            return Ok(Separators::NamedKey); // no room for a key before it: a line not read here
        }
        if raw[colon - 1] != b'"' || raw[colon - 2] == b'\\' {
            found = Separators::InText;
            continue;
        }
        let Some(opening) = raw[start..colon - 1].iter().rposition(|&b| b == b'"').map(|offset| start + offset) else {
            return Ok(Separators::NamedKey);
        };
        let key = &raw[opening + 1..colon - 1];
        if plain.contains(key) {
            continue;
        }
        if opening < 1 || !matches!(raw[opening - 1], b'{' | b',') || key.contains(&b'\\') || key.len() > 80 {
            return Ok(Separators::NamedKey);
        }
        if names_secret(key)? {
            return Ok(Separators::NamedKey);
        }
        if plain.len() < MAX_PLAIN_KEYS {
            plain.insert(key.to_vec());
        }
    }
    Ok(found)
}

fn name_char(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'$' | b'@' | b'-')
}

/// rules.py's `_AFTER_STEM` matched at `at` of the lowercased text: `[a-z0-9_.$@-]{0,64}(?:\\*["'])?[ \t]{0,4}(?:[=:]|->)`.
fn separator_after_stem(lower: &[u8], at: usize) -> bool {
    let name = lower[at..].iter().take(64).take_while(|&&b| name_char(b)).count();
    // A name's own "-" may be the "->" (the name shorter by it).
    if (0..=name).any(|length| lower[at + length..].starts_with(b"->")) {
        return true;
    }
    let mut after = at + name;
    let backslashes = lower[after..].iter().take_while(|&&b| b == b'\\').count();
    if matches!(lower.get(after + backslashes), Some(b'"' | b'\'')) {
        after += backslashes + 1;
    }
    after += lower[after..].iter().take(4).take_while(|&&b| b == b' ' || b == b'\t').count();
    matches!(lower.get(after), Some(b'=' | b':')) || lower[after..].starts_with(b"->")
}

fn flag_char(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
}

/// rules.py's `_FLAG_WITH_STEM` searched in the lowercased text: `-[a-z0-9_.-]{0,64}?STEM[a-z0-9_.-]{0,64}[ \t=]`.
fn flag_with_stem(lower: &[u8], stems: &[Vec<u8>]) -> bool {
    let mut at = 0;
    while at < lower.len() {
        if !flag_char(lower[at]) {
            at += 1;
            continue;
        }
        let run_end = at + lower[at..].iter().take_while(|&&b| flag_char(b)).count();
        // The character after the flag's last must be a space, a tab or "=": the whole run is the flag's.
        if matches!(lower.get(run_end), Some(b' ' | b'\t' | b'=')) {
            for dash in (at..run_end).filter(|&i| lower[i] == b'-') {
                for stem in stems {
                    let earliest = dash + 1;
                    let latest = (dash + 1 + 64).min(run_end.saturating_sub(stem.len()));
                    if (earliest..=latest).any(|s| {
                        s + stem.len() <= run_end && &lower[s..s + stem.len()] == stem.as_slice() && run_end - (s + stem.len()) <= 64
                    }) {
                        return true;
                    }
                }
            }
        }
        at = run_end;
    }
    false
}

/// False only when no row can match any string of this JSON line (its structural fields aside).
pub fn line_may_hold_secret<E>(
    raw: &[u8],
    rules: &GateRules,
    plain: &mut HashSet<Vec<u8>>,
    names_secret: &mut dyn FnMut(&[u8]) -> Result<bool, E>,
) -> Result<bool, E> {
    let (start, end) = free_bounds(raw);
    let text = &raw[start..end];
    if runs_may_match(text, &rules.run_needles) || across_runs(text) {
        return Ok(true);
    }
    // A flag (--api-key v) needs no separator but its dash and a space.
    let flags = text.contains(&b'-') && (contains(text, b"->") || contains(text, b" -"));
    let separators = separators_or_named_key(raw, start, end, plain, names_secret)?;
    if separators == Separators::NamedKey {
        return Ok(true);
    }
    if !flags && separators == Separators::None {
        return Ok(false);
    }
    let lower = text.to_ascii_lowercase();
    let mut any_stem = false;
    for stem in &rules.stems {
        let mut from = 0;
        while let Some(offset) = find(&lower[from..], stem) {
            any_stem = true;
            if separator_after_stem(&lower, from + offset + stem.len()) {
                return Ok(true);
            }
            from += offset + 1;
        }
    }
    Ok(any_stem && lower.contains(&b'-') && flag_with_stem(&lower, &rules.stems))
}
