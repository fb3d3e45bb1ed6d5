package sidecar_test

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

// sharedSidecar runs `serve --socket` on a fresh root; stopped (SIGTERM, exit 0) at the end of the test.
func sharedSidecar(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "live.sock")
	cmd := exec.Command(sidecarCommand(t), "serve", "--root", filepath.Join(dir, "sessions"), "--socket", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.Contains(lines.Text(), "ready") {
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("the shared sidecar did not exit cleanly: %v", err)
		}
	})
	return path
}

type events struct {
	mu   sync.Mutex
	seen []string
	ids  []string
	last string
}

func (e *events) add(method string, cursor string, ids ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = append(e.seen, method)
	e.ids = append(e.ids, ids...)
	e.last = cursor
}

func (e *events) wait(t *testing.T, count int) []string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		e.mu.Lock()
		if len(e.seen) >= count {
			seen := append([]string(nil), e.seen...)
			e.mu.Unlock()
			return seen
		}
		e.mu.Unlock()
	}
	t.Fatalf("fewer than %d notifications arrived", count)
	return nil
}

func attach(t *testing.T, path string, opts sidecar.Options) *sidecar.Client {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	client, err := sidecar.Attach(testContext(t), conn, conn, opts)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	return client
}

func TestLiveObserverFollowsTheControllerOverASocket(t *testing.T) {
	ctx := testContext(t)
	path := sharedSidecar(t)
	got := &events{}
	lost := make(chan string, 1)
	controller := attach(t, path, sidecar.Options{OnDidLoseControl: func(p sidecar.DidLoseControlParams) {
		lost <- p.SessionID
	}})
	defer controller.Close()
	observer := attach(t, path, sidecar.Options{
		OnDidAppend: func(p sidecar.DidAppendParams) {
			ids := []string{}
			for _, e := range p.Entries {
				id, _ := e.(sidecar.MessageEntry).ID.Get() // typed entries
				ids = append(ids, id)
			}
			got.add("session/didAppend", *p.Cursor, ids...)
		},
		OnDidChangeLeaf: func(leaf sidecar.DidChangeLeafParams) {
			got.add("session/didChangeLeaf", leaf.Cursor)
		},
	})
	defer observer.Close()

	session, err := controller.Create(ctx, sidecar.CreateParams{Cwd: "/work/app"})
	if err != nil {
		t.Fatal(err)
	}
	sid := session.SessionID
	if _, err := controller.Append(ctx, sidecar.AppendParams{SessionID: sid, Entries: []sidecar.Entry{
		sidecar.UserText("hello"), sidecar.AssistantText("hi")}}); err != nil {
		t.Fatal(err)
	}
	subscribed, err := observer.Subscribe(ctx, sidecar.SubscribeParams{SessionID: sid})
	if err != nil || subscribed.EntryCount != 2 || subscribed.Resync {
		t.Fatalf("Subscribe: %+v %v", subscribed, err)
	}
	appended, err := controller.Append(ctx, sidecar.AppendParams{SessionID: sid, Entries: []sidecar.Entry{sidecar.UserText("one")}})
	if err != nil {
		t.Fatal(err)
	}
	first := appended.Entries[0].ID
	if _, err := controller.Branch(ctx, sidecar.BranchParams{SessionID: sid, EntryID: &first}); err != nil {
		t.Fatal(err)
	}
	if seen := got.wait(t, 2); seen[0] != "session/didAppend" || seen[1] != "session/didChangeLeaf" {
		t.Fatalf("notifications %v", seen)
	}
	if got.ids[0] != first {
		t.Fatalf("didAppend carried %v, want %s", got.ids, first)
	}

	// An observer may not write: notController.
	_, err = observer.Append(ctx, sidecar.AppendParams{SessionID: sid, Entries: []sidecar.Entry{sidecar.UserText("no")}})
	var rpcErr *sidecar.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -33070 {
		t.Fatalf("an observer's append: %v", err)
	}
	// Taking control tells the former controller.
	taker := attach(t, path, sidecar.Options{})
	defer taker.Close()
	took, err := taker.TakeControl(ctx, sidecar.TakeControlParams{SessionID: sid})
	if err != nil || !took.TookOver {
		t.Fatalf("TakeControl: %+v %v", took, err)
	}
	select {
	case told := <-lost:
		if told != sid {
			t.Fatalf("didLoseControl for %s", told)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the former controller was not told")
	}
	if _, err := taker.Append(ctx, sidecar.AppendParams{SessionID: sid, Entries: []sidecar.Entry{sidecar.UserText("mine")}}); err != nil {
		t.Fatal(err)
	}
	if seen := got.wait(t, 3); seen[2] != "session/didAppend" {
		t.Fatalf("notifications %v", seen)
	}
	if _, err := controller.Append(ctx, sidecar.AppendParams{SessionID: sid, Entries: []sidecar.Entry{sidecar.UserText("late")}}); !errors.As(err, &rpcErr) || rpcErr.Code != -33070 {
		t.Fatalf("the former controller's append: %v", err)
	}
}

// TestTCPAttachSendsTheToken: Options.Token against `serve --listen`: the right
// token is served, a wrong or missing one refused with ErrUnauthorized.
func TestTCPAttachSendsTheToken(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	cmd := exec.Command(sidecarCommand(t), "serve", "--root", filepath.Join(dir, "sessions"),
		"--listen", "127.0.0.1:0", "--token-file", tokenFile)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr := ""
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		if i := strings.Index(line, "listening on "); i >= 0 {
			addr = strings.TrimSpace(line[i+len("listening on "):])
		}
		if strings.Contains(line, "ready") {
			break
		}
	}
	if addr == "" {
		t.Fatal("the sidecar did not say where it listens")
	}
	data, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(data))
	ctx := testContext(t)
	for _, offered := range []string{"", "a-wrong-token-of-enough-length"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sidecar.Attach(ctx, conn, conn, sidecar.Options{Token: offered})
		if !errors.Is(err, sidecar.ErrUnauthorized) || !strings.Contains(err.Error(), "token") {
			t.Fatalf("token %q: want ErrUnauthorized naming the token, got %v", offered, err)
		}
		conn.Close()
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	client, err := sidecar.Attach(ctx, conn, conn, sidecar.Options{Token: token})
	if err != nil {
		t.Fatalf("Attach with the token: %v", err)
	}
	defer client.Close()
	created, err := client.Create(ctx, sidecar.CreateParams{Cwd: "/work/tcp"})
	if err != nil || created.SessionID == "" {
		t.Fatalf("Create over TCP: %v", err)
	}
}
