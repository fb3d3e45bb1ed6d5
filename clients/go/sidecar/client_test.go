package sidecar_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

// conversation is a user request, a tool call, its result and the answer.
func conversation(question string) []sidecar.Entry {
	return []sidecar.Entry{
		sidecar.UserText(question),
		sidecar.AssistantText("Let me read it.", sidecar.ToolCall{ID: "call-1", Name: "read", Arguments: map[string]any{"path": "main.go"}}),
		sidecar.ToolResult("call-1", "read", "package main\n\nfunc main() {}\n", false),
		sidecar.AssistantText("main.go declares an empty main."),
	}
}

// roles names each message's role, through the typed messages.
func roles(messages sidecar.AgentMessageList) []string {
	var out []string
	for _, m := range messages {
		switch m := m.(type) {
		case sidecar.UserMessage:
			out = append(out, sidecar.RoleUser)
		case sidecar.AssistantMessage:
			out = append(out, sidecar.RoleAssistant)
		case sidecar.ToolResultMessage:
			out = append(out, sidecar.RoleToolResult)
		case sidecar.UnknownAgentMessage:
			out = append(out, "unknown:"+m.Tag)
		default:
			out = append(out, fmt.Sprintf("%T", m))
		}
	}
	return out
}

// labelOf is a label entry's label, typed.
func labelOf(e sidecar.SessionEntry) string {
	label, _ := e.(sidecar.LabelEntry).Label.Get()
	return label
}

