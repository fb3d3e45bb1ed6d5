package sidecar

//go:generate go run ../internal/gen -schema ../../../protocol/schema.json -out .

import (
	"encoding/json"
	"fmt"
)

// Entry is one session entry as JSON values, the form Append sends:
// {"type": "message", "message": {...}}, {"type": "model_change", ...}, ...
// The sidecar assigns id, parentId and timestamp when they are absent.
// UserText, AssistantText and ToolResult build the common ones; EntryOf turns
// a typed entry (MessageEntry, CustomEntry, ...) into one.
//
// What comes back (GetEntries, BuildContext, didAppend) is typed:
// SessionEntry and AgentMessage values (entries_gen.go).
type Entry = map[string]any

// EntryOf turns a typed entry into the Entry Append takes.
func EntryOf(e SessionEntry) (Entry, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var entry Entry
	if err := json.Unmarshal(data, &entry); err != nil {
		return nil, fmt.Errorf("session-sidecar: %T is not an entry object: %w", e, err)
	}
	return entry, nil
}

func textContent(text string) []any {
	return []any{map[string]any{"type": TypeText, "text": text}}
}

// UserText is a message entry with a user's text.
func UserText(text string) Entry {
	return Entry{"type": TypeMessage, "message": map[string]any{"role": RoleUser, "content": textContent(text)}}
}

// AssistantText is a message entry with the assistant's text and tool calls
// (ID, Name and Arguments of each are sent).
func AssistantText(text string, calls ...ToolCall) Entry {
	content := []any{}
	if text != "" {
		content = textContent(text)
	}
	stop := StopReasonStop
	for _, call := range calls {
		args := call.Arguments
		if args == nil {
			args = map[string]any{}
		}
		content = append(content, map[string]any{"type": TypeToolCall, "id": call.ID, "name": call.Name, "arguments": args})
		stop = StopReasonToolUse
	}
	return Entry{"type": TypeMessage, "message": map[string]any{"role": RoleAssistant, "content": content, "stopReason": stop}}
}

// ToolResult is a message entry with the output of the tool call callID.
func ToolResult(callID, toolName, output string, isError bool) Entry {
	return Entry{"type": TypeMessage, "message": map[string]any{
		"role": RoleToolResult, "toolCallId": callID, "toolName": toolName,
		"content": textContent(output), "isError": isError,
	}}
}

// withTag is the JSON of v (an object) with key: value written first: the
// tag a variant of a union carries (MarshalJSON of the generated variants).
func withTag(key, value string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	k, _ := json.Marshal(key)
	t, _ := json.Marshal(value)
	out := append(append(append([]byte{'{'}, k...), ':'), t...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// Providers the sidecar knows (compaction and branch summaries; capabilities.providers lists what a sidecar has).
const (
	ProviderOffline   = "offline"   // no model: an extractive summary, the default when no key is set
	ProviderClient    = "client"    // your own model, through Options.Summarize
	ProviderAnthropic = "anthropic" // needs a key (settings or ANTHROPIC_API_KEY)
	ProviderOpenAI    = "openai"    // needs a key (settings or OPENAI_API_KEY)
)
