package sidecar_test

// No call is ever left waiting: a payload over the frame limit, an error the
// sidecar answers with id null, a deadline, params the encoder refuses and
// strings that are not valid UTF-8 each settle the call, against a real sidecar.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

// within runs fn and fails the test unless it returns within limit.
func within(t *testing.T, limit time.Duration, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("%s: still waiting after %s", what, limit)
		return nil
	}
}

func TestARequestOverTheFrameLimitFailsBeforeSending(t *testing.T) {
	t.Parallel()
	c, root := start(t, sidecar.Options{})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	huge := strings.Repeat("x", 70<<20) // 70 MB, over the 64 MiB limit
	_, err = c.Append(context.Background(), sidecar.AppendParams{SessionID: s.SessionID, Entries: []sidecar.Entry{sidecar.UserText(huge)}})
	var rpc *sidecar.Error
	if !errors.Is(err, sidecar.ErrPayloadTooLarge) || !errors.As(err, &rpc) || rpc.Data["limit"] != sidecar.MaxMessageBytes {
		t.Fatalf("want payloadTooLarge naming the limit, got %v", err)
	}
	if err := c.Notify("custom/huge", map[string]string{"text": huge}); !errors.Is(err, sidecar.ErrPayloadTooLarge) {
		t.Fatalf("Notify over the limit: want payloadTooLarge, got %v", err)
	}
	if after := snapshot(t, root); len(after) != len(before) {
		t.Fatalf("something was written: %v -> %v", before, after)
	}
	// Just under the limit is sent (and answered: the sidecar's own check).
	// (A fresh context: encoding 70 MB twice takes a while under the race detector.)
	if _, err := c.Append(testContext(t), sidecar.AppendParams{SessionID: s.SessionID, Entries: conversation("still serving")}); err != nil {
		t.Fatalf("the client is unusable after refusing: %v", err)
	}
}

// corrupter stands between the client and the sidecar's stdin and replaces
// the body of every frame holding marker with 0xFF bytes: a frame whose id no
// reader can recover, so the sidecar answers -32700 with id null.
type corrupter struct {
	w      io.Writer
	marker []byte
}

func (c *corrupter) Write(frame []byte) (int, error) {
	if head, body, ok := bytes.Cut(frame, []byte("\r\n\r\n")); ok && bytes.Contains(body, c.marker) {
		bad := append(append(head, "\r\n\r\n"...), bytes.Repeat([]byte{0xff}, len(body))...)
		_, err := c.w.Write(bad)
		return len(frame), err
	}
	return c.w.Write(frame)
}

func (c *corrupter) Close() error { return c.w.(io.Closer).Close() }

