package sidecar

//go:generate go run ../internal/gen -schema ../../../protocol/schema.json -out .

// Entry is one session entry as pi writes it: {"type": "message", "message": {...}},
// {"type": "model_change", ...}, ... The sidecar assigns id, parentId and
// timestamp when they are absent. UserMessage, AssistantMessage and
// ToolResult build the common ones.
type Entry = map[string]any

// ToolCall is one tool call in an assistant message.
type ToolCall struct {
	ID        string
	Name      string
	Arguments map[string]any
}

func textContent(text string) []any {
	return []any{map[string]any{"type": "text", "text": text}}
}

// UserMessage is a message entry with a user's text.
func UserMessage(text string) Entry {
	return Entry{"type": "message", "message": map[string]any{"role": "user", "content": textContent(text)}}
}

// AssistantMessage is a message entry with the assistant's text and tool calls.
func AssistantMessage(text string, calls ...ToolCall) Entry {
	content := []any{}
	if text != "" {
		content = textContent(text)
	}
	for _, call := range calls {
		args := call.Arguments
		if args == nil {
			args = map[string]any{}
		}
		content = append(content, map[string]any{"type": "toolCall", "id": call.ID, "name": call.Name, "arguments": args})
	}
	return Entry{"type": "message", "message": map[string]any{"role": "assistant", "content": content}}
}

// ToolResult is a message entry with the output of the tool call callID.
func ToolResult(callID, toolName, output string, isError bool) Entry {
	return Entry{"type": "message", "message": map[string]any{
		"role": "toolResult", "toolCallId": callID, "toolName": toolName,
		"content": textContent(output), "isError": isError,
	}}
}
