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

// What a byte is to the gate, as bits: one table lookup a byte in the one pass over the free text
// (`survey`), which finds the runs and which bytes later tests wait for.
/// A run's own byte: anything but an ASCII space (as Python's str.isspace has it), a quote, ":" or "=" (a
/// non-ASCII byte is one too: a run can only look longer).
const RUN: u8 = 1;
const EQUALS: u8 = 2;
const COLON: u8 = 4;
const AT_SIGN: u8 = 8;
const BACKSLASH: u8 = 16;
const DASH: u8 = 32;
/// The first byte of "…" (and of other characters: a hint only).
const E2: u8 = 64;
/// The first byte of "PRIVATE KEY".
const CAPITAL_P: u8 = 128;

const fn byte_table() -> [u8; 256] {
    let mut table = [RUN; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = match b {
            // str.isspace for the ASCII range: \t \n \v \f \r, \x1c..\x1f and the space.
            0x09..=0x0d | 0x1c..=0x20 | b'"' => 0,
            b'=' => EQUALS,
            b':' => COLON,
            b'@' => RUN | AT_SIGN,
            b'\\' => RUN | BACKSLASH,
            b'-' => RUN | DASH,
            0xe2 => RUN | E2,
            b'P' => RUN | CAPITAL_P,
            _ => RUN,
        };
        byte += 1;
    }
    table
}

static BYTE: [u8; 256] = byte_table();

/// One pass over the free text: Err(()) when a run a row other than the named one can match is in it (12
/// or more, and 20 or more or holding a needle); else the bits of every byte met.
fn survey(text: &[u8], needles: &[Vec<u8>]) -> Result<u8, ()> {
    let (seen, any_long_run) = bits_and_long_run(text);
    if !any_long_run {
        return Ok(seen);
    }
    let mut run_start = 0;
    for (at, &byte) in text.iter().enumerate() {
        if BYTE[byte as usize] & RUN == 0 {
            if at - run_start >= RUN_MIN && run_may_match(&text[run_start..at], needles) {
                return Err(());
            }
            run_start = at + 1;
        }
    }
    if text.len() - run_start >= RUN_MIN && run_may_match(&text[run_start..], needles) {
        return Err(());
    }
    Ok(seen)
}

/// The bits of every byte of `text`, and whether a run of 12 or more is in it. 16 bytes a step (SSE2): each
/// byte's class by comparisons, the runs by their bit masks (a run of 12 is 12 set bits in a row, carried
/// from one step to the next), the rest one by one.
fn bits_and_long_run(text: &[u8]) -> (u8, bool) {
    let mut seen = 0u8;
    let mut carried = 0u32; // the run that ends the bytes read so far
    let mut long_run = false;
    let mut at = 0;
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::*;
        let splat = |byte: u8| _mm_set1_epi8(byte as i8);
        let (quote, colon, equals) = (splat(b'"'), splat(b':'), splat(b'='));
        let (at_sign, backslash, dash, e2, capital_p) =
            (splat(b'@'), splat(b'\\'), splat(b'-'), splat(0xe2), splat(b'P'));
        let (tab, unit_separators, four) = (splat(0x09), splat(0x1c), splat(4));
        // `byte - low <= 4`, unsigned: \t..\r, and \x1c..the space.
        let within_four = |chunk: __m128i, low: __m128i| {
            let offset = _mm_sub_epi8(chunk, low);
            _mm_cmpeq_epi8(_mm_min_epu8(offset, four), offset)
        };
        let zero = _mm_setzero_si128();
        let (mut seen_colon, mut seen_equals, mut seen_at, mut seen_backslash) = (zero, zero, zero, zero);
        let (mut seen_dash, mut seen_e2, mut seen_p) = (zero, zero, zero);
        while at + 16 <= text.len() {
            let chunk = _mm_loadu_si128(text.as_ptr().add(at) as *const __m128i);
            let is_colon = _mm_cmpeq_epi8(chunk, colon);
            let is_equals = _mm_cmpeq_epi8(chunk, equals);
            let not_run = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_or_si128(is_colon, is_equals)),
                _mm_or_si128(within_four(chunk, tab), within_four(chunk, unit_separators)),
            );
            seen_colon = _mm_or_si128(seen_colon, is_colon);
            seen_equals = _mm_or_si128(seen_equals, is_equals);
            seen_at = _mm_or_si128(seen_at, _mm_cmpeq_epi8(chunk, at_sign));
            seen_backslash = _mm_or_si128(seen_backslash, _mm_cmpeq_epi8(chunk, backslash));
            seen_dash = _mm_or_si128(seen_dash, _mm_cmpeq_epi8(chunk, dash));
            seen_e2 = _mm_or_si128(seen_e2, _mm_cmpeq_epi8(chunk, e2));
            seen_p = _mm_or_si128(seen_p, _mm_cmpeq_epi8(chunk, capital_p));
            let runs = !(_mm_movemask_epi8(not_run) as u32) & 0xffff;
            if !long_run {
                let two = runs & (runs >> 1);
                let four_set = two & (two >> 2);
                let eight = four_set & (four_set >> 4);
                long_run = carried + runs.trailing_ones() >= RUN_MIN as u32 || eight & (four_set >> 8) != 0;
                carried = if runs == 0xffff {
                    carried + 16
                } else {
                    (runs as u16).leading_ones()
                };
            }
            at += 16;
        }
        for (vector, bit) in [
            (seen_colon, COLON),
            (seen_equals, EQUALS),
            (seen_at, AT_SIGN),
            (seen_backslash, BACKSLASH),
            (seen_dash, DASH),
            (seen_e2, E2),
            (seen_p, CAPITAL_P),
        ] {
            if _mm_movemask_epi8(vector) != 0 {
                seen |= bit;
            }
        }
    }
    for &byte in &text[at..] {
        let bits = BYTE[byte as usize];
        seen |= bits;
        carried = if bits & RUN != 0 { carried + 1 } else { 0 };
        long_run |= carried >= RUN_MIN as u32;
    }
    (seen & !RUN, long_run)
}

