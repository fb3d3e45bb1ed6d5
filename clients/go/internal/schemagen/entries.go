package schemagen

// The typed session entries, messages and content blocks (entries_gen.go):
// every $def reachable from schema.json's entryShapes. A discriminated union
// becomes an interface with one struct per variant, a Decode function and an
// Unknown variant keeping the raw JSON of what this client does not know, so
// entries pi, oh-my-pi or a newer sidecar write stay readable. Also the
// constants of every enum string of the whole schema.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// entryDefs are the $defs reachable from entryShapes, in name order.
func (g *gen) entryDefs() []string {
	seen := map[string]bool{}
	var walk func(d *Def)
	walk = func(d *Def) {
		if d == nil {
			return
		}
		if d.Ref != "" {
			name := refName(d.Ref)
			if !seen[name] {
				seen[name] = true
				walk(g.s.Defs[name])
			}
			return
		}
		for _, p := range d.Properties.Map {
			walk(p)
		}
		walk(d.Items)
		for _, a := range d.AnyOf {
			walk(a)
		}
		if len(d.AdditionalProperties) > 0 && d.AdditionalProperties[0] == '{' {
			var inner Def
			if json.Unmarshal(d.AdditionalProperties, &inner) == nil {
				walk(&inner)
			}
		}
	}
	for _, d := range g.s.EntryShapes {
		walk(d)
	}
	return sortedKeys(seen)
}

func isUnion(d *Def) bool { return d != nil && len(d.AnyOf) > 0 && d.Discriminator != nil }

// unionNamed finds the named union $def with the same variants as an inline one.
func (g *gen) unionNamed(d *Def) (string, error) {
	key := func(u *Def) string {
		var refs []string
		for _, a := range u.AnyOf {
			refs = append(refs, a.Ref)
		}
		sort.Strings(refs)
		return u.Discriminator.PropertyName + ":" + strings.Join(refs, ",")
	}
	want := key(d)
	for _, name := range sortedKeys(g.s.Defs) {
		if u := g.s.Defs[name]; isUnion(u) && key(u) == want {
			return name, nil
		}
	}
	return "", fmt.Errorf("an inline union with no named $def: %s", want)
}

// variantTags maps each variant struct to its tag property and value.
func (g *gen) variantTags() map[string][2]string {
	tags := map[string][2]string{}
	for _, name := range sortedKeys(g.s.Defs) {
		u := g.s.Defs[name]
		if !isUnion(u) {
			continue
		}
		prop := u.Discriminator.PropertyName
		for _, a := range u.AnyOf {
			v := refName(a.Ref)
			if p := g.s.Defs[v].Properties.Map[prop]; p != nil && len(p.Enum) == 1 {
				tags[v] = [2]string{prop, fmt.Sprint(p.Enum[0])}
			}
		}
	}
	return tags
}

type entryGen struct {
	*gen
	extra bytes.Buffer    // string-or-list types met on the way
	lists map[string]bool // unions used in a list: their List type is written
	made  map[string]bool
}

// entryType is the Go type of a property of an entry struct, and whether a
// nil value stands for absent (so no pointer is needed).
func (e *entryGen) entryType(d *Def, owner, field string) (string, bool, error) {
	if d.Ref != "" {
		name := refName(d.Ref)
		if isUnion(e.s.Defs[name]) {
			return name, true, nil
		}
		return name, false, nil
	}
	if isUnion(d) {
		name, err := e.unionNamed(d)
		return name, true, err
	}
	if len(d.AnyOf) > 0 {
		var rest []*Def
		for _, a := range d.AnyOf {
			if a.Type != "null" {
				rest = append(rest, a)
			}
		}
		if len(rest) == 1 {
			return e.entryType(rest[0], owner, field)
		}
		if len(rest) == 2 && rest[0].Type == "integer" && rest[1].Type == "number" {
			return "float64", false, nil // a timestamp in milliseconds, written either way
		}
		if len(rest) == 2 && rest[0].Type == "string" && rest[1].Type == "array" {
			return e.stringOrList(rest[1], owner, field)
		}
		return "", false, fmt.Errorf("%s.%s: an anyOf the entry generator does not know", owner, field)
	}
	if len(d.Enum) > 0 {
		return "string", false, nil
	}
	switch d.Type {
	case "":
		return "any", true, nil
	case "string":
		return "string", false, nil
	case "integer":
		return "int", false, nil
	case "number":
		return "float64", false, nil
	case "boolean":
		return "bool", false, nil
	case "object":
		if len(d.AdditionalProperties) > 0 && d.AdditionalProperties[0] == '{' {
			var inner Def
			if err := json.Unmarshal(d.AdditionalProperties, &inner); err != nil {
				return "", false, err
			}
			t, nilable, err := e.entryType(&inner, owner, field)
			if err != nil {
				return "", false, err
			}
			if _, isNull := nullable(&inner); isNull && !nilable {
				t = "*" + t
			}
			return "map[string]" + t, true, nil
		}
		return "map[string]any", true, nil
	case "array":
		if d.Items == nil {
			return "[]any", true, nil
		}
		t, _, err := e.entryType(d.Items, owner, field)
		if err != nil {
			return "", false, err
		}
		if isUnion(e.s.Defs[t]) {
			e.lists[t] = true
			return t + "List", true, nil
		}
		return "[]" + t, true, nil
	}
	return "", false, fmt.Errorf("%s.%s: type %q", owner, field, d.Type)
}

