//! Generates `src/generated.rs` from `protocol/schema.json`.
//!
//! Run by `tests/codegen.rs`: the test fails when the committed file differs from
//! what the current schema gives, and `SIDECAR_REGENERATE=1 cargo test --test codegen`
//! rewrites it. Only the subset of JSON Schema that `python -m sidecar.schema`
//! emits is understood; anything else panics, so a new shape is noticed.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Names for types the schema leaves anonymous: (definition, property) -> Rust name.
const TYPE_NAMES: &[(&str, &str, &str)] = &[
    ("BuildContextParams", "format", "ContextFormat"),
    ("StoreSettings", "fsync", "FsyncPolicy"),
    ("ProgressParams", "value", "WorkDoneProgress"),
];

/// Fields typed more precisely than the schema's free-form objects: the typed entries and messages.
const FIELD_TYPES: &[(&str, &str, &str)] = &[
    ("BuildContextResult", "messages", "Vec<AgentMessage>"),
    ("GetEntriesResult", "entries", "Vec<SessionEntry>"),
    ("DidAppendParams", "entries", "Vec<SessionEntry>"),
];

/// Client methods whose natural name is taken by the client's own lifecycle.
const FN_NAMES: &[(&str, &str)] = &[("session/close", "close_session"), ("session/move", "move_session")];

/// Methods the client runs itself (no typed method of their own on `Client`).
const LIFECYCLE: &[&str] = &["initialize", "shutdown"];

const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "static",
    "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while",
];

pub fn generate(schema: &Value) -> String {
    Gen::new(schema).run()
}

struct Gen<'a> {
    schema: &'a Value,
    defs: &'a Map<String, Value>,
    /// Definitions that are variants of a tagged union: name -> the tag property (left out of the struct).
    tagged: BTreeMap<String, String>,
    /// Enums and unions met on the way: name -> code.
    extra: BTreeMap<String, String>,
    /// Types that have no `Default`.
    no_default: BTreeSet<String>,
    defaults: String,
    /// Match arms of `roundtrip`: (kind, method) -> type.
    roundtrip: Vec<(String, String, String)>,
    /// The $defs reachable from `entryShapes`: optional fields keep absent and null apart.
    entry_defs: BTreeSet<String>,
}

fn pascal(s: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if up {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
            up = false;
        } else {
            up = true;
        }
    }
    out
}

fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c.is_alphanumeric() {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    out
}

fn field_ident(name: &str) -> String {
    let s = snake(name);
    if RUST_KEYWORDS.contains(&s.as_str()) {
        format!("r#{s}")
    } else {
        s
    }
}

/// `session/buildContext` -> `BuildContext`, `$/progress` -> `Progress`,
/// `window/workDoneProgress/create` -> `Create`; another family of ours keeps
/// its name: `history/add` -> `HistoryAdd`.
fn method_type_name(method: &str) -> String {
    let last = method.rsplit('/').next().unwrap();
    match method.split_once('/') {
        Some((family, _)) if !matches!(family, "session" | "$" | "window") => {
            format!("{}{}", pascal(family), pascal(last))
        }
        _ => pascal(last),
    }
}

