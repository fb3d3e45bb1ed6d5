package sidecar

// Replays every transcript of protocol/vectors/ against a real sidecar, in
// LSP framing (the framing this client speaks), through this package's own
// frame reader and writer. Each request that succeeds in a vector is also
// checked against the Go types: its params and its result must decode into
// the generated structs without unknown fields and encode back to the same
// JSON.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

const vectorsDir = "../../../protocol/vectors"

type vectorStep struct {
	Comment string            `json:"comment"`
	Send    json.RawMessage   `json:"send"`
	SendRaw *string           `json:"sendRaw"`
	Framing string            `json:"framing"`
	Expect  []json.RawMessage `json:"expect"`
}

func TestVectors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectorsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no vectors in %s", vectorsDir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			t.Parallel()
			replayVector(t, file)
		})
	}
}

func vectorSidecar(t *testing.T) string {
	command := os.Getenv("SESSION_SIDECAR_BIN")
	if command == "" {
		command = DefaultCommand
	}
	path, err := exec.LookPath(command)
	if err != nil {
		t.Fatalf("no sidecar to test against (set SESSION_SIDECAR_BIN or put session-sidecar on PATH): %v", err)
	}
	return path
}

func replayVector(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var steps []vectorStep
	if err := json.Unmarshal(data, &steps); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	root := t.TempDir()
	cmd := exec.Command(vectorSidecar(t))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	// One goroutine reads frames with the client's reader; the replay takes them in order.
	frames := make(chan []byte, 64)
	go func() {
		defer close(frames)
		r := bufio.NewReader(stdout)
		for {
			body, err := readFrame(r)
			if err != nil {
				return
			}
			frames <- body
		}
	}()
	c := &Client{w: stdin}

	vars := map[string]any{"root": root}
	methods := map[string]string{} // request id -> method, for the type checks
	params := map[string]json.RawMessage{}
	exited := false
	for i, step := range steps {
		where := fmt.Sprintf("%s step %d (%s)", filepath.Base(file), i, step.Comment)
		if step.Framing != "" && step.Framing != "lsp" {
			continue
		}
		switch {
		case step.SendRaw != nil:
			if _, err := io.WriteString(stdin, *step.SendRaw); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
		case step.Send != nil:
			var msg any
			if err := json.Unmarshal(step.Send, &msg); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			msg = substitute(t, msg, vars)
			body, _ := json.Marshal(msg)
			if err := c.write(body); err != nil {
				t.Fatalf("%s: send: %v", where, err)
			}
			if m, ok := msg.(map[string]any); ok {
				if m["method"] == "exit" {
					exited = true
				}
				if id, ok := m["id"]; ok {
					key := fmt.Sprint(id)
					methods[key], _ = m["method"].(string)
					params[key], _ = json.Marshal(m["params"])
				}
			}
		}
		for j, raw := range step.Expect {
			var want any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var body []byte
			select {
			case b, ok := <-frames:
				if !ok {
					t.Fatalf("%s: the sidecar closed its output before message %d; stderr:\n%s", where, j, stderr.String())
				}
				body = b
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: no message %d within 20s", where, j)
			}
			got, err := decodeNumbers(body)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			capture(want, got, vars) // captures first: a later key of the same object may use one
			if err := match(want, got, vars, "$"); err != nil {
				t.Fatalf("%s: message %d: %v\n got: %s", where, j, err, body)
			}
			checkTypes(t, where, got, methods, params)
		}
	}
	if exited {
		done := make(chan error, 1)
		go func() {
			for range frames { // drain, so the pipe closes
			}
			done <- cmd.Wait()
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: the sidecar should exit with code 0 after exit: %v; stderr:\n%s", file, err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the sidecar did not exit after exit", file)
		}
	}
}

func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

var placeholder = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// substitute replaces ${name} in every string of v.
func substitute(t *testing.T, v any, vars map[string]any) any {
	switch v := v.(type) {
	case string:
		if m := placeholder.FindStringSubmatch(v); m != nil && m[0] == v {
			value, ok := vars[m[1]]
			if !ok {
				t.Fatalf("no value for %s", v)
			}
			return value
		}
		return placeholder.ReplaceAllStringFunc(v, func(s string) string {
			name := placeholder.FindStringSubmatch(s)[1]
			value, ok := vars[name]
			if !ok {
				t.Fatalf("no value for %s", s)
			}
			return fmt.Sprint(value)
		})
	case []any:
		for i := range v {
			v[i] = substitute(t, v[i], vars)
		}
	case map[string]any:
		for k := range v {
			v[k] = substitute(t, v[k], vars)
		}
	}
	return v
}

// capture records every <capture:name> of want from the value at the same place in got.
func capture(want, got any, vars map[string]any) {
	switch w := want.(type) {
	case string:
		if strings.HasPrefix(w, "<capture:") && strings.HasSuffix(w, ">") {
			vars[w[len("<capture:"):len(w)-1]] = plain(got)
		}
	case map[string]any:
		if g, ok := got.(map[string]any); ok {
			for k, v := range w {
				capture(v, g[k], vars)
			}
		}
	case []any:
		if g, ok := got.([]any); ok && len(g) == len(w) {
			for i := range w {
				capture(w[i], g[i], vars)
			}
		}
	}
}

var timestampPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$`)

// match compares a received value with an expected one, per protocol/vectors/README.md.
func match(want, got any, vars map[string]any, path string) error {
	if s, ok := want.(string); ok {
		switch {
		case s == "<any>":
			return nil
		case s == "<string>":
			if _, ok := got.(string); !ok {
				return fmt.Errorf("%s: want a string, got %#v", path, got)
			}
			return nil
		case s == "<integer>":
			if n, ok := got.(json.Number); !ok || strings.ContainsAny(n.String(), ".eE") {
				return fmt.Errorf("%s: want an integer, got %#v", path, got)
			}
			return nil
		case s == "<timestamp>":
			if g, ok := got.(string); !ok || !timestampPattern.MatchString(g) {
				return fmt.Errorf("%s: want a timestamp, got %#v", path, got)
			}
			return nil
		case strings.HasPrefix(s, "<capture:") && strings.HasSuffix(s, ">"):
			vars[s[len("<capture:"):len(s)-1]] = plain(got)
			return nil
		}
		want = substituteString(s, vars)
		if ws, ok := want.(string); ok && strings.Contains(ws, "<*>") {
			parts := strings.Split(ws, "<*>")
			for i := range parts {
				parts[i] = regexp.QuoteMeta(parts[i])
			}
			g, ok := got.(string)
			if !ok || !regexp.MustCompile("^"+strings.Join(parts, ".*")+"$").MatchString(g) {
				return fmt.Errorf("%s: want %q, got %#v", path, ws, got)
			}
			return nil
		}
		if _, isString := want.(string); !isString {
			return match(want, got, vars, path) // a captured non-string value
		}
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %#v", path, got)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return fmt.Errorf("%s: unexpected key %q", path, k)
			}
		}
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: missing key %q", path, k)
			}
			if err := match(w[k], gv, vars, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: want an array of %d, got %#v", path, len(w), got)
		}
		for i := range w {
			if err := match(w[i], g[i], vars, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case float64:
		n, ok := got.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want %v, got %#v", path, w, got)
		}
		wantInt := w == float64(int64(w)) && !strings.ContainsAny(fmt.Sprint(w), ".eE")
		gotInt := !strings.ContainsAny(n.String(), ".eE")
		f, _ := n.Float64()
		if f != w || wantInt != gotInt {
			return fmt.Errorf("%s: want %v, got %s", path, w, n)
		}
		return nil
	case json.Number:
		return match(mustFloat(w), got, vars, path)
	default: // string, bool, nil
		if !reflect.DeepEqual(want, got) {
			return fmt.Errorf("%s: want %#v, got %#v", path, want, got)
		}
		return nil
	}
}

func mustFloat(n json.Number) float64 { f, _ := n.Float64(); return f }

func substituteString(s string, vars map[string]any) any {
	if m := placeholder.FindStringSubmatch(s); m != nil && m[0] == s {
		if v, ok := vars[m[1]]; ok {
			return v
		}
	}
	return placeholder.ReplaceAllStringFunc(s, func(p string) string {
		if v, ok := vars[placeholder.FindStringSubmatch(p)[1]]; ok {
			return fmt.Sprint(v)
		}
		return p
	})
}

// plain turns json.Numbers into float64 (the form substitute pastes back).
func plain(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = plain(v[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = plain(x)
		}
		return out
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// goTypes are the Go params and result types of each method.
var goTypes = map[string][2]reflect.Type{
	"initialize": {reflect.TypeFor[InitializeParams](), reflect.TypeFor[InitializeResult]()},
}

func init() {
	for method, pair := range methodTypes {
		if pair[1] == nil {
			continue // a null result: nothing to check
		}
		goTypes[method] = [2]reflect.Type{reflect.TypeOf(pair[0]), reflect.TypeOf(pair[1])}
	}
}

// checkTypes: a successful answer's request params and result must survive a
// round trip through the Go types unchanged.
func checkTypes(t *testing.T, where string, got any, methods map[string]string, params map[string]json.RawMessage) {
	msg, ok := got.(map[string]any)
	if !ok {
		return
	}
	id, hasID := msg["id"]
	result, isResult := msg["result"]
	if !hasID || !isResult || id == nil {
		return
	}
	key := fmt.Sprint(id)
	method := methods[key]
	types, ok := goTypes[method]
	if !ok {
		return
	}
	if raw := params[key]; string(raw) != "null" {
		if err := roundTrip(raw, types[0]); err != nil {
			t.Errorf("%s: %s params through %s: %v", where, method, types[0], err)
		}
	}
	raw, _ := json.Marshal(result)
	if string(raw) == "null" {
		return
	}
	if err := roundTrip(raw, types[1]); err != nil {
		t.Errorf("%s: %s result through %s: %v", where, method, types[1], err)
	}
}

func roundTrip(raw json.RawMessage, typ reflect.Type) error {
	value := reflect.New(typ)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(value.Interface()); err != nil {
		return fmt.Errorf("decode %s: %w", raw, err)
	}
	again, err := json.Marshal(value.Interface())
	if err != nil {
		return err
	}
	a, _ := decodeNumbers(raw)
	b, _ := decodeNumbers(again)
	if err := match(plainNumbers(a), b, map[string]any{}, "$"); err != nil {
		return fmt.Errorf("%w\n sent/received: %s\n       from Go: %s", err, raw, again)
	}
	return nil
}

// plainNumbers makes every json.Number a float64, the expected-side form match takes.
func plainNumbers(v any) any { return plain(v) }