// stringOrList writes a type for "a string, or a list of blocks" (pi's user content).
func (e *entryGen) stringOrList(list *Def, owner, field string) (string, bool, error) {
	name := owner + GoName(field)
	items, _, err := e.entryType(list, owner, field)
	if err != nil {
		return "", false, err
	}
	if e.made[name] {
		return name, false, nil
	}
	e.made[name] = true
	b := &e.extra
	fmt.Fprintf(b, "// %s is %s.%s: a plain string (Text) or a list of blocks (Blocks).\n", name, owner, field)
	fmt.Fprintf(b, "type %s struct {\n\tText   *string\n\tBlocks %s\n}\n\n", name, items)
	fmt.Fprintf(b, "func (c %s) MarshalJSON() ([]byte, error) {\n\tif c.Text != nil {\n\t\treturn json.Marshal(*c.Text)\n\t}\n\tif c.Blocks == nil {\n\t\treturn []byte(\"[]\"), nil\n\t}\n\treturn json.Marshal(c.Blocks)\n}\n\n", name)
	fmt.Fprintf(b, "func (c *%s) UnmarshalJSON(data []byte) error {\n\t*c = %s{}\n\tif trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '\"' {\n\t\tc.Text = new(string)\n\t\treturn json.Unmarshal(trimmed, c.Text)\n\t}\n\treturn json.Unmarshal(data, &c.Blocks)\n}\n\n", name, name)
	return name, false, nil
}

func (g *gen) entries() ([]byte, error) {
	e := &entryGen{gen: g, lists: map[string]bool{}, made: map[string]bool{}}
	tags := g.variantTags()
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("package sidecar\n\nimport (\n\t\"bytes\"\n\t\"encoding/json\"\n)\n\n")
	b.WriteString("var _ = bytes.TrimSpace\n\n")
	if err := g.enumConstants(&b); err != nil {
		return nil, err
	}
	defs := g.entryDefs()
	unionsOf := map[string][]string{} // variant -> the unions it is in
	for _, name := range defs {
		if d := g.s.Defs[name]; isUnion(d) {
			for _, a := range d.AnyOf {
				unionsOf[refName(a.Ref)] = append(unionsOf[refName(a.Ref)], name)
			}
		}
	}
	for _, name := range defs {
		d := g.s.Defs[name]
		if isUnion(d) {
			e.lists[name] = true
			if err := e.writeEntryUnion(&b, name, d); err != nil {
				return nil, err
			}
			continue
		}
		if err := e.writeEntryStruct(&b, name, d, tags, unionsOf[name]); err != nil {
			return nil, err
		}
	}
	for _, u := range sortedKeys(e.lists) {
		fmt.Fprintf(&b, "// %sList is a JSON list of %s, each read with Decode%s.\ntype %sList []%s\n\n", u, u, u, u, u)
		fmt.Fprintf(&b, "func (l *%sList) UnmarshalJSON(data []byte) error {\n\tvar raws []json.RawMessage\n\tif err := json.Unmarshal(data, &raws); err != nil {\n\t\treturn err\n\t}\n\tif raws == nil {\n\t\t*l = nil\n\t\treturn nil\n\t}\n\tout := make(%sList, len(raws))\n\tfor i, raw := range raws {\n\t\tv, err := Decode%s(raw)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tout[i] = v\n\t}\n\t*l = out\n\treturn nil\n}\n\n", u, u, u)
	}
	b.WriteString("// entryTypes holds a zero value of each entry type, and a nil pointer to each union, for the tests.\nvar entryTypes = map[string]any{\n")
	for _, name := range defs {
		if isUnion(g.s.Defs[name]) {
			fmt.Fprintf(&b, "\t%q: (*%s)(nil),\n\t%q: Unknown%s{},\n", name, name, "Unknown"+name, name)
		} else {
			fmt.Fprintf(&b, "\t%q: %s{},\n", name, name)
		}
	}
	b.WriteString("}\n\n")
	b.Write(e.extra.Bytes())
	return gofmt(b.Bytes())
}

