package sidecar_test

// One runnable example per method family; `go test -run Example` runs them
// against $SESSION_SIDECAR_BIN (else session-sidecar on PATH) and checks their output.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

// exampleSession starts a sidecar on a fresh root and records one tool-using turn.
func exampleSession(ctx context.Context, opts sidecar.Options) (*sidecar.Client, string, []string, func()) {
	root, _ := os.MkdirTemp("", "sessions")
	opts.Root, opts.Command = root, exampleCommand
	client, err := sidecar.Start(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
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
	var ids []string
	for _, e := range appended.Entries {
		ids = append(ids, e.ID)
	}
	return client, session.SessionID, ids, func() { client.Close(); os.RemoveAll(root) }
}

// GetEntries returns typed entries: a type switch reads each.
func ExampleClient_GetEntries() {
	ctx := context.Background()
	client, id, _, done := exampleSession(ctx, sidecar.Options{})
	defer done()
	got, err := client.GetEntries(ctx, sidecar.GetEntriesParams{SessionID: id})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range got.Entries {
		switch e := e.(type) {
		case sidecar.MessageEntry:
			switch m := e.Message.(type) {
			case sidecar.UserMessage:
				fmt.Println("user:", m.Content.Blocks[0].(sidecar.TextContent).Text)
			case sidecar.AssistantMessage:
				fmt.Println("assistant, stopReason", m.StopReason.Or("?"))
			case sidecar.ToolResultMessage:
				fmt.Println("tool result of", m.ToolName)
			}
		case sidecar.UnknownSessionEntry:
			fmt.Println("unknown entry", e.Tag)
		default:
			fmt.Printf("%T\n", e)
		}
	}
	// Output:
	// user: What does main.go do?
	// assistant, stopReason toolUse
	// tool result of read
	// assistant, stopReason stop
}

// Branch moves the leaf back; SetLabel and SetName annotate; GetTree shows the shape.
func ExampleClient_Branch() {
	ctx := context.Background()
	client, id, ids, done := exampleSession(ctx, sidecar.Options{})
	defer done()
	if _, err := client.SetLabel(ctx, sidecar.SetLabelParams{SessionID: id, EntryID: ids[0], Label: sidecar.Ptr("question")}); err != nil {
		log.Fatal(err)
	}
	if _, err := client.SetName(ctx, sidecar.SetNameParams{SessionID: id, Name: "main.go tour"}); err != nil {
		log.Fatal(err)
	}
	branched, err := client.Branch(ctx, sidecar.BranchParams{SessionID: id, EntryID: &ids[0]})
	if err != nil {
		log.Fatal(err)
	}
	// Appending now continues from the question: a second branch.
	if _, err := client.Append(ctx, sidecar.AppendParams{SessionID: id, Entries: []sidecar.Entry{sidecar.AssistantText("Let me guess instead.")}}); err != nil {
		log.Fatal(err)
	}
	llm, err := client.BuildContext(ctx, sidecar.BuildContextParams{SessionID: id, Format: sidecar.FormatLLM})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(deref(branched.LeafID) == ids[0], len(llm.Messages))
	// Output:
	// true 2
}

// WithProgress reports begin, reports and end before the call returns.
func ExampleWithProgress() {
	ctx := context.Background()
	client, _, _, done := exampleSession(ctx, sidecar.Options{})
	defer done()
	var kinds []string
	list, err := client.List(ctx, sidecar.ListParams{All: true}, sidecar.WithProgress(func(p sidecar.WorkDoneProgress) {
		kinds = append(kinds, p.Kind)
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(list.Sessions), kinds[0] == sidecar.KindBegin, kinds[len(kinds)-1] == sidecar.KindEnd)
	// Output:
	// 1 true true
}

// A deadline settles the call at once with the context's error.
func ExampleClient_Call_deadline() {
	ctx := context.Background()
	client, id, _, done := exampleSession(ctx, sidecar.Options{})
	defer done()
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	_, err := client.Compact(expired, sidecar.CompactParams{SessionID: id})
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Raw params go as given: any method, any JSON.
	var result map[string]any
	err = client.Call(ctx, "session/stats", map[string]any{}, &result)
	fmt.Println(err == nil, result["totalBytes"] != nil)
	// Output:
	// true
	// true true
}

// Archive moves a session out of the listing; Delete puts it in the trash, Restore brings it back.
func ExampleClient_Archive() {
	ctx := context.Background()
	client, id, _, done := exampleSession(ctx, sidecar.Options{})
	defer done()
	if _, err := client.Archive(ctx, sidecar.ArchiveParams{SessionID: id}); err != nil {
		log.Fatal(err)
	}
	live, _ := client.List(ctx, sidecar.ListParams{All: true})
	all, _ := client.List(ctx, sidecar.ListParams{All: true, IncludeArchived: true})
	fmt.Println(len(live.Sessions), len(all.Sessions))
	// Output:
	// 0 1
}

// A shared sidecar on a socket: one client writes, another subscribes.
func ExampleStartServer() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "shared")
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "agent.sock")
	server, err := sidecar.StartServer(ctx, sidecar.ServeOptions{Socket: socket, Command: exampleCommand,
		Args: []string{"--root", filepath.Join(dir, "sessions")}})
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()

	appended := make(chan string, 4)
	observer, err := sidecar.DialSocket(ctx, socket, sidecar.Options{
		OnDidAppend: func(p sidecar.DidAppendParams) {
			for _, e := range p.Entries {
				if m, ok := e.(sidecar.MessageEntry); ok {
					appended <- fmt.Sprintf("%T", m.Message)
				}
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer observer.Close()
	writer, err := server.Connect(ctx, sidecar.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer writer.Close()

	session, _ := writer.Create(ctx, sidecar.CreateParams{Cwd: "/work/app"})
	if _, err := observer.Subscribe(ctx, sidecar.SubscribeParams{SessionID: session.SessionID}); err != nil {
		log.Fatal(err)
	}
	if _, err := writer.Append(ctx, sidecar.AppendParams{SessionID: session.SessionID, Entries: []sidecar.Entry{
		sidecar.UserText("hi"), sidecar.AssistantText("hello")}}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-appended, <-appended)
	// Output:
	// sidecar.UserMessage sidecar.AssistantMessage
}

// DecodeSessionEntry reads a line of a pi session file; unknown types stay readable.
func ExampleDecodeSessionEntry() {
	for _, line := range []string{
		`{"type":"model_change","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","provider":"anthropic","modelId":"claude"}`,
		`{"type":"someone_elses_entry","id":"x1","parentId":"m1","timestamp":"2025-01-01T00:00:01.000Z"}`,
	} {
		e, err := sidecar.DecodeSessionEntry([]byte(line))
		if err != nil {
			log.Fatal(err)
		}
		switch e := e.(type) {
		case sidecar.ModelChangeEntry:
			fmt.Println("model:", e.Provider.Or(""), e.ModelID.Or(""))
		case sidecar.UnknownSessionEntry:
			fmt.Println("kept as read:", e.Tag, len(e.Raw) == len(line))
		}
	}
	// Output:
	// model: anthropic claude
	// kept as read: someone_elses_entry true
}