// asMap is any value's JSON as a map, for looking at fields generically.
func asMap(t testing.TB, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCreateAppendBuildContextForkList(t *testing.T) {
	t.Parallel()
	c, root := start(t, sidecar.Options{})
	ctx := testContext(t)

	created, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/work/app", Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if created.SessionID == "" || !strings.HasPrefix(created.Path, filepath.Join(root, "--work-app--")+"/") {
		t.Fatalf("created %+v below %s", created, root)
	}
	if created.Header["cwd"] != "/work/app" || created.Header["type"] != "session" {
		t.Fatalf("header %v", created.Header)
	}
	if _, err := os.Stat(created.Path); !os.IsNotExist(err) {
		t.Fatalf("nothing is written before the first assistant message, but %s: %v", created.Path, err)
	}

	appended, err := c.Append(ctx, sidecar.AppendParams{SessionID: created.SessionID, Entries: conversation("What does main.go do?")})
	if err != nil {
		t.Fatal(err)
	}
	if len(appended.Entries) != 4 {
		t.Fatalf("appended %d entries", len(appended.Entries))
	}
	ids := make([]string, 4)
	for i, e := range appended.Entries {
		ids[i] = e.ID
		if i == 0 && e.ParentID == nil {
			t.Errorf("the first message should be below the session_info entry that holds the name")
		}
		if i > 0 && deref(e.ParentID) != ids[i-1] {
			t.Errorf("entry %d's parent is %v, want %s", i, e.ParentID, ids[i-1])
		}
	}
	if deref(appended.LeafID) != ids[3] || appended.ContextTokens <= 0 || appended.ShouldCompact {
		t.Fatalf("append result %+v", appended)
	}
	if _, err := os.Stat(created.Path); err != nil {
		t.Fatalf("the file exists after an assistant message: %v", err)
	}

	agent, err := c.BuildContext(ctx, sidecar.BuildContextParams{SessionID: created.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if got := roles(agent.Messages); !reflect.DeepEqual(got, []string{"user", "assistant", "toolResult", "assistant"}) {
		t.Fatalf("context roles %v", got)
	}
	if !reflect.DeepEqual(agent.EntryIDs, ids) || deref(agent.LeafID) != ids[3] || agent.EstimatedTokens <= 0 {
		t.Fatalf("context %+v", agent)
	}
	call, ok := agent.Messages[1].(sidecar.AssistantMessage).Content[1].(sidecar.ToolCall)
	if !ok || call.Name != "read" || call.Arguments["path"] != "main.go" {
		t.Fatalf("the tool call came back as %v", call)
	}
	empty, err := c.BuildContext(ctx, sidecar.BuildContextParams{SessionID: created.SessionID, LeafID: sidecar.Null[string](), Format: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Messages) != 0 || empty.LeafID != nil {
		t.Fatalf("leafId null gives the empty context, got %+v", empty)
	}
	upToCall, err := c.BuildContext(ctx, sidecar.BuildContextParams{SessionID: created.SessionID, LeafID: sidecar.Value(ids[1]), Format: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(upToCall.Messages) != 2 {
		t.Fatalf("context up to the tool call has %d messages", len(upToCall.Messages))
	}

	// Branch back to the tool call and answer it differently.
	branched, err := c.Branch(ctx, sidecar.BranchParams{SessionID: created.SessionID, EntryID: sidecar.Ptr(ids[1])})
	if err != nil || deref(branched.LeafID) != ids[1] {
		t.Fatalf("branch: %+v %v", branched, err)
	}
	alt, err := c.Append(ctx, sidecar.AppendParams{SessionID: created.SessionID, Entries: []sidecar.Entry{
		sidecar.ToolResult("call-1", "read", "no such file", true),
	}})
	if err != nil || deref(alt.Entries[0].ParentID) != ids[1] {
		t.Fatalf("append on the branch: %+v %v", alt, err)
	}
	tree, err := c.GetTree(ctx, sidecar.GetTreeParams{SessionID: created.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	children := map[string]int{}
	types := map[string]string{}
	for _, n := range tree.Nodes {
		children[deref(n.ParentID)]++
		types[n.ID] = n.Type
	}
	if types[deref(appended.Entries[0].ParentID)] != "session_info" {
		t.Errorf("the first message's parent is a %q entry, want session_info", types[deref(appended.Entries[0].ParentID)])
	}
	if children[ids[1]] != 2 || deref(tree.LeafID) != alt.Entries[0].ID {
		t.Fatalf("tree %+v: the tool call should have two children", tree)
	}

	label, err := c.SetLabel(ctx, sidecar.SetLabelParams{SessionID: created.SessionID, EntryID: ids[0], Label: sidecar.Ptr("question")})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := c.GetEntries(ctx, sidecar.GetEntriesParams{SessionID: created.SessionID, IDs: []string{ids[0], label.EntryID}})
	if err != nil || len(entries.Entries) != 2 || asMap(t, entries.Entries[1])["type"] != "label" || labelOf(entries.Entries[1]) != "question" {
		t.Fatalf("getEntries: %+v %v", entries, err)
	}

	// Fork the first answer into a session of its own.
	fork, err := c.Fork(ctx, sidecar.ForkParams{SessionID: created.SessionID, EntryID: ids[3]})
	if err != nil {
		t.Fatal(err)
	}
	if fork.SessionID == created.SessionID || !fork.Persisted {
		t.Fatalf("fork %+v", fork)
	}
	forked, err := c.BuildContext(ctx, sidecar.BuildContextParams{SessionID: fork.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if got := roles(forked.Messages); !reflect.DeepEqual(got, []string{"user", "assistant", "toolResult", "assistant"}) {
		t.Fatalf("the fork's context %v", got)
	}

	list, err := c.List(ctx, sidecar.ListParams{Cwd: "/work/app"})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]sidecar.SessionInfo{}
	for _, s := range list.Sessions {
		found[s.SessionID] = s
	}
	if len(list.Sessions) != 2 || list.NextCursor != nil {
		t.Fatalf("list: %+v", list)
	}
	original, ok := found[created.SessionID]
	if !ok || deref(original.Name) != "first" || original.FirstMessage != "What does main.go do?" || original.Cwd != "/work/app" {
		t.Fatalf("the original in the list: %+v", original)
	}
	if f, ok := found[fork.SessionID]; !ok || !strings.Contains(deref(f.ParentSession), created.SessionID) {
		t.Fatalf("the fork in the list: %+v (parent %q)", f, deref(f.ParentSession))
	}

	// Close, then open by path: the same tree comes back from disk.
	if err := c.CloseSession(ctx, sidecar.CloseParams{SessionID: created.SessionID}); err != nil {
		t.Fatal(err)
	}
	opened, err := c.Open(ctx, sidecar.OpenParams{Path: created.Path})
	if err != nil {
		t.Fatal(err)
	}
	if opened.SessionID != created.SessionID || opened.EntryCount != len(tree.Nodes)+1 || opened.ParseErrors != 0 || !opened.Persisted {
		t.Fatalf("reopened %+v (tree had %d nodes before the label)", opened, len(tree.Nodes))
	}
}

func TestErrorsAreTypedWithCodeAndData(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{})
	ctx := testContext(t)

	_, err := c.GetTree(ctx, sidecar.GetTreeParams{SessionID: "ghost"})
	var rpc *sidecar.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("want *sidecar.Error, got %T %v", err, err)
	}
	if rpc.Code != sidecar.CodeSessionNotFound || rpc.Kind() != "sessionNotFound" || rpc.Data["sessionId"] != "ghost" || rpc.Message == "" {
		t.Fatalf("error %+v", rpc)
	}
	if !errors.Is(err, sidecar.ErrSessionNotFound) || errors.Is(err, sidecar.ErrEntryNotFound) {
		t.Fatalf("errors.Is by code is wrong for %v", err)
	}

	_, err = c.Create(ctx, sidecar.CreateParams{Cwd: "/w", SessionID: "../escape"})
	if !errors.Is(err, sidecar.ErrInvalidSessionID) {
		t.Fatalf("want invalidSessionId, got %v", err)
	}

	// invalidParams names the field: send a misspelt one through the untyped Call.
	err = c.Call(ctx, "session/create", map[string]any{"cwd": "/w", "sesionId": "typo"}, nil)
	if !errors.As(err, &rpc) || rpc.Code != sidecar.CodeInvalidParams || rpc.Data["field"] != "sesionId" {
		t.Fatalf("want invalidParams naming sesionId, got %v (%+v)", err, rpc)
	}
	err = c.Call(ctx, "session/nope", nil, nil)
	if !errors.Is(err, sidecar.ErrMethodNotFound) {
		t.Fatalf("want methodNotFound, got %v", err)
	}

	created, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Append(ctx, sidecar.AppendParams{SessionID: created.SessionID, Entries: []sidecar.Entry{{"no": "type"}}})
	if !errors.As(err, &rpc) || rpc.Code != sidecar.CodeInvalidEntry || rpc.Data["index"] != float64(0) {
		t.Fatalf("want invalidEntry at index 0, got %v", err)
	}
	_, err = c.Branch(ctx, sidecar.BranchParams{SessionID: created.SessionID, EntryID: sidecar.Ptr("missing")})
	if !errors.Is(err, sidecar.ErrEntryNotFound) {
		t.Fatalf("want entryNotFound, got %v", err)
	}
	// The connection is still good after errors.
	if _, err := c.List(ctx, sidecar.ListParams{All: true}); err != nil {
		t.Fatal(err)
	}
}

func TestNullableAppendStartsANewRoot(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: conversation("one")})
	if err != nil {
		t.Fatal(err)
	}
	below, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: []sidecar.Entry{sidecar.UserText("two")},
		ParentID: sidecar.Value(first.Entries[0].ID)})
	if err != nil || deref(below.Entries[0].ParentID) != first.Entries[0].ID {
		t.Fatalf("parentId value: %+v %v", below, err)
	}
	root, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: []sidecar.Entry{sidecar.UserText("three")},
		ParentID: sidecar.Null[string]()})
	if err != nil || root.Entries[0].ParentID != nil {
		t.Fatalf("parentId null must start a new root: %+v %v", root, err)
	}
	leaf, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: []sidecar.Entry{sidecar.UserText("four")}})
	if err != nil || deref(leaf.Entries[0].ParentID) != root.Entries[0].ID {
		t.Fatalf("absent parentId appends below the leaf: %+v %v", leaf, err)
	}
}

