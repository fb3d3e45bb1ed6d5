// Package sidecar is the Go client of session-sidecar: it spawns the sidecar
// (or attaches to its streams), speaks JSON-RPC 2.0 with LSP framing, and has
// one typed method per protocol method.
//
//	client, err := sidecar.Start(ctx, sidecar.Options{Root: dir})
//	if err != nil { ... }
//	defer client.Close()
//	s, err := client.Create(ctx, sidecar.CreateParams{Cwd: "/work/app"})
//	_, err = client.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID,
//		Entries: []sidecar.Entry{sidecar.UserMessage("hi"), sidecar.AssistantMessage("hello")}})
//	llm, err := client.BuildContext(ctx, sidecar.BuildContextParams{SessionID: s.SessionID, Format: "llm"})
//
// Progress: pass WithProgress to any call. Cancellation: cancel the call's
// context; the client sends $/cancelRequest. Errors from the sidecar are
// *Error values carrying the code and data; compare them with errors.Is and
// the Err* sentinels. Options.Summarize answers the sidecar's
// session/summarize requests with your own model.
//
// The params and result types are generated from protocol/schema.json (go
// generate); the tests fail when they drift apart.
package sidecar