fn run_may_match(run: &[u8], needles: &[Vec<u8>]) -> bool {
    run.len() >= RUN_BARE || needles.iter().any(|needle| contains(run, needle))
}

/// The offset of the first byte of `data` equal to `one` or `other`, or None: 16 bytes a step (SSE2), as
/// the colons and string ends of a long line are looked for one by one.
fn find_either(data: &[u8], one: u8, other: u8) -> Option<usize> {
    let mut at = 0;
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::*;
        let (ones, others) = (_mm_set1_epi8(one as i8), _mm_set1_epi8(other as i8));
        while at + 16 <= data.len() {
            let chunk = _mm_loadu_si128(data.as_ptr().add(at) as *const __m128i);
            let hits = _mm_or_si128(_mm_cmpeq_epi8(chunk, ones), _mm_cmpeq_epi8(chunk, others));
            let mask = _mm_movemask_epi8(hits) as u32;
            if mask != 0 {
                return Some(at + mask.trailing_zeros() as usize);
            }
            at += 16;
        }
    }
    data[at..]
        .iter()
        .position(|&byte| byte == one || byte == other)
        .map(|offset| at + offset)
}

fn find_byte(data: &[u8], byte: u8) -> Option<usize> {
    find_either(data, byte, byte)
}

/// The offset of `needle` in `hay`, or None.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    if needle.len() > hay.len() {
        return None;
    }
    let last_start = hay.len() - needle.len();
    let mut at = 0;
    while at <= last_start {
        let offset = find_byte(&hay[at..=last_start], first)?;
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
        if hay[at] == needle[0] && &hay[at..at + needle.len()] == needle {
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
    let stop = find_either(&raw[at..], b'"', b'\\')?;
    (raw[at + stop] == b'"' && stop <= limit).then_some(at + stop + 1)
}

fn literal(raw: &[u8], at: usize, text: &[u8]) -> Option<usize> {
    raw.get(at..at + text.len())
        .filter(|found| *found == text)
        .map(|_| at + text.len())
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
    let more = raw[at..]
        .iter()
        .take_while(|&&b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        .count();
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
        let next = [
            &b",\"api\":\""[..],
            b",\"provider\":\"",
            b",\"model\":\"",
            b",\"stopReason\":\"",
        ]
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

/// `://` user `:` password `@`, as rules.py's _URL_USERINFO reads it.
fn url_userinfo(text: &[u8]) -> bool {
    let user_char =
        |b: u8| !(b.is_ascii_whitespace() || b == 0x0b || matches!(b, b':' | b'/' | b'@' | b'\'' | b'"' | b'<' | b'>'));
    let password_char =
        |b: u8| !(b.is_ascii_whitespace() || b == 0x0b || matches!(b, b'@' | b'/' | b'\'' | b'"' | b'<' | b'>'));
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
    while let Some(offset) = find_byte(&text[from..], b'\\') {
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
/// separators, a URL's user:password@, a cut token's "…". `seen`: the bits of the text's bytes.
fn across_runs(text: &[u8], seen: u8) -> bool {
    (seen & CAPITAL_P != 0 && contains(text, b"PRIVATE KEY"))
        || (seen & BACKSLASH != 0 && telling_escape(text))
        || (seen & AT_SIGN != 0 && url_userinfo(text))
        || (seen & E2 != 0 && contains(text, "…".as_bytes()))
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
    let mut found = if find_byte(&raw[start..end], b'=').is_some() {
        Separators::InText
    } else {
        Separators::None
    };
    let mut at = start;
    while let Some(offset) = find_byte(&raw[at..end], b':') {
        let colon = at + offset;
        at = colon + 1;
        if colon < start + 2 {
            return Ok(Separators::NamedKey); // no room for a key before it: a line not read here
        }
        if raw[colon - 1] != b'"' || raw[colon - 2] == b'\\' {
            found = Separators::InText;
            continue;
        }
        let Some(opening) = raw[start..colon - 1]
            .iter()
            .rposition(|&b| b == b'"')
            .map(|offset| start + offset)
        else {
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
    after += lower[after..]
        .iter()
        .take(4)
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
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
                        s + stem.len() <= run_end
                            && &lower[s..s + stem.len()] == stem.as_slice()
                            && run_end - (s + stem.len()) <= 64
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
    let Ok(seen) = survey(text, &rules.run_needles) else {
        return Ok(true);
    };
    if across_runs(text, seen) {
        return Ok(true);
    }
    // A flag (--api-key v) needs no separator but its dash and a space.
    let flags = seen & DASH != 0 && (contains(text, b"->") || contains(text, b" -"));
    let separators = if seen & (COLON | EQUALS) == 0 {
        Separators::None
    } else {
        separators_or_named_key(raw, start, end, plain, names_secret)?
    };
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