func TestProgressArrivesInOrderBeforeTheResult(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeManySessions(t, root, 400)
	c, _ := start(t, sidecar.Options{Root: root})
	ctx := testContext(t)

	var mu sync.Mutex
	var values []sidecar.WorkDoneProgress
	result, err := c.List(ctx, sidecar.ListParams{All: true, Limit: sidecar.Ptr(500)}, sidecar.WithProgress(func(p sidecar.WorkDoneProgress) {
		time.Sleep(time.Millisecond) // a slow consumer must not lose or reorder anything
		mu.Lock()
		values = append(values, p)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]sidecar.WorkDoneProgress(nil), values...)
	mu.Unlock()
	if len(result.Sessions) != 400 {
		t.Fatalf("listed %d", len(result.Sessions))
	}
	if len(got) < 3 || got[0].Kind != "begin" || got[0].Title != "session/list" || got[len(got)-1].Kind != "end" {
		t.Fatalf("progress %+v", got)
	}
	last := -1
	for _, v := range got[1 : len(got)-1] {
		if v.Kind != "report" || v.Percentage == nil || *v.Percentage < last {
			t.Fatalf("reports out of order: %+v", got)
		}
		last = *v.Percentage
	}
	if !strings.Contains(got[len(got)-2].Message, "of 400 sessions") {
		t.Fatalf("last report %+v", got[len(got)-2])
	}
	// A call without progress gets none, and nothing arrives late.
	if _, err := c.List(ctx, sidecar.ListParams{All: true}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(values) != len(got) {
		t.Fatalf("progress arrived after the call returned: %d then %d", len(got), len(values))
	}
}

func TestCancelARunningListSendsCancelRequest(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeManySessions(t, root, 3000)
	c, _ := start(t, sidecar.Options{Root: root, CancelTimeout: 10 * time.Second}) // wait for the verdict
	ctx, cancel := context.WithCancel(testContext(t))
	var kinds []string
	var mu sync.Mutex
	_, err := c.List(ctx, sidecar.ListParams{All: true}, sidecar.WithProgress(func(p sidecar.WorkDoneProgress) {
		mu.Lock()
		kinds = append(kinds, p.Kind)
		mu.Unlock()
		if p.Kind == "begin" {
			cancel() // the scan is running: cancel from the progress callback
		}
	}))
	if !errors.Is(err, context.Canceled) || !errors.Is(err, sidecar.ErrRequestCancelled) {
		t.Fatalf("want requestCancelled matching context.Canceled, got %v", err)
	}
	var rpc *sidecar.Error
	if !errors.As(err, &rpc) || rpc.Code != -32800 || rpc.Kind() != "requestCancelled" {
		t.Fatalf("want the server's -32800, got %v", err)
	}
	mu.Lock()
	if kinds[0] != "begin" || kinds[len(kinds)-1] != "end" {
		t.Errorf("progress must still be closed before the answer: %v", kinds)
	}
	mu.Unlock()
	// -32800 means the scan stopped part way (a finished one answers with its result); the server is fine afterwards.
	full, err := c.List(testContext(t), sidecar.ListParams{All: true, Limit: sidecar.Ptr(1000)})
	if err != nil || len(full.Sessions) != 1000 || full.NextCursor == nil {
		t.Fatalf("after the cancel: %v", err)
	}
}

// longConversation is enough text for a compaction to have something to summarize.
func longConversation(turns int) []sidecar.Entry {
	var entries []sidecar.Entry
	for i := range turns {
		entries = append(entries,
			sidecar.UserText(fmt.Sprintf("Step %d: please edit file%d.go and make sure the tests pass. %s", i, i, strings.Repeat("context ", 60))),
			sidecar.AssistantText(fmt.Sprintf("Editing file%d.go.", i), sidecar.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "edit", Arguments: map[string]any{"path": fmt.Sprintf("file%d.go", i)}}),
			sidecar.ToolResult(fmt.Sprintf("c%d", i), "edit", strings.Repeat("ok ", 80), false),
			sidecar.AssistantText(fmt.Sprintf("Done with step %d.", i)),
		)
	}
	return entries
}

func TestSummarizeIsAnsweredByTheUsersFunction(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []sidecar.SummarizeParams
	c, _ := start(t, sidecar.Options{Summarize: func(ctx context.Context, req sidecar.SummarizeParams) (sidecar.SummarizeResult, error) {
		mu.Lock()
		asked = append(asked, req)
		mu.Unlock()
		return sidecar.SummarizeResult{Text: "## Goal\nSummary written by the Go test."}, nil
	}})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: longConversation(8)}); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	result, err := c.Compact(ctx, sidecar.CompactParams{SessionID: s.SessionID, Provider: "client", KeepRecentTokens: sidecar.Ptr(200)},
		sidecar.WithProgress(func(p sidecar.WorkDoneProgress) { kinds = append(kinds, p.Kind) }))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(result.Summary, "Summary written by the Go test.") || result.Provider != "client" || result.TokensAfter >= result.TokensBefore {
		t.Fatalf("compact result %+v", result)
	}
	if len(kinds) < 3 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" {
		t.Fatalf("compaction progress %v", kinds)
	}
	mu.Lock()
	if len(asked) == 0 || asked[0].Prompt == "" || asked[0].SystemPrompt == "" || asked[0].MaxTokens <= 0 {
		t.Fatalf("summarize requests %+v", asked)
	}
	if !strings.Contains(asked[0].Prompt, "file0.go") {
		t.Errorf("the prompt should hold the conversation: %.300s", asked[0].Prompt)
	}
	mu.Unlock()
	ctxAfter, err := c.BuildContext(ctx, sidecar.BuildContextParams{SessionID: s.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if summary, ok := ctxAfter.Messages[0].(sidecar.CompactionSummaryMessage); !ok || !strings.Contains(summary.Summary, "Go test") {
		t.Fatalf("the context starts with %v", ctxAfter.Messages[0])
	}
}

func TestSummarizeErrorsReachTheCaller(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{Summarize: func(ctx context.Context, req sidecar.SummarizeParams) (sidecar.SummarizeResult, error) {
		return sidecar.SummarizeResult{}, errors.New("model quota exhausted")
	}})
	noFunc, _ := start(t, sidecar.Options{})
	ctx := testContext(t)
	for name, client := range map[string]*sidecar.Client{"failing": c, "none": noFunc} {
		s, err := client.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: longConversation(6)}); err != nil {
			t.Fatal(err)
		}
		_, err = client.Compact(ctx, sidecar.CompactParams{SessionID: s.SessionID, Provider: "client", KeepRecentTokens: sidecar.Ptr(200)})
		var rpc *sidecar.Error
		if !errors.As(err, &rpc) || rpc.Code != sidecar.CodeProviderError {
			t.Fatalf("%s: want providerError, got %v", name, err)
		}
		if name == "failing" && !strings.Contains(rpc.Message, "model quota exhausted") {
			t.Errorf("the summarizer's error should be in the message: %q", rpc.Message)
		}
	}
}