func (e *entryGen) writeEntryUnion(b *bytes.Buffer, name string, d *Def) error {
	tag := d.Discriminator.PropertyName
	var variants []string
	for _, a := range d.AnyOf {
		variants = append(variants, refName(a.Ref))
	}
	comment(b, "", fmt.Sprintf("%s is one of %s, or Unknown%s, told apart by %q. Decode%s reads one; a type switch tells them apart.", name, strings.Join(variants, ", "), name, tag, name))
	if d.Description != "" {
		comment(b, "", d.Description)
	}
	fmt.Fprintf(b, "type %s interface{ is%s() }\n\n", name, name)
	for _, v := range variants {
		fmt.Fprintf(b, "func (%s) is%s() {}\n", v, name)
	}
	fmt.Fprintf(b, "func (Unknown%s) is%s() {}\n\n", name, name)
	fmt.Fprintf(b, "// Unknown%s is a %s this client does not know (another tool's, a newer version's), or one whose\n// shape did not fit its type (Err says why): Raw is its JSON, kept as it was and written back unchanged.\n", name, name)
	fmt.Fprintf(b, "type Unknown%s struct {\n\t// Tag is its %q.\n\tTag string\n\tRaw json.RawMessage\n\tErr error\n}\n\n", name, tag)
	fmt.Fprintf(b, "func (u Unknown%s) MarshalJSON() ([]byte, error) {\n\tif len(u.Raw) == 0 {\n\t\treturn []byte(\"null\"), nil\n\t}\n\treturn u.Raw, nil\n}\n\n", name)
	fmt.Fprintf(b, "// Decode%s reads one %s from its JSON. Only JSON that is not an object is an error:\n// an unknown %q, or a known one whose fields do not fit, is an Unknown%s.\n", name, name, tag, name)
	fmt.Fprintf(b, "func Decode%s(data []byte) (%s, error) {\n\tvar head struct {\n\t\tTag json.RawMessage `json:%q`\n\t}\n\tif err := json.Unmarshal(data, &head); err != nil {\n\t\treturn nil, err\n\t}\n\tvar tag string\n\t_ = json.Unmarshal(head.Tag, &tag)\n\tunknown := func(err error) (%s, error) {\n\t\treturn Unknown%s{Tag: tag, Raw: append(json.RawMessage(nil), data...), Err: err}, nil\n\t}\n\tswitch tag {\n", name, name, tag, name, name)
	keys := sortedKeys(mappingOf(d))
	for _, k := range keys {
		v := refName(mappingOf(d)[k])
		fmt.Fprintf(b, "\tcase %q:\n\t\tvar v %s\n\t\tif err := json.Unmarshal(data, &v); err != nil {\n\t\t\treturn unknown(err)\n\t\t}\n\t\treturn v, nil\n", k, v)
	}
	b.WriteString("\t}\n\treturn unknown(nil)\n}\n\n")
	return nil
}

func mappingOf(d *Def) map[string]string { return d.Discriminator.Mapping }