fn doc(out: &mut String, indent: &str, text: &str) {
    let text = text.replace("``", "`");
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    for line in lines {
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

fn lit(s: &str) -> String {
    format!("{s:?}")
}

impl<'a> Gen<'a> {
    fn new(schema: &'a Value) -> Self {
        let defs = schema["$defs"].as_object().expect("$defs");
        Gen {
            schema,
            defs,
            tagged: BTreeMap::new(),
            extra: BTreeMap::new(),
            no_default: ["NumberOrString".to_string()].into_iter().collect(),
            defaults: String::new(),
            roundtrip: Vec::new(),
            entry_defs: BTreeSet::new(),
        }
    }

    fn reach(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                    let name = r.trim_start_matches("#/$defs/").to_string();
                    if self.entry_defs.insert(name.clone()) {
                        self.reach(&self.defs[&name].clone());
                    }
                }
                for value in m.values() {
                    self.reach(value);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.reach(x)),
            _ => {}
        }
    }

    /// The named union $def with the same variants as an inline union.
    fn named_union(&self, s: &Value) -> Option<String> {
        let mapping = &s["discriminator"]["mapping"];
        self.defs
            .iter()
            .find(|(_, d)| d.get("anyOf").is_some() && d.get("discriminator").is_some() && &d["discriminator"]["mapping"] == mapping)
            .map(|(name, _)| name.clone())
    }

    /// A union $def: an enum with one variant per tag and `Unknown` keeping what this crate
    /// does not know (or cannot read) as it was, so entries of other tools and newer versions
    /// stay readable and are written back unchanged.
    fn open_union(&mut self, name: &str, def: &Value) -> String {
        let disc = &def["discriminator"];
        let tag = disc["propertyName"].as_str().unwrap();
        let mut code = String::new();
        if let Some(d) = def.get("description").and_then(Value::as_str) {
            doc(&mut code, "", d);
            code.push_str("///
");
        }
        let _ = writeln!(code, "/// Schema: `#/$defs/{name}`, told apart by `{tag}`; `Unknown` keeps any other (or one that does not fit) as read.");
        code.push_str("#[derive(Debug, Clone, PartialEq)]
");
        let _ = writeln!(code, "pub enum {name} {{");
        let mut ser = String::new();
        let mut de = String::new();
        for (value, target) in disc["mapping"].as_object().unwrap() {
            let target = target.as_str().unwrap().trim_start_matches("#/$defs/");
            let v = pascal(value);
            let _ = writeln!(code, "    /// `{tag}: {value}`
    {v}({target}),");
            let _ = writeln!(ser, "            {name}::{v}(v) => ({}, serde_json::to_value(v).map_err(serde::ser::Error::custom)?),", lit(value));
            let _ = writeln!(
                de,
                "            Some({}) => serde_json::from_value(value.clone()).map({name}::{v}).unwrap_or({name}::Unknown(value)),",
                lit(value)
            );
        }
        let _ = writeln!(code, "    /// Another `{tag}`, or a known one whose fields do not fit: its JSON as read.
    Unknown(Value),
}}
");
        let _ = write!(
            code,
            "impl Serialize for {name} {{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {{
        let (tag, value) = match self {{
{ser}            {name}::Unknown(v) => return v.serialize(s),
        }};
        crate::with_tag({}, tag, value).serialize(s)
    }}
}}

",
            lit(tag)
        );
        let _ = write!(
            code,
            "impl<'de> Deserialize<'de> for {name} {{
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {{
        let value = Value::deserialize(d)?;
        Ok(match value.get({}).and_then(Value::as_str) {{
{de}            _ => {name}::Unknown(value),
        }})
    }}
}}