func TestCancelACompactionWaitingForTheSummary(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 4)
	release := make(chan struct{})
	abandoned := make(chan struct{}, 4)
	c, root := start(t, sidecar.Options{CancelTimeout: 10 * time.Second, Summarize: func(ctx context.Context, req sidecar.SummarizeParams) (sidecar.SummarizeResult, error) {
		asked <- struct{}{}
		select {
		case <-release:
			return sidecar.SummarizeResult{Text: "late summary"}, nil
		case <-ctx.Done(): // the client closed, or the sidecar cancelled the request
			abandoned <- struct{}{}
			return sidecar.SummarizeResult{}, ctx.Err()
		}
	}})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: longConversation(6)}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	compactCtx, cancel := context.WithCancel(ctx)
	go func() {
		<-asked // the sidecar is waiting for our summary: cancel the compaction now
		cancel()
	}()
	_, err = c.Compact(compactCtx, sidecar.CompactParams{SessionID: s.SessionID, Provider: "client", KeepRecentTokens: sidecar.Ptr(200)})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, sidecar.ErrRequestCancelled) {
		t.Fatalf("want requestCancelled, got %v", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatalf("a cancelled compaction wrote: %v -> %v", before, after)
	}
	// The sidecar passes the cancel on ($/cancelRequest for its session/summarize): our function's ctx ends.
	select {
	case <-abandoned:
	case <-time.After(10 * time.Second):
		t.Fatal("the summarize function's context was not cancelled after the compaction was")
	}
	close(release)
	// A second compaction goes through.
	result, err := c.Compact(ctx, sidecar.CompactParams{SessionID: s.SessionID, Provider: "client", KeepRecentTokens: sidecar.Ptr(200)})
	if err != nil || !strings.Contains(result.Summary, "late summary") {
		t.Fatalf("compaction after the cancel: %+v %v", result, err)
	}
}