func (e *entryGen) writeEntryStruct(b *bytes.Buffer, name string, d *Def, tags map[string][2]string, unions []string) error {
	if d.Type != "object" {
		return fmt.Errorf("$defs.%s: not an object", name)
	}
	required := map[string]bool{}
	for _, r := range d.Required {
		required[r] = true
	}
	tag, isVariant := tags[name]
	doc := name + " is `" + name + "` in protocol/schema.json."
	if d.Description != "" {
		doc = name + ": " + d.Description
	}
	if isVariant {
		doc += fmt.Sprintf("\nIts %q is %q (written by MarshalJSON); it is a %s.", tag[0], tag[1], strings.Join(unions, " and a "))
	}
	comment(b, "", doc)
	fmt.Fprintf(b, "type %s struct {\n", name)
	var direct []string // fields holding one union value: decoded by hand
	for _, prop := range d.Properties.Keys {
		if isVariant && prop == tag[0] {
			continue
		}
		p := d.Properties.Map[prop]
		t, nilable, err := e.entryType(p, name, prop)
		if err != nil {
			return err
		}
		_, isNull := nullable(p)
		omit := ""
		switch {
		case !required[prop] && (isNull || t == "any"):
			// Absent, null and a value all occur in files (parentId is null at a root): kept apart.
			t, omit = "Nullable["+t+"]", ",omitzero"
		case !required[prop]:
			omit = ",omitzero"
			if !nilable {
				t = "*" + t
			}
		case isNull && !nilable:
			t = "*" + t
		}
		if p.Description != "" {
			comment(b, "\t", p.Description)
		}
		fmt.Fprintf(b, "\t%s %s `json:\"%s%s\"`\n", GoName(prop), t, prop, omit)
		if isUnion(e.s.Defs[t]) {
			direct = append(direct, prop)
		}
	}
	b.WriteString("}\n\n")
	if isVariant {
		fmt.Fprintf(b, "func (x %s) MarshalJSON() ([]byte, error) {\n\ttype plain %s\n\treturn withTag(%q, %q, plain(x))\n}\n\n", name, name, tag[0], tag[1])
	}
	if len(direct) > 0 {
		fmt.Fprintf(b, "func (x *%s) UnmarshalJSON(data []byte) error {\n\ttype plain %s\n\tvar p struct {\n\t\tplain\n", name, name)
		for _, prop := range direct {
			fmt.Fprintf(b, "\t\t%s json.RawMessage `json:%q`\n", GoName(prop), prop)
		}
		b.WriteString("\t}\n\tif err := json.Unmarshal(data, &p); err != nil {\n\t\treturn err\n\t}\n")
		fmt.Fprintf(b, "\t*x = %s(p.plain)\n", name)
		for _, prop := range direct {
			t, _, _ := e.entryType(d.Properties.Map[prop], name, prop)
			fmt.Fprintf(b, "\tif len(p.%s) > 0 && string(p.%s) != \"null\" {\n\t\tv, err := Decode%s(p.%s)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tx.%s = v\n\t}\n", GoName(prop), GoName(prop), t, GoName(prop), GoName(prop))
		}
		b.WriteString("\treturn nil\n}\n\n")
	}
	return nil
}

// enumConstants are Go constants for every enum string of the schema and
// every discriminator value (entry types, roles, block types, progress kinds).
func (g *gen) enumConstants(b *bytes.Buffer) error {
	consts := map[string]string{}
	from := map[string][]string{}
	add := func(prop, value, where string) error {
		name := GoName(prop) + constWord(value)
		if old, ok := consts[name]; ok && old != value {
			return fmt.Errorf("constant %s stands for %q and %q", name, old, value)
		}
		consts[name] = value
		from[name] = appendOnce(from[name], where)
		return nil
	}
	var walk func(owner, prop string, d *Def) error
	walk = func(owner, prop string, d *Def) error {
		if d == nil {
			return nil
		}
		where := owner + "." + prop
		if prop == "" {
			where = owner
		}
		if len(d.Enum) > 1 || (len(d.Enum) == 1 && prop != "" && !g.isTag(owner, prop)) {
			for _, v := range d.Enum {
				if s, ok := v.(string); ok {
					if err := add(prop, s, where); err != nil {
						return err
					}
				}
			}
		}
		for _, a := range d.AnyOf {
			if err := walk(owner, prop, a); err != nil {
				return err
			}
		}
		if isUnion(d) {
			for k := range mappingOf(d) {
				if err := add(d.Discriminator.PropertyName, k, where); err != nil {
					return err
				}
			}
		}
		return walk(owner, prop, d.Items)
	}
	for _, name := range sortedKeys(g.s.Defs) {
		d := g.s.Defs[name]
		if isUnion(d) {
			if err := walk(name, "", d); err != nil {
				return err
			}
		}
		for _, prop := range d.Properties.Keys {
			if err := walk(name, prop, d.Properties.Map[prop]); err != nil {
				return err
			}
		}
	}
	b.WriteString("// The enum strings of protocol/schema.json: each field's values (Format…, StopReason…)\n// and each tag of a union (Type… for entries and blocks, Role… for messages, Kind… for progress).\nconst (\n")
	for _, name := range sortedKeys(consts) {
		fmt.Fprintf(b, "\t%s = %q // %s\n", name, consts[name], strings.Join(from[name], ", "))
	}
	b.WriteString(")\n\n")
	return nil
}

func (g *gen) isTag(owner, prop string) bool {
	if g.tags == nil {
		g.tags = g.variantTags()
	}
	tag, ok := g.tags[owner]
	return ok && tag[0] == prop
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	if len(list) >= 3 {
		if list[len(list)-1] != "…" {
			list = append(list, "…")
		}
		return list
	}
	return append(list, s)
}

// constWord turns an enum value into the tail of a Go name: "thinking_level_change" -> ThinkingLevelChange.
func constWord(value string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(value, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		b.WriteString(GoName(part))
	}
	return b.String()
}
