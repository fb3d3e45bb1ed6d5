package sidecar

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/session-sidecar/session-sidecar/clients/go/internal/schemagen"
)

const schemaPath = "../../../protocol/schema.json"

func readSchema(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatalf("the client is checked against %s: %v", schemaPath, err)
	}
	return data
}

// The committed types and methods are exactly what the generator makes from
// today's schema: a protocol change the client has not picked up fails here.
func TestGeneratedCodeMatchesSchema(t *testing.T) {
	files, err := schemagen.Generate(readSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("want 3 generated files, got %d", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate` in clients/go/sidecar (or scripts/regen.sh)", name)
		}
	}
}

// jsonFields are the JSON names of a struct's fields.
func jsonFields(typ reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f
		}
	}
	return fields
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Independently of the generator: every method and every field of
// schema.json has its Go counterpart, found by reflection.
func TestEveryMethodAndFieldHasAGoCounterpart(t *testing.T) {
	s, err := schemagen.Parse(readSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	client := reflect.TypeFor[*Client]()
	covered := map[string]bool{}
	for _, m := range Methods {
		covered[m] = true
	}
	for method, ms := range s.Methods {
		if schemagen.Lifecycle[method] {
			continue // Start sends initialize, Close sends shutdown
		}
		if !covered[method] {
			t.Errorf("%s has no typed method (Methods)", method)
			continue
		}
		goName := schemagen.Renames[method]
		if goName == "" {
			goName = schemagen.MethodGoName(method)
		}
		fn, ok := client.MethodByName(goName)
		if !ok {
			t.Errorf("%s: no Client.%s", method, goName)
			continue
		}
		params := strings.TrimPrefix(ms.Params.Ref, "#/$defs/")
		if got := fn.Type.In(2).Name(); got != params {
			t.Errorf("Client.%s takes %s, the schema says %s", goName, got, params)
		}
	}
	for _, m := range Methods {
		if _, ok := s.Methods[m]; !ok {
			t.Errorf("Methods lists %s, which the schema does not have", m)
		}
	}

	types := map[string]reflect.Type{}
	for _, pair := range methodTypes {
		for _, v := range pair {
			if v != nil {
				types[reflect.TypeOf(v).Name()] = reflect.TypeOf(v)
			}
		}
	}
	for _, v := range []any{InitializeParams{}, InitializeResult{}, Capabilities{}, ServerInfo{}, ClientInfo{},
		ProgressParams{}, CancelParams{}, Settings{}, StoreSettings{}, CompactionSettings{}, ProvidersSettings{},
		ProviderEndpoint{}, WorkDoneProgressCreateParams{}, AppendedEntry{}, TreeNode{}, SessionInfo{}, SessionTokens{}, CompactDetails{}, Error{},
		SummarizeParams{}, SummarizeResult{}, DidCompactParams{}, OpenWarning{}, HistoryEntry{}, RetentionSettings{},
		FolderUsage{}, SessionUsage{}, PrunedSession{}, DidAppendParams{}, DidReloadParams{}, ExternalChange{}, CompactFallback{},
		NotCapturedFile{}, FileChange{}, SkippedFile{}, ImportedSession{}, ImportKindCount{}, DamagedLine{},
		ExportRedaction{}, RedactionKindCount{}, ConvertLoss{}, ClearToolResultsSettings{}, ClearedToolResults{},
		NativeCompaction{}, DidChangeLeafParams{}, DidSetLabelParams{}, DidSetNameParams{},
		DidCloseParams{}, ResyncParams{}, DidLoseControlParams{}, ForeignSession{}} {
		types[reflect.TypeOf(v).Name()] = reflect.TypeOf(v)
	}
	types["ErrorObject"] = reflect.TypeFor[Error]()
	for name, v := range entryTypes {
		types[name] = reflect.TypeOf(v)
	}
	tags := map[string]string{} // variant -> the tag its MarshalJSON writes
	for name, def := range s.Defs {
		if def.Discriminator == nil || len(def.AnyOf) == 0 {
			continue
		}
		union := types[name]
		if union == nil || union.Kind() != reflect.Pointer || union.Elem().Kind() != reflect.Interface {
			t.Errorf("$defs.%s: want a Go interface for the union, got %v", name, union)
			continue
		}
		for tag, ref := range def.Discriminator.Mapping {
			variant := strings.TrimPrefix(ref, "#/$defs/")
			tags[variant] = def.Discriminator.PropertyName
			if vt := types[variant]; vt == nil || !vt.Implements(union.Elem()) {
				t.Errorf("%s (%s %q) does not implement %s", variant, def.Discriminator.PropertyName, tag, name)
			}
		}
		if !reflect.TypeOf(entryTypes["Unknown"+name]).Implements(union.Elem()) {
			t.Errorf("no Unknown%s", name)
		}
	}
	progressFields := map[string]bool{}
	for name, def := range s.Defs {
		if def.Discriminator != nil && len(def.AnyOf) > 0 {
			continue // checked above
		}
		if k := def.Properties.Map["kind"]; k != nil && len(k.Enum) == 1 { // a variant of WorkDoneProgress
			for _, f := range def.Properties.Keys {
				progressFields[f] = true
			}
			continue
		}
		typ, ok := types[name]
		if !ok {
			t.Errorf("$defs.%s has no Go type", name)
			continue
		}
		fields := jsonFields(typ)
		for _, f := range def.Properties.Keys {
			if _, ok := fields[f]; !ok && schemagen.ClientManaged[f] == "" && tags[name] != f {
				t.Errorf("%s.%s is missing from Go's %s", name, f, typ.Name())
			}
		}
		for f := range fields {
			if _, ok := def.Properties.Map[f]; !ok {
				t.Errorf("Go's %s has %s, which $defs.%s does not", typ.Name(), f, name)
			}
		}
	}
	progress := jsonFields(reflect.TypeFor[WorkDoneProgress]())
	for f := range progressFields {
		if _, ok := progress[f]; !ok {
			t.Errorf("WorkDoneProgress lacks %s", f)
		}
	}
	if len(progress) != len(progressFields) {
		t.Errorf("WorkDoneProgress has %v, the variants %v", keys(progress), keys(progressFields))
	}
	// Every error code of the schema has a sentinel that knows its kind.
	for _, e := range s.Errors {
		if got := (&Error{Code: e.Code}).Kind(); got != e.Kind {
			t.Errorf("code %d: kind %q, schema %q", e.Code, got, e.Kind)
		}
	}
}

// Every server→client request is answered and every server→client
// notification has a typed route.
func TestServerToClientMessagesAreHandled(t *testing.T) {
	s, err := schemagen.Parse(readSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(s.ServerRequests), servedRequests; !reflect.DeepEqual(got, want) {
		t.Errorf("server requests: schema %v, client serves %v", got, want)
	}
	if got, want := keys(s.Notifications["serverToClient"]), typedNotifications; !reflect.DeepEqual(got, want) {
		t.Errorf("server notifications: schema %v, client types %v", got, want)
	}
	if ref := s.ServerRequests["session/summarize"].Params.Ref; ref != "#/$defs/SummarizeParams" {
		t.Errorf("session/summarize params are %s; SummarizeFunc takes SummarizeParams", ref)
	}
	if ref := s.Notifications["serverToClient"]["session/didCompact"].Ref; ref != "#/$defs/DidCompactParams" {
		t.Errorf("session/didCompact params are %s; OnDidCompact takes DidCompactParams", ref)
	}
}

// The three-state and default rules the generator applies, seen on the wire.
func TestParamsEncoding(t *testing.T) {
	cases := []struct {
		value any
		want  string
	}{
		{AppendParams{SessionID: "s", Entries: []Entry{}}, `{"sessionId":"s","entries":[]}`},
		{AppendParams{SessionID: "s", Entries: []Entry{}, ParentID: Null[string]()}, `{"sessionId":"s","entries":[],"parentId":null}`},
		{AppendParams{SessionID: "s", Entries: []Entry{}, ParentID: Value("e1")}, `{"sessionId":"s","entries":[],"parentId":"e1"}`},
		{BuildContextParams{SessionID: "s"}, `{"sessionId":"s"}`},
		{BuildContextParams{SessionID: "s", LeafID: Null[string](), Format: "llm"}, `{"sessionId":"s","leafId":null,"format":"llm"}`},
		{BranchParams{SessionID: "s"}, `{"sessionId":"s","entryId":null}`},
		{SetLabelParams{SessionID: "s", EntryID: "e", Label: Ptr("x")}, `{"sessionId":"s","entryId":"e","label":"x"}`},
		{GetEntriesParams{SessionID: "s"}, `{"sessionId":"s"}`},
		{GetEntriesParams{SessionID: "s", IDs: []string{}}, `{"sessionId":"s","ids":[]}`},
		{ListParams{Limit: Ptr(0)}, `{"limit":0}`},
		{CompactionSettings{Enabled: Ptr(false)}, `{"enabled":false}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.value)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%T: got %s, want %s", c.value, got, c.want)
		}
	}
	var p AppendParams
	if err := json.Unmarshal([]byte(`{"sessionId":"s","entries":[],"parentId":null}`), &p); err != nil || !p.ParentID.IsNull() {
		t.Errorf("parentId null decodes as %+v (%v)", p.ParentID, err)
	}
	var caps Capabilities
	if err := json.Unmarshal([]byte(`{"methods":[],"framings":[],"providers":[]}`), &caps); err != nil || !caps.WorkDoneProgress || !caps.CancelRequest {
		t.Errorf("omitted defaults must decode as true: %+v %v", caps, err)
	}
}