// A call queued behind a long one on the same session is dropped at once when cancelled.
func TestCancelAQueuedCallChangesNothing(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 4)
	release := make(chan struct{})
	c, root := start(t, sidecar.Options{CancelTimeout: 10 * time.Second, Summarize: func(ctx context.Context, req sidecar.SummarizeParams) (sidecar.SummarizeResult, error) {
		asked <- struct{}{}
		select {
		case <-release:
			return sidecar.SummarizeResult{Text: "summary"}, nil
		case <-ctx.Done():
			return sidecar.SummarizeResult{}, ctx.Err()
		}
	}})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: longConversation(6)}); err != nil {
		t.Fatal(err)
	}
	dead, kill := context.WithCancel(ctx)
	kill()
	if _, err := c.SetName(dead, sidecar.SetNameParams{SessionID: s.SessionID, Name: "never"}); !errors.Is(err, context.Canceled) || errors.Is(err, sidecar.ErrRequestCancelled) {
		t.Fatalf("a call on an ended context is not sent and returns ctx.Err(), got %v", err)
	}
	compacted := make(chan error, 1)
	go func() { // holds the session's turn until release
		_, err := c.Compact(ctx, sidecar.CompactParams{SessionID: s.SessionID, Provider: "client", KeepRecentTokens: sidecar.Ptr(200)})
		compacted <- err
	}()
	<-asked
	before := snapshot(t, root)
	nameCtx, cancel := context.WithCancel(ctx)
	named := make(chan error, 1)
	go func() {
		_, err := c.SetName(nameCtx, sidecar.SetNameParams{SessionID: s.SessionID, Name: "never"})
		named <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the request reach the sidecar's queue
	cancel()
	select {
	case err = <-named:
	case <-time.After(10 * time.Second):
		t.Fatal("the queued call did not answer its cancel while the session was busy")
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, sidecar.ErrRequestCancelled) {
		t.Fatalf("want requestCancelled, got %v", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatalf("a cancelled call changed files: %v -> %v", before, after)
	}
	close(release)
	if err := <-compacted; err != nil {
		t.Fatalf("the compaction holding the session: %v", err)
	}
	entries, err := c.GetEntries(ctx, sidecar.GetEntriesParams{SessionID: s.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries.Entries {
		if _, ok := e.(sidecar.SessionInfoEntry); ok {
			t.Fatalf("the cancelled setName was written: %v", e)
		}
	}
}

func TestAutoCompactNotification(t *testing.T) {
	t.Parallel()
	got := make(chan sidecar.DidCompactParams, 1)
	var progress []sidecar.ProgressParams // OnProgress and OnDidCompact run in order on one goroutine
	settings := &sidecar.Settings{
		Compaction: &sidecar.CompactionSettings{AutoCompact: true, ContextWindow: sidecar.Ptr(2000),
			ReserveTokens: sidecar.Ptr(500), KeepRecentTokens: sidecar.Ptr(300)},
		Providers: &sidecar.ProvidersSettings{Default: "offline"},
	}
	c, _ := start(t, sidecar.Options{
		Settings:     settings,
		OnProgress:   func(p sidecar.ProgressParams) { progress = append(progress, p) },
		OnDidCompact: func(p sidecar.DidCompactParams) { got <- p },
	})
	ctx := testContext(t)
	effective := c.InitializeResult().Settings
	if effective.Compaction == nil || !effective.Compaction.AutoCompact || deref(effective.Compaction.ContextWindow) != 2000 {
		t.Fatalf("the effective settings did not take ours: %+v", effective.Compaction)
	}
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	appended, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: longConversation(12)})
	if err != nil {
		t.Fatal(err)
	}
	if !appended.ShouldCompact {
		t.Fatalf("append should cross the line: %+v", appended)
	}
	select {
	case p := <-got:
		if p.SessionID != s.SessionID || p.Result.EntryID == "" || p.Result.Provider != "offline" {
			t.Fatalf("didCompact %+v", p)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no session/didCompact within 30s")
	}
	// The run reported on a token the sidecar asked us for, before didCompact.
	if len(progress) < 2 || progress[0].Value.Kind != "begin" || progress[len(progress)-1].Value.Kind != "end" {
		t.Fatalf("autoCompact progress %+v", progress)
	}
	for _, p := range progress {
		if p.Token != progress[0].Token {
			t.Fatalf("progress on several tokens: %+v", progress)
		}
	}

	// Without OnProgress the token is refused: no progress, didCompact still comes.
	var notes []string
	plain, _ := start(t, sidecar.Options{Settings: settings,
		OnNotification: func(method string, _ json.RawMessage) { notes = append(notes, method) },
		OnDidCompact:   func(p sidecar.DidCompactParams) { got <- p }})
	s2, err := plain.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Append(ctx, sidecar.AppendParams{SessionID: s2.SessionID, Entries: longConversation(12)}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		if p.SessionID != s2.SessionID {
			t.Fatalf("didCompact %+v", p)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no session/didCompact within 30s without OnProgress")
	}
	if len(notes) != 0 {
		t.Fatalf("a refused token still got notifications: %v", notes)
	}
}

func TestConcurrentCallsOnManySessions(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{})
	ctx := testContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.Create(ctx, sidecar.CreateParams{Cwd: fmt.Sprintf("/p%d", g)})
			if err != nil {
				errs <- err
				return
			}
			var leaf string
			for i := range 10 {
				r, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: []sidecar.Entry{sidecar.UserText(fmt.Sprint(i)), sidecar.AssistantText("ok")}})
				if err != nil {
					errs <- err
					return
				}
				if leaf != "" && deref(r.Entries[0].ParentID) != leaf {
					errs <- fmt.Errorf("session %d: append %d is not below the previous one", g, i)
					return
				}
				leaf = deref(r.LeafID)
			}
			built, err := c.BuildContext(ctx, sidecar.BuildContextParams{SessionID: s.SessionID})
			if err == nil && len(built.Messages) != 20 {
				err = fmt.Errorf("session %d has %d messages", g, len(built.Messages))
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := c.List(ctx, sidecar.ListParams{All: true})
	if err != nil || len(list.Sessions) != 8 {
		t.Fatalf("list after concurrent work: %v %v", list, err)
	}
}

// A sidecar that does not answer $/cancelRequest: the call gives up after CancelTimeout.
func TestCancelWithoutAnAnswerGivesUpAfterCancelTimeout(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{CancelTimeout: 300 * time.Millisecond})
	ctx := testContext(t)
	if err := syscall.Kill(c.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = syscall.Kill(c.Pid(), syscall.SIGCONT)
		}
	}()
	callCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := c.List(callCtx, sidecar.ListParams{})
	took := time.Since(began)
	var rpc *sidecar.Error
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &rpc) {
		t.Fatalf("want the context's error without a server answer, got %v", err)
	}
	if took < 450*time.Millisecond || took > 5*time.Second {
		t.Fatalf("gave up after %s; want the deadline (200ms) plus CancelTimeout (300ms)", took)
	}
	// Woken up, the sidecar answers the next call (and drops the late answer to the old one).
	if err := syscall.Kill(c.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	if _, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"}); err != nil {
		t.Fatalf("after SIGCONT: %v", err)
	}
}