// attachCorrupted runs a real sidecar whose input passes through a corrupter.
func attachCorrupted(t *testing.T, marker string, opts sidecar.Options) *sidecar.Client {
	t.Helper()
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
	c, err := sidecar.Attach(testContext(t), stdout, &corrupter{w: stdin, marker: []byte(marker)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return c
}

func TestAnErrorAnsweredWithIDNullSettlesTheOnlyCallInFlight(t *testing.T) {
	t.Parallel()
	c := attachCorrupted(t, "corrupt-me", sidecar.Options{})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	err = within(t, time.Second, "a call whose frame the sidecar could not read", func() error {
		_, err := c.SetName(context.Background(), sidecar.SetNameParams{SessionID: s.SessionID, Name: "corrupt-me"})
		return err
	})
	if !errors.Is(err, sidecar.ErrParseError) {
		t.Fatalf("want the sidecar's parseError, got %v", err)
	}
	if _, err := c.SetName(ctx, sidecar.SetNameParams{SessionID: s.SessionID, Name: "fine"}); err != nil {
		t.Fatalf("the next call: %v", err)
	}
}

// With another call in flight the null-id error cannot be told apart at once;
// it settles the unreadable call as soon as the other one is answered by id.
func TestAnErrorAnsweredWithIDNullWaitsForTheOtherCallsInFlight(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	c := attachCorrupted(t, "corrupt-me", sidecar.Options{Summarize: func(ctx context.Context, req sidecar.SummarizeParams) (sidecar.SummarizeResult, error) {
		asked <- struct{}{}
		<-release
		return sidecar.SummarizeResult{Text: "the summary"}, nil
	}})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: longConversation(6)}); err != nil {
		t.Fatal(err)
	}
	compacted := make(chan error, 1)
	go func() {
		_, err := c.Compact(ctx, sidecar.CompactParams{SessionID: s.SessionID, Provider: "client", KeepRecentTokens: sidecar.Ptr(200)})
		compacted <- err
	}()
	<-asked // the compaction is in flight, waiting for our summary
	named := make(chan error, 1)
	go func() {
		_, err := c.SetName(context.Background(), sidecar.SetNameParams{SessionID: s.SessionID, Name: "corrupt-me"})
		named <- err
	}()
	select {
	case err := <-named:
		t.Fatalf("settled before the other call was answered (it could have been the compaction's error): %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	close(release)
	if err := <-compacted; err != nil {
		t.Fatalf("the compaction: %v", err)
	}
	select {
	case err := <-named:
		if !errors.Is(err, sidecar.ErrParseError) {
			t.Fatalf("want parseError, got %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the unreadable call was left waiting after the other call was answered")
	}
}

func TestADeadlineSettlesTheCallAtOnce(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{})
	if err := syscall.Kill(c.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(c.Pid(), syscall.SIGCONT)
	callCtx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := c.List(callCtx, sidecar.ListParams{})
	if took := time.Since(began); took > 450*time.Millisecond {
		t.Fatalf("returned %s after a 200ms deadline", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
	if err := syscall.Kill(c.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(testContext(t), sidecar.CreateParams{Cwd: "/w"}); err != nil {
		t.Fatalf("after SIGCONT: %v", err)
	}
}

func TestParamsTheEncoderRefusesFailWithItsError(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	call := sidecar.ToolCall{ID: "c1", Name: "measure", Arguments: map[string]any{"ratio": math.NaN()}}
	_, err = c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: []sidecar.Entry{sidecar.AssistantText("", call)}})
	var unsupported *json.UnsupportedValueError
	if !errors.As(err, &unsupported) || errors.Is(err, sidecar.ErrClosed) || errors.Is(err, sidecar.ErrServerExited) {
		t.Fatalf("want encoding/json's UnsupportedValueError, got %T %v", err, err)
	}
	if err := c.Notify("custom/x", map[string]any{"c": make(chan int)}); !errors.As(err, new(*json.UnsupportedTypeError)) {
		t.Fatalf("Notify: want encoding/json's UnsupportedTypeError, got %T %v", err, err)
	}
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: conversation("still fine")}); err != nil {
		t.Fatalf("after the encoder's error: %v", err)
	}
}

// Go strings may hold any bytes: a string cut inside an emoji is sent as
// encoding/json writes it (the cut bytes become U+FFFD) and answered.
func TestAStringCutInsideAMultiByteCharacterIsAnswered(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	cut := "tool output 😀"[:len("tool output 😀")-2] // two bytes of a four-byte character
	err = within(t, time.Second, "append of a cut string", func() error {
		_, err := c.Append(context.Background(), sidecar.AppendParams{SessionID: s.SessionID, Entries: []sidecar.Entry{sidecar.UserText(cut)}})
		return err
	})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	got, err := c.GetEntries(ctx, sidecar.GetEntriesParams{SessionID: s.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := json.Marshal(got.Entries[len(got.Entries)-1])
	if !strings.Contains(string(text), "tool output \ufffd") {
		t.Fatalf("want the cut bytes stored as U+FFFD, got %s", text)
	}
}

// Raw params may carry what a Go string cannot: a lone surrogate escape, as
// JavaScript's JSON.stringify writes a cut emoji. The call is answered (the
// sidecar accepts it, or refuses it by id, or with id null, which settles
// this only call in flight) within a second, never left waiting.
func TestALoneSurrogateInRawParamsIsAnswered(t *testing.T) {
	t.Parallel()
	c, _ := start(t, sidecar.Options{})
	ctx := testContext(t)
	s, err := c.Create(ctx, sidecar.CreateParams{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(`{"sessionId":"` + s.SessionID + `","entries":[{"type":"message","message":{"role":"user","content":[{"type":"text","text":"cut \ud83d"}]}}]}`)
	err = within(t, time.Second, "append of a lone surrogate", func() error {
		return c.Call(context.Background(), "session/append", raw, nil)
	})
	var rpc *sidecar.Error
	if err != nil && !errors.As(err, &rpc) {
		t.Fatalf("want an answer from the sidecar (a result or its error), got %T %v", err, err)
	}
	t.Logf("answer to a lone surrogate: %v", err)
	if _, err := c.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: conversation("next")}); err != nil {
		t.Fatalf("the next call: %v", err)
	}
}
