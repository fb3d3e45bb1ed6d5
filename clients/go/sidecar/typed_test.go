package sidecar_test

// The typed entries, messages and content blocks: what they decode, what
// they write back, that unknown shapes stay readable, and that the compiler
// refuses a misspelt field or event (a module outside this one is built
// against the package, as a user's would be).

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

// Lines as pi writes them: an assistant message with a tool call, usage and
// stopReason; the tool's result; an entry type this client does not know;
// and a known type whose fields do not fit.
const piLines = `{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"look first"},{"type":"toolCall","id":"call-1","name":"read","arguments":{"path":"main.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"toolUse","timestamp":1735725601000}}
{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-01-01T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"call-1","toolName":"read","content":[{"type":"text","text":"package main"}],"isError":false,"timestamp":1735725602000}}
{"type":"future_entry","id":"f1","parentId":"r1","timestamp":"2025-01-01T10:00:03.000Z","payload":{"x":[1,2]}}
{"type":"label","id":"l1","parentId":"f1","timestamp":"2025-01-01T10:00:04.000Z","targetId":42}
{"type":"message","id":"u2","parentId":null,"timestamp":"2025-01-01T10:00:05.000Z","message":{"role":"user","content":"plain text"}}`

func TestTypedEntriesDecodeAndWriteBackWhatTheyRead(t *testing.T) {
	var entries []sidecar.SessionEntry
	for _, line := range strings.Split(piLines, "\n") {
		e, err := sidecar.DecodeSessionEntry([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		entries = append(entries, e)
		back, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, []byte(line), back) {
			t.Errorf("written back differently:\n read  %s\n wrote %s", line, back)
		}
	}
	assistant := entries[0].(sidecar.MessageEntry).Message.(sidecar.AssistantMessage)
	call := assistant.Content[1].(sidecar.ToolCall)
	if call.Name != "read" || call.Arguments["path"] != "main.go" || assistant.StopReason.Or("") != sidecar.StopReasonToolUse {
		t.Errorf("assistant: %+v", assistant)
	}
	if usage, ok := assistant.Usage.Get(); !ok || usage.Input.Or(0) != 10 || usage.TotalTokens.Or(0) != 15 {
		t.Errorf("usage: %+v", assistant.Usage)
	}
	if thinking := assistant.Content[0].(sidecar.ThinkingContent); thinking.Thinking != "look first" {
		t.Errorf("thinking: %+v", thinking)
	}
	result := entries[1].(sidecar.MessageEntry).Message.(sidecar.ToolResultMessage)
	if result.ToolCallID != call.ID || result.Content[0].(sidecar.TextContent).Text != "package main" {
		t.Errorf("tool result: %+v", result)
	}
	unknown, ok := entries[2].(sidecar.UnknownSessionEntry)
	if !ok || unknown.Tag != "future_entry" || unknown.Err != nil {
		t.Errorf("an unknown entry type: %#v", entries[2])
	}
	misfit, ok := entries[3].(sidecar.UnknownSessionEntry)
	if !ok || misfit.Tag != sidecar.TypeLabel || misfit.Err == nil {
		t.Errorf("a label whose targetId is a number: %#v", entries[3])
	}
	root := entries[4].(sidecar.MessageEntry)
	if !root.ParentID.IsNull() || *root.Message.(sidecar.UserMessage).Content.Text != "plain text" {
		t.Errorf("a root with string content: %+v", root)
	}
	if _, err := sidecar.DecodeSessionEntry([]byte(`[1]`)); err == nil {
		t.Error("a list is not an entry")
	}
}

func TestTypedEntriesAreAppendedAndReadBack(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	typed := sidecar.MessageEntry{Message: sidecar.AssistantMessage{
		Content:    sidecar.AssistantContentBlockList{sidecar.ToolCall{ID: "c1", Name: "bash", Arguments: map[string]any{"command": "ls"}}},
		StopReason: sidecar.Value(sidecar.StopReasonToolUse),
	}}
	entry, err := sidecar.EntryOf(typed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: []sidecar.Entry{sidecar.UserText("list files"), entry,
		sidecar.ToolResult("c1", "bash", "a.go", false)}}); err != nil {
		t.Fatal(err)
	}
	llm, err := c.BuildContext(ctx, sidecar.BuildContextParams{SessionID: s.SessionID, Format: sidecar.FormatLLM})
	if err != nil {
		t.Fatal(err)
	}
	if got := roles(llm.Messages); strings.Join(got, ",") != "user,assistant,toolResult" {
		t.Fatalf("roles %v", got)
	}
	if call := llm.Messages[1].(sidecar.AssistantMessage).Content[0].(sidecar.ToolCall); call.Arguments["command"] != "ls" {
		t.Fatalf("the tool call came back as %+v", call)
	}
}

// sameJSON compares two JSON texts as values.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// buildAgainstThePackage builds main.go in a module of its own that imports
// this package without an alias, and returns the compiler's output.
func buildAgainstThePackage(t *testing.T, body string) (string, error) {
	t.Helper()
	moduleDir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module typecheck\n\ngo 1.24\n\nrequire github.com/session-sidecar/session-sidecar/clients/go v0.0.0\n\n" +
		"replace github.com/session-sidecar/session-sidecar/clients/go => " + moduleDir + "\n"
	src := "package main\n\nimport \"github.com/session-sidecar/session-sidecar/clients/go/sidecar\"\n\nfunc main() {\n" + body + "\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestTheCompilerChecksTypedAccess(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to build a user's module: %v", err)
	}
	const good = `var m sidecar.AgentMessage = sidecar.ToolResultMessage{ToolCallID: "c1"}
	if r, ok := m.(sidecar.ToolResultMessage); ok { println(r.ToolCallID) }
	_ = sidecar.Options{OnDidAppend: func(p sidecar.DidAppendParams) { println(len(p.Entries)) }}
	var n string = sidecar.FormatLLM
	println(n)`
	if out, err := buildAgainstThePackage(t, good); err != nil {
		t.Fatalf("typed access does not compile (the harness is broken): %v\n%s", err, out)
	}
	for name, c := range map[string]struct{ body, want string }{
		"a misspelt field": {`r := sidecar.ToolResultMessage{}
	println(r.ToolCalId)`, "ToolCalId"},
		"a misspelt event": {`_ = sidecar.Options{OnDidApend: func(p sidecar.DidAppendParams) {}}`, "OnDidApend"},
		"a role read as a number": {`var m sidecar.ToolCall
	var n int = m.Name
	println(n)`, "cannot use m.Name"},
		"a message that is not one": {`var m sidecar.AgentMessage = sidecar.TextContent{Text: "hi"}
	_ = m`, "does not implement sidecar.AgentMessage"},
	} {
		out, err := buildAgainstThePackage(t, c.body)
		if err == nil {
			t.Errorf("%s compiled:\n%s", name, c.body)
		} else if !strings.Contains(out, c.want) {
			t.Errorf("%s: the compiler said %q, want it to name %q", name, out, c.want)
		}
	}
}

// The import path's last element is the package name (no alias needed), and
// the module sits at clients/go so its tags are clients/go/vX.Y.Z.
func TestModulePathAndTagScheme(t *testing.T) {
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(gomod), "module github.com/session-sidecar/session-sidecar/clients/go\n") {
		t.Fatalf("go.mod: %s", gomod)
	}
	if here, _ := filepath.Abs("."); filepath.Base(here) != "sidecar" {
		t.Fatalf("the package lives in %s, want a folder named like the package", here)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"clients/go/v", `"github.com/session-sidecar/session-sidecar/clients/go/sidecar"`, "SESSION_SIDECAR_BIN"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}
