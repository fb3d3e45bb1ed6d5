package sidecar_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

func TestStartServerThenDialSocketFromTwoClients(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	socket := filepath.Join(dir, "s.sock")
	ctx := testContext(t)
	// A client dialing before the server is there waits for it.
	early := make(chan error, 1)
	go func() {
		c, err := sidecar.DialSocket(ctx, socket, sidecar.Options{})
		if err == nil {
			_, err = c.List(ctx, sidecar.ListParams{All: true})
			c.Close()
		}
		early <- err
	}()
	time.Sleep(300 * time.Millisecond)
	server, err := sidecar.StartServer(ctx, sidecar.ServeOptions{Socket: socket, Command: sidecarCommand(t),
		Args: []string{"--root", filepath.Join(dir, "sessions")}})
	if err != nil {
		t.Fatal(err)
	}
	writer, err := server.Connect(ctx, sidecar.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := sidecar.DialSocket(ctx, socket, sidecar.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := writer.Create(ctx, sidecar.CreateParams{Cwd: "/work/team"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Append(ctx, sidecar.AppendParams{SessionID: s.SessionID, Entries: conversation("shared?")}); err != nil {
		t.Fatal(err)
	}
	list, err := reader.List(ctx, sidecar.ListParams{All: true})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionID != s.SessionID {
		t.Fatalf("the other client's list: %+v %v", list, err)
	}
	if err := <-early; err != nil {
		t.Fatalf("the client that dialed before the server started: %v", err)
	}
	writer.Close()
	reader.Close()
	if err := server.Close(); err != nil {
		t.Fatalf("the server did not exit cleanly: %v", err)
	}
	if _, err := os.Stat(socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is still there after Close: %v", err)
	}
}

func TestStartServerReportsAServerThatExits(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'no socket for you' >&2\nexit 4\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := sidecar.StartServer(testContext(t), sidecar.ServeOptions{Socket: filepath.Join(t.TempDir(), "x.sock"), Command: script})
	var exit *sidecar.ExitError
	if !errors.As(err, &exit) || exit.ExitCode != 4 || exit.Stderr != "no socket for you" {
		t.Fatalf("want an ExitError with code 4 and stderr, got %v", err)
	}
	// Nobody serving: DialSocket gives up when its context ends.
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := sidecar.DialSocket(short, filepath.Join(t.TempDir(), "none.sock"), sidecar.Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
}