",
            lit(tag)
        );
        self.no_default.insert(name.to_string());
        code
    }

    fn run(mut self) -> String {
        self.find_unions(self.schema);
        if let Some(shapes) = self.schema.get("entryShapes") {
            self.reach(&shapes.clone());
        }
        let mut out = String::new();
        out.push_str(
            "// @generated by clients/rust/tests/codegen.rs from protocol/schema.json: do not edit.\n\
             // Regenerate with `SIDECAR_REGENERATE=1 cargo test --test codegen`.\n\n\
             #![allow(clippy::all)]\n\n\
             use serde::{Deserialize, Serialize};\n\
             use serde_json::Value;\n\
             use std::collections::BTreeMap;\n\n",
        );
        let version = self.schema["protocolVersion"].as_str().expect("protocolVersion");
        let _ = writeln!(out, "/// The protocol version this crate was generated for (`initialize` sends it).");
        let _ = writeln!(out, "pub const PROTOCOL_VERSION: &str = {};\n", lit(version));
        out.push_str(
            "/// A JSON-RPC id or progress token: an integer or a string.\n\
             #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]\n\
             #[serde(untagged)]\n\
             pub enum NumberOrString {\n    Number(i64),\n    String(String),\n}\n\n",
        );
        // Structs first, in name order; every enum they need is collected on the way.
        let mut structs = String::new();
        for (name, def) in self.defs.iter() {
            let code = if def.get("anyOf").is_some() && def.get("discriminator").is_some() {
                self.open_union(name, def)
            } else {
                self.structure(name, def)
            };
            structs.push_str(&code);
        }
        out.push_str(&structs);
        for code in self.extra.values() {
            out.push_str(code);
        }
        out.push_str(&self.methods());
        out.push_str(&self.server_requests());
        out.push_str(&self.notifications());
        out.push_str(&self.errors());
        out.push_str(&self.roundtrip_fn());
        if !self.defaults.is_empty() {
            out.push_str("mod defaults {\n");
            if self.defaults.contains("Vec<") {
                // A list default names its element type, defined in the parent module.
                out.push_str("    #[allow(unused_imports)]\n    use super::*;\n");
            }
            out.push_str(&self.defaults);
            out.push_str("}\n");
        }
        out
    }

    fn find_unions(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                if let (Some(disc), Some(_)) = (m.get("discriminator"), m.get("anyOf")) {
                    let prop = disc["propertyName"].as_str().expect("propertyName").to_string();
                    for target in disc["mapping"].as_object().expect("mapping").values() {
                        let name = target.as_str().unwrap().trim_start_matches("#/$defs/").to_string();
                        self.tagged.insert(name, prop.clone());
                    }
                }
                for value in m.values() {
                    self.find_unions(value);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.find_unions(x)),
            _ => {}
        }
    }

    fn type_name(&self, def: &str, prop: &str) -> String {
        for (d, p, n) in TYPE_NAMES {
            if *d == def && *p == prop {
                return n.to_string();
            }
        }
        let base = def.trim_end_matches("Params").trim_end_matches("Result").trim_end_matches("Settings");
        format!("{base}{}", pascal(prop))
    }

    /// The Rust type of a schema, and whether null is one of its values.
    fn ty(&mut self, s: &Value, def: &str, prop: &str) -> (String, bool) {
        if let Some(r) = s.get("$ref") {
            return (r.as_str().unwrap().trim_start_matches("#/$defs/").to_string(), false);
        }
        if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
            let nullable = any.iter().any(|m| m.get("type") == Some(&Value::from("null")));
            let rest: Vec<&Value> = any.iter().filter(|m| m.get("type") != Some(&Value::from("null"))).collect();
            if s.get("discriminator").is_some() {
                if let Some(name) = self.named_union(s) {
                    return (name, nullable);
                }
                let name = self.union(s, def, prop);
                return (name, nullable);
            }
            if rest.len() == 1 {
                return (self.ty(rest[0], def, prop).0, nullable);
            }
            let kinds: BTreeSet<&str> = rest.iter().filter_map(|m| m.get("type").and_then(Value::as_str)).collect();
            if rest.len() == 2 && kinds == ["integer", "string"].into_iter().collect() {
                return ("NumberOrString".to_string(), nullable);
            }
            if rest.len() == 2 && kinds == ["integer", "number"].into_iter().collect() {
                return ("serde_json::Number".to_string(), nullable); // a timestamp in ms: kept as written (integer or not)
            }
            if rest.len() == 2 && kinds == ["string", "array"].into_iter().collect() {
                return (self.text_or_blocks(rest[1], def, prop), nullable);
            }
            panic!("{def}.{prop}: an anyOf this generator does not know: {s}");
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            let name = self.string_enum(values, def, prop);
            return (name, false);
        }
        let t = match s.get("type").and_then(Value::as_str) {
            None => "Value".to_string(),
            Some("string") => "String".to_string(),
            Some("integer") => "i64".to_string(),
            Some("number") => "f64".to_string(),
            Some("boolean") => "bool".to_string(),
            Some("null") => "()".to_string(),
            Some("array") => format!("Vec<{}>", self.ty(&s["items"], def, prop).0),
            Some("object") => match s.get("additionalProperties") {
                Some(items @ Value::Object(_)) => match self.ty(items, def, prop) {
                    (t, true) => format!("BTreeMap<String, Option<{t}>>"),
                    (t, false) => format!("BTreeMap<String, {t}>"),
                },
                _ => "Value".to_string(),
            },
            Some(other) => panic!("{def}.{prop}: unknown type {other}"),
        };
        (t, false)
    }

    /// pi's message content: a plain string, or a list of blocks.
    fn text_or_blocks(&mut self, list: &Value, def: &str, prop: &str) -> String {
        let name = self.type_name(def, prop);
        let items = self.ty(list, def, prop).0;
        let mut code = String::new();
        let _ = writeln!(code, "/// `{def}.{prop}`: a plain string or a list of blocks.");
        code.push_str("#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
");
        let _ = writeln!(code, "pub enum {name} {{
    Text(String),
    Blocks({items}),
}}
");
        self.no_default.insert(name.clone());
        self.extra.insert(name.clone(), code);
        name
    }

    fn string_enum(&mut self, values: &[Value], def: &str, prop: &str) -> String {
        let name = self.type_name(def, prop);
        let mut code = String::new();
        let list: Vec<String> = values.iter().map(|v| format!("`{}`", v.as_str().unwrap())).collect();
        let _ = writeln!(code, "/// `{def}.{prop}`: one of {}.", list.join(", "));
        code.push_str("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]\n");
        let _ = writeln!(code, "pub enum {name} {{");
        for v in values {
            let v = v.as_str().expect("string enum");
            let _ = writeln!(code, "    #[serde(rename = {})]\n    {},", lit(v), pascal(v));
        }
        code.push_str("}\n\n");
        self.no_default.insert(name.clone());
        if let Some(old) = self.extra.insert(name.clone(), code.clone()) {
            assert_eq!(old, code, "two different enums named {name}");
        }
        name
    }

    fn union(&mut self, s: &Value, def: &str, prop: &str) -> String {
        let name = self.type_name(def, prop);
        let disc = &s["discriminator"];
        let tag = disc["propertyName"].as_str().unwrap();
        let mut code = String::new();
        let _ = writeln!(code, "/// `{def}.{prop}`: one of several objects, told apart by `{tag}`.");
        code.push_str("#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]\n");
        let _ = writeln!(code, "#[serde(tag = {})]", lit(tag));
        let _ = writeln!(code, "pub enum {name} {{");
        for (value, target) in disc["mapping"].as_object().unwrap() {
            let target = target.as_str().unwrap().trim_start_matches("#/$defs/");
            let _ = writeln!(code, "    #[serde(rename = {})]\n    {}({target}),", lit(value), pascal(value));
        }
        code.push_str("}\n\n");
        self.no_default.insert(name.clone());
        self.extra.insert(name.clone(), code);
        name
    }

    fn default_fn(&mut self, def: &str, prop: &str, ty: &str, value: &Value) -> String {
        let name = format!("{}_{}", snake(def), snake(prop));
        let body = match (ty, value) {
            ("bool", Value::Bool(b)) => b.to_string(),
            ("i64", Value::Number(n)) => n.to_string(),
            ("f64", Value::Number(n)) => {
                let f = n.as_f64().unwrap();
                format!("{f:?}")
            }
            ("String", Value::String(s)) => format!("{}.to_string()", lit(s)),
            (t, Value::Array(items)) if t.starts_with("Vec<") && items.is_empty() => "Vec::new()".to_string(),
            _ => panic!("{def}.{prop}: no default of type {ty} for {value}"),
        };
        let _ = writeln!(self.defaults, "    pub fn {name}() -> {ty} {{\n        {body}\n    }}");
        format!("defaults::{name}")
    }

    fn structure(&mut self, name: &str, def: &Value) -> String {
        assert_eq!(def.get("type").and_then(Value::as_str), Some("object"), "{name} is not an object");
        let props = def.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let required: BTreeSet<&str> =
            def["required"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let strict = def.get("additionalProperties") == Some(&Value::Bool(false));
        let skip = self.tagged.get(name).cloned();
        let mut fields = String::new();
        let mut derive_default = true;
        for (prop, s) in &props {
            if skip.as_deref() == Some(prop.as_str()) {
                continue;
            }
            let (inner, nullable) = match FIELD_TYPES.iter().find(|(d, p, _)| *d == name && *p == prop) {
                Some((_, _, t)) => (t.to_string(), false),
                None => self.ty(s, name, prop),
            };
            let is_required = required.contains(prop.as_str());
            let is_entry = self.entry_defs.contains(name);
            // In a typed entry an optional field read as null is written back as null, and an
            // absent one stays absent (a root's parentId is null; most optional fields are absent).
            let nullable = nullable || (is_entry && !is_required && inner == "Value");
            let default = if is_entry && nullable && !is_required { None } else { s.get("default") };
            let mut attrs: Vec<String> = Vec::new();
            let ident = field_ident(prop);
            if ident.trim_start_matches("r#") != prop.as_str() {
                attrs.push(format!("rename = {}", lit(prop)));
            }
            let mut note = String::new();
            let rust_ty = if is_required {
                note.push_str("Required");
                if nullable {
                    note.push_str(", may be null");
                    format!("Option<{inner}>")
                } else {
                    if self.no_default.contains(&inner) {
                        derive_default = false;
                    }
                    inner.clone()
                }
            } else if default.is_none() && nullable {
                // Absent, null and a value mean three different things.
                note.push_str("Optional: `None` leaves it out, `Some(None)` sends null");
                attrs.push("default".into());
                attrs.push("skip_serializing_if = \"Option::is_none\"".into());
                attrs.push("with = \"crate::nullable\"".into());
                format!("Option<Option<{inner}>>")
            } else if default.is_none_or(Value::is_null) || strict || is_entry {
                note.push_str("Optional");
                if let Some(d) = default.filter(|d| !d.is_null()) {
                    let _ = write!(note, "; the server's default is `{d}`");
                }
                attrs.push("default".into());
                attrs.push("skip_serializing_if = \"Option::is_none\"".into());
                format!("Option<{inner}>")
            } else {
                // A result field with a default: filled in when the server leaves it out.
                let d = default.unwrap();
                let _ = write!(note, "Defaults to `{d}` when absent");
                let f = self.default_fn(name, prop, &inner, d);
                attrs.push(format!("default = {}", lit(&f)));
                derive_default = false;
                inner.clone()
            };
            let _ = writeln!(fields, "    /// `{prop}`. {note}.");
            if !attrs.is_empty() {
                let _ = writeln!(fields, "    #[serde({})]", attrs.join(", "));
            }
            let _ = writeln!(fields, "    pub {ident}: {rust_ty},");
        }
        let mut code = String::new();
        if let Some(d) = def.get("description").and_then(Value::as_str) {
            doc(&mut code, "", d);
            code.push_str("///\n");
        }
        let _ = writeln!(code, "/// Schema: `#/$defs/{name}`{}.", if strict { " (unknown fields are refused)" } else { "" });
        let derives = if derive_default { ", Default" } else { "" };
        let _ = writeln!(code, "#[derive(Debug, Clone, PartialEq, Serialize, Deserialize{derives})]");
        if strict {
            code.push_str("#[serde(deny_unknown_fields)]\n");
        }
        if !derive_default {
            self.no_default.insert(name.to_string());
        }
        let _ = writeln!(code, "pub struct {name} {{");
        code.push_str(&fields);
        code.push_str("}\n\n");
        code
    }

    fn side(&mut self, s: &Value, what: &str) -> String {
        let (t, nullable) = self.ty(s, what, "");
        if nullable {
            format!("Option<{t}>")
        } else {
            t
        }
    }

    fn methods(&mut self) -> String {
        let methods = self.schema["methods"].as_object().expect("methods").clone();
        let mut markers = String::new();
        let mut calls = String::new();
        let mut names = Vec::new();
        for (method, spec) in &methods {
            let marker = method_type_name(method);
            let params = self.side(&spec["params"], method);
            let result = self.side(&spec["result"], method);
            names.push(lit(method));
            self.roundtrip.push(("params".into(), method.clone(), params.clone()));
            self.roundtrip.push(("result".into(), method.clone(), result.clone()));
            let _ = writeln!(markers, "    /// `{method}`: `{params}` -> `{result}`.");
            markers.push_str("    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n");
            let _ = writeln!(markers, "    pub struct {marker};");
            let _ = writeln!(
                markers,
                "    impl crate::Method for {marker} {{\n        const NAME: &'static str = {};\n        type Params = {params};\n        type Result = {result};\n    }}\n",
                lit(method)
            );
            if LIFECYCLE.contains(&method.as_str()) {
                continue;
            }
            let fn_name = FN_NAMES
                .iter()
                .find(|(m, _)| m == method)
                .map(|(_, f)| f.to_string())
                .unwrap_or_else(|| snake(&method_type_name(method)));
            let _ = writeln!(
                calls,
                "    /// `{method}`: sends the request and blocks until its answer.\n    ///\n    /// For progress, cancellation or `.await`, use [`Client::start`]`::<methods::{marker}>`."
            );
            let _ = writeln!(
                calls,
                "    pub fn {fn_name}(&self, params: {params}) -> crate::Result<{result}> {{\n        self.call::<methods::{marker}>(params)\n    }}\n"
            );
        }
        let mut out = String::new();
        out.push_str("/// One marker type per protocol method (client -> server), for [`crate::Client::start`] and [`crate::Client::call`].\npub mod methods {\n    use super::*;\n\n");
        out.push_str(&markers);
        out.push_str("}\n\n");
        let _ = writeln!(out, "/// Every method in the schema, sorted by name.\npub const METHOD_NAMES: &[&str] = &[{}];\n", names.join(", "));
        out.push_str("/// A typed, blocking method for every session method of the protocol.\nimpl crate::Client {\n");
        out.push_str(calls.trim_end());
        out.push_str("\n}\n\n");
        out
    }

    fn server_requests(&mut self) -> String {
        let requests = self.schema.get("serverRequests").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut out = String::from("/// Requests the server sends to the client, one marker type each.\npub mod server_requests {\n    #[allow(unused_imports)]\n    use super::*;\n\n");
        let mut names = Vec::new();
        for (method, spec) in &requests {
            let marker = method_type_name(method);
            let params = self.side(&spec["params"], method);
            let result = self.side(&spec["result"], method);
            names.push(lit(method));
            self.roundtrip.push(("serverRequestParams".into(), method.clone(), params.clone()));
            self.roundtrip.push(("serverRequestResult".into(), method.clone(), result.clone()));
            let _ = writeln!(out, "    /// `{method}`: `{params}` -> `{result}`, answered by the client.");
            out.push_str("    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n");
            let _ = writeln!(
                out,
                "    pub struct {marker};\n    impl crate::ServerRequest for {marker} {{\n        const NAME: &'static str = {};\n        type Params = {params};\n        type Result = {result};\n    }}\n",
                lit(method)
            );
        }
        out.push_str("}\n\n");
        let _ = writeln!(out, "/// Every server -> client request in the schema.\npub const SERVER_REQUEST_NAMES: &[&str] = &[{}];\n", names.join(", "));
        out
    }

    fn notifications(&mut self) -> String {
        let n = self.schema["notifications"].as_object().expect("notifications").clone();
        let from_client = n["clientToServer"].as_object().expect("clientToServer");
        let from_server = n["serverToClient"].as_object().expect("serverToClient");
        let mut out = String::new();
        let names: Vec<String> = from_client.keys().map(|k| lit(k)).collect();
        let _ = writeln!(out, "/// Notifications a client may send.\npub const CLIENT_NOTIFICATION_NAMES: &[&str] = &[{}];\n", names.join(", "));
        let mut variants = String::new();
        let mut arms = String::new();
        let mut method_arms = String::new();
        for (method, s) in from_server {
            let variant = method_type_name(method);
            let t = self.side(s, method);
            self.roundtrip.push(("notification".into(), method.clone(), t.clone()));
            let _ = writeln!(variants, "    /// `{method}`\n    {variant}({t}),");
            let _ = writeln!(arms, "            {} => Self::{variant}(serde_json::from_value(params)?),", lit(method));
            let _ = writeln!(method_arms, "            Self::{variant}(_) => {},", lit(method));
        }
        out.push_str("/// A notification from the server, decoded by its method.\n#[derive(Debug, Clone, PartialEq)]\n#[non_exhaustive]\npub enum ServerNotification {\n");
        out.push_str(&variants);
        out.push_str("    /// A notification this crate does not know (a newer server).\n    Other { method: String, params: Value },\n}\n\n");
        out.push_str("impl ServerNotification {\n    /// Decodes `params` as the type the schema gives `method`.\n    pub fn decode(method: &str, params: Value) -> Result<Self, serde_json::Error> {\n        Ok(match method {\n");
        out.push_str(&arms);
        out.push_str("            _ => Self::Other { method: method.to_string(), params },\n        })\n    }\n\n");
        out.push_str("    /// The notification's method name.\n    pub fn method(&self) -> &str {\n        match self {\n");
        out.push_str(&method_arms);
        out.push_str("            Self::Other { method, .. } => method,\n        }\n    }\n}\n\n");
        out.push_str("/// One typed handler per server notification; `on_notification` gets what none of them took.\nimpl crate::ClientBuilder {\n");
        for (method, s) in from_server {
            let variant = method_type_name(method);
            let t = self.side(s, method);
            let _ = writeln!(
                out,
                "    /// `{method}` with its typed params, on the reader thread (keep it short).\n    pub fn on_{}(self, f: impl Fn({t}) + Send + Sync + 'static) -> Self {{\n        self.typed_notification(move |n| match n {{\n            ServerNotification::{variant}(p) => {{\n                f(p);\n                None\n            }}\n            other => Some(other),\n        }})\n    }}\n",
                snake(&variant)
            );
        }
        out.push_str("}\n\n");
        out
    }

    fn roundtrip_fn(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "/// Decodes `value` as the typed params or result of a method, a server request or a\n\
             /// notification, and encodes it again. `kind` is `params`, `result`, `serverRequestParams`,\n\
             /// `serverRequestResult` or `notification`; `None` for a method the schema does not have.\n\
             /// For tests that hold real traffic against the generated types.\n\
             #[doc(hidden)]\n\
             pub fn roundtrip(kind: &str, method: &str, value: Value) -> Option<Result<Value, serde_json::Error>> {\n\
             \x20   fn rt<T: Serialize + serde::de::DeserializeOwned>(v: Value) -> Result<Value, serde_json::Error> {\n\
             \x20       serde_json::to_value(serde_json::from_value::<T>(v)?)\n\
             \x20   }\n\
             \x20   Some(match (kind, method) {\n",
        );
        for (kind, method, ty) in &self.roundtrip {
            let _ = writeln!(out, "        ({}, {}) => rt::<{ty}>(value),", lit(kind), lit(method));
        }
        out.push_str("        _ => return None,\n    })\n}\n\n");
        out
    }

    fn errors(&mut self) -> String {
        let errors = self.schema["errors"].as_array().expect("errors");
        let mut variants = String::new();
        let mut all = Vec::new();
        let mut code_arms = String::new();
        let mut from_arms = String::new();
        let mut name_arms = String::new();
        let mut desc_arms = String::new();
        for e in errors {
            let code = e["code"].as_i64().unwrap();
            let kind = e["kind"].as_str().unwrap();
            let desc = e["description"].as_str().unwrap_or("").replace("``", "`");
            let v = pascal(kind);
            let _ = writeln!(variants, "    /// {code}: {desc}\n    {v},");
            all.push(format!("Self::{v}"));
            let _ = writeln!(code_arms, "            Self::{v} => {code},");
            let _ = writeln!(from_arms, "            {code} => Self::{v},");
            let _ = writeln!(name_arms, "            Self::{v} => {},", lit(kind));
            let _ = writeln!(desc_arms, "            Self::{v} => {},", lit(&desc));
        }
        let mut out = String::new();
        out.push_str("/// The error codes of the protocol (`error.code`; `error.data.kind` is [`ErrorKind::name`]).\n");
        out.push_str("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n#[non_exhaustive]\npub enum ErrorKind {\n");
        out.push_str(&variants);
        out.push_str("}\n\nimpl ErrorKind {\n");
        let _ = writeln!(out, "    /// Every kind in the schema.\n    pub const ALL: &'static [ErrorKind] = &[{}];\n", all.join(", "));
        let _ = write!(out, "    /// The JSON-RPC error code.\n    pub fn code(self) -> i64 {{\n        match self {{\n{code_arms}        }}\n    }}\n\n");
        let _ = write!(out, "    /// The kind for a code, if the schema has it.\n    pub fn from_code(code: i64) -> Option<Self> {{\n        Some(match code {{\n{from_arms}            _ => return None,\n        }})\n    }}\n\n");
        let _ = write!(out, "    /// The name the server puts in `error.data.kind`.\n    pub fn name(self) -> &'static str {{\n        match self {{\n{name_arms}        }}\n    }}\n\n");
        let _ = write!(out, "    /// What the error means.\n    pub fn description(self) -> &'static str {{\n        match self {{\n{desc_arms}        }}\n    }}\n}}\n\n");
        out
    }
}