func TestCloseShutsDownAndLaterCallsFail(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c, err := sidecar.Start(testContext(t), sidecar.Options{Command: sidecarCommand(t), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: conversation("persist me")}); err != nil {
		t.Fatal(err)
	}
	pid := c.Pid()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the sidecar (pid %d) is still there after Close: %v", pid, err)
	}
	// The documented contract after Close: ErrClosed from every call and Notify.
	if _, err := c.List(ctx, sidecar.ListParams{}); !errors.Is(err, sidecar.ErrClosed) {
		t.Fatalf("a call after Close: want ErrClosed, got %v", err)
	}
	if err := c.Call(ctx, "session/list", nil, nil); !errors.Is(err, sidecar.ErrClosed) {
		t.Fatalf("Call after Close: want ErrClosed, got %v", err)
	}
	if err := c.Notify("$/cancelRequest", map[string]any{"id": 1}); !errors.Is(err, sidecar.ErrClosed) {
		t.Fatalf("Notify after Close: want ErrClosed, got %T %v", err, err)
	}
	// shutdown flushed the session: a new sidecar reads it back.
	c2, _ := start(t, sidecar.Options{Root: root})
	opened, err := c2.Open(ctx, sidecar.OpenParams{SessionID: s.SessionID})
	if err != nil || opened.EntryCount != 4 {
		t.Fatalf("reopen after Close: %+v %v", opened, err)
	}
}

