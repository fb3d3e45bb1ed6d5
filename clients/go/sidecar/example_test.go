package sidecar_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

// exampleCommand lets the test suite point the examples at $SESSION_SIDECAR_BIN;
// in your code, leave Options.Command empty to run session-sidecar from PATH.
var exampleCommand = os.Getenv("SESSION_SIDECAR_BIN")

// Start a sidecar, record a conversation with a tool call, rebuild the
// context for the model, fork it and list the sessions.
func Example() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(root)

	client, err := sidecar.Start(ctx, sidecar.Options{Root: root, Command: exampleCommand})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	session, err := client.Create(ctx, sidecar.CreateParams{Cwd: "/work/app"})
	if err != nil {
		log.Fatal(err)
	}
	appended, err := client.Append(ctx, sidecar.AppendParams{SessionID: session.SessionID, Entries: []sidecar.Entry{
		sidecar.UserText("What does main.go do?"),
		sidecar.AssistantText("", sidecar.ToolCall{ID: "call-1", Name: "read", Arguments: map[string]any{"path": "main.go"}}),
		sidecar.ToolResult("call-1", "read", "package main\nfunc main() {}", false),
		sidecar.AssistantText("It declares an empty main."),
	}})
	if err != nil {
		log.Fatal(err)
	}

	llm, err := client.BuildContext(ctx, sidecar.BuildContextParams{SessionID: session.SessionID, Format: "llm"})
	if err != nil {
		log.Fatal(err)
	}
	for _, message := range llm.Messages {
		switch m := message.(type) {
		case sidecar.UserMessage:
			fmt.Println("user asks", m.Content.Blocks[0].(sidecar.TextContent).Text)
		case sidecar.AssistantMessage:
			for _, block := range m.Content {
				if call, ok := block.(sidecar.ToolCall); ok {
					fmt.Println("assistant calls", call.Name, call.Arguments["path"])
				}
			}
		case sidecar.ToolResultMessage:
			fmt.Println("tool result for", m.ToolCallID)
		}
	}

	// Fork at the tool call: a new session with the question and the call.
	fork, err := client.Fork(ctx, sidecar.ForkParams{SessionID: session.SessionID, EntryID: appended.Entries[1].ID})
	if err != nil {
		log.Fatal(err)
	}
	list, err := client.List(ctx, sidecar.ListParams{Cwd: "/work/app"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(list.Sessions), "sessions; fork persisted:", fork.Persisted)

	// Errors carry the protocol's code and data.
	_, err = client.Open(ctx, sidecar.OpenParams{SessionID: "no-such-session"})
	var rpcErr *sidecar.Error
	if errors.As(err, &rpcErr) {
		fmt.Println(rpcErr.Kind(), errors.Is(err, sidecar.ErrSessionNotFound))
	}
	// Output:
	// user asks What does main.go do?
	// assistant calls read main.go
	// tool result for call-1
	// 2 sessions; fork persisted: true
	// sessionNotFound true
}

// Compact a session with the agent's own model: the sidecar asks the client
// for the summary through session/summarize.
func Example_summarize() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(root)

	client, err := sidecar.Start(ctx, sidecar.Options{
		Root:    root,
		Command: exampleCommand,
		Summarize: func(ctx context.Context, req sidecar.SummarizeParams) (sidecar.SummarizeResult, error) {
			// Call your model with req.SystemPrompt and req.Prompt, at most req.MaxTokens.
			return sidecar.SummarizeResult{Text: "## Goal\nRefactor the parser."}, nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	session, _ := client.Create(ctx, sidecar.CreateParams{Cwd: "/work/app"})
	var entries []sidecar.Entry
	for i := range 6 {
		entries = append(entries,
			sidecar.UserText(fmt.Sprintf("Step %d: %s", i, strings.Repeat("refactor the parser ", 40))),
			sidecar.AssistantText(fmt.Sprintf("Step %d done.", i)))
	}
	if _, err := client.Append(ctx, sidecar.AppendParams{SessionID: session.SessionID, Entries: entries}); err != nil {
		log.Fatal(err)
	}

	var phases []string
	result, err := client.Compact(ctx,
		sidecar.CompactParams{SessionID: session.SessionID, Provider: "client", KeepRecentTokens: sidecar.Ptr(100)},
		sidecar.WithProgress(func(p sidecar.WorkDoneProgress) { phases = append(phases, p.Kind) }))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Contains(result.Summary, "Refactor the parser."), result.TokensAfter < result.TokensBefore)
	fmt.Println(phases[0], phases[len(phases)-1])
	// Output:
	// true true
	// begin end
}