func TestCloseKillsAWedgedSidecar(t *testing.T) {
	t.Parallel()
	c, err := sidecar.Start(testContext(t), sidecar.Options{Command: sidecarCommand(t), Root: t.TempDir(), CloseTimeout: 700 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pid := c.Pid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err = c.Close()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Close of a wedged sidecar should say it killed it, got %v", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("Close took %s with a 700ms timeout", took)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the wedged sidecar (pid %d) survived Close: %v", pid, err)
	}
}

func TestACallFailsWhenTheSidecarDies(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeManySessions(t, root, 3000)
	c, err := sidecar.Start(testContext(t), sidecar.Options{Command: sidecarCommand(t), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errs := make(chan error, 1)
	go func() {
		_, err := c.List(testContext(t), sidecar.ListParams{All: true}, sidecar.WithProgress(func(p sidecar.WorkDoneProgress) {
			if p.Kind == "begin" {
				_ = syscall.Kill(c.Pid(), syscall.SIGKILL)
			}
		}))
		errs <- err
	}()
	select {
	case err := <-errs:
		var exit *sidecar.ExitError
		if !errors.Is(err, sidecar.ErrServerExited) || !errors.As(err, &exit) || exit.Signal != syscall.SIGKILL {
			t.Fatalf("want ErrServerExited naming SIGKILL, got %v", err)
		}
		if !strings.Contains(err.Error(), "SIGKILL") || strings.Contains(err.Error(), "exit code -1") {
			t.Fatalf("the message should name the signal: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the pending call never returned after the sidecar died")
	}
	if _, err := c.List(testContext(t), sidecar.ListParams{}); !errors.Is(err, sidecar.ErrServerExited) {
		t.Fatalf("later calls should fail with ErrServerExited, got %v", err)
	}
	// Close reports the signal too; after it, calls and Notify say ErrClosed.
	var exit *sidecar.ExitError
	if err := c.Close(); !errors.As(err, &exit) || exit.Signal != syscall.SIGKILL {
		t.Fatalf("Close of a killed sidecar: want an ExitError naming SIGKILL, got %v", err)
	}
	if _, err := c.List(testContext(t), sidecar.ListParams{}); !errors.Is(err, sidecar.ErrClosed) {
		t.Fatalf("a call after Close: want ErrClosed, got %v", err)
	}
	if err := c.Notify("$/cancelRequest", map[string]any{"id": 1}); !errors.Is(err, sidecar.ErrClosed) {
		t.Fatalf("Notify after Close: want ErrClosed, got %T %v", err, err)
	}
}

func TestStartReportsAMissingOrBrokenCommand(t *testing.T) {
	t.Parallel()
	if _, err := sidecar.Start(testContext(t), sidecar.Options{Command: "no-such-session-sidecar-here"}); err == nil {
		t.Fatal("Start with a missing command succeeded")
	}
	// A command that exits at once: initialize fails with the exit code and its stderr.
	script := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'cannot start: config is bad' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := sidecar.Start(testContext(t), sidecar.Options{Command: script})
	var exit *sidecar.ExitError
	if !errors.As(err, &exit) || exit.ExitCode != 3 || !strings.Contains(exit.Stderr, "config is bad") {
		t.Fatalf("want ExitError code 3 with stderr, got %v", err)
	}
}

func TestAttachToGivenStreams(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(sidecarCommand(t), "--root", t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var notes []string
	var mu sync.Mutex
	c, err := sidecar.Attach(testContext(t), stdout, stdin, sidecar.Options{ClientName: "attach-test",
		OnNotification: func(method string, params json.RawMessage) { mu.Lock(); notes = append(notes, method); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if c.Pid() != 0 {
		t.Errorf("Pid of an attached client: %d", c.Pid())
	}
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/attached"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.List(ctx, sidecar.ListParams{All: true})
	if err != nil || len(list.Sessions) != 0 {
		t.Fatalf("a session without an assistant message is not listed: %+v %v", list, err)
	}
	_ = s
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// shutdown + exit: the process ends with code 0.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the attached sidecar exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the attached sidecar did not exit after Close")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 0 {
		t.Errorf("unexpected notifications %v", notes)
	}
}

func TestArchiveDeleteRestoreContinueFlush(t *testing.T) {
	t.Parallel()
	c, root := start(t, sidecar.Options{})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/proj"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: conversation("keep me")}); err != nil {
		t.Fatal(err)
	}
	if flushed, err := c.Flush(ctx, sidecar.FlushParams{SessionID: s.SessionID}); err != nil || !flushed.Persisted {
		t.Fatalf("flush: %+v %v", flushed, err)
	}
	recent, err := c.ContinueRecent(ctx, sidecar.ContinueRecentParams{Cwd: "/proj"})
	if err != nil || recent == nil || recent.SessionID != s.SessionID || recent.EntryCount != 4 {
		t.Fatalf("continueRecent: %+v %v", recent, err)
	}
	none, err := c.ContinueRecent(ctx, sidecar.ContinueRecentParams{Cwd: "/nothing/here"})
	if err != nil || none != nil {
		t.Fatalf("continueRecent of an empty cwd is nil: %+v %v", none, err)
	}

	archived, err := c.Archive(ctx, sidecar.ArchiveParams{SessionID: s.SessionID})
	if err != nil || !archived.Archived || !strings.HasPrefix(archived.Path, filepath.Join(root, ".archive")) {
		t.Fatalf("archive: %+v %v", archived, err)
	}
	visible, err := c.List(ctx, sidecar.ListParams{All: true})
	if err != nil || len(visible.Sessions) != 0 {
		t.Fatalf("an archived session is hidden by default: %+v %v", visible, err)
	}
	all, err := c.List(ctx, sidecar.ListParams{All: true, IncludeArchived: true})
	if err != nil || len(all.Sessions) != 1 || !all.Sessions[0].Archived {
		t.Fatalf("includeArchived: %+v %v", all, err)
	}
	unarchived, err := c.Unarchive(ctx, sidecar.ArchiveParams{SessionID: s.SessionID})
	if err != nil || unarchived.Archived {
		t.Fatalf("unarchive: %+v %v", unarchived, err)
	}
	if _, err := os.Stat(unarchived.Path); err != nil {
		t.Fatalf("the unarchived file: %v", err)
	}

	deleted, err := c.Delete(ctx, sidecar.DeleteParams{SessionID: s.SessionID})
	if err != nil || deleted.TrashPath == nil || !strings.HasPrefix(*deleted.TrashPath, filepath.Join(root, ".trash")) {
		t.Fatalf("delete: %+v %v", deleted, err)
	}
	if _, err := c.Open(ctx, sidecar.OpenParams{SessionID: s.SessionID}); !errors.Is(err, sidecar.ErrSessionNotFound) {
		t.Fatalf("a deleted session is not found, got %v", err)
	}
	restored, err := c.Restore(ctx, sidecar.RestoreParams{SessionID: s.SessionID})
	if err != nil || restored.Path != unarchived.Path {
		t.Fatalf("restore: %+v %v (was %s)", restored, err, unarchived.Path)
	}
	if _, err := c.Restore(ctx, sidecar.RestoreParams{SessionID: s.SessionID}); !errors.Is(err, sidecar.ErrSessionNotFound) {
		t.Fatalf("restoring a session that is not in the trash: %v", err)
	}
	opened, err := c.Open(ctx, sidecar.OpenParams{SessionID: s.SessionID})
	if err != nil || opened.EntryCount != 4 {
		t.Fatalf("open after restore: %+v %v", opened, err)
	}
}
