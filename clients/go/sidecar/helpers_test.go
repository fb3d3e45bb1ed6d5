package sidecar_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/session-sidecar/session-sidecar/clients/go/sidecar"
)

// sidecarCommand is the sidecar the tests run: $SESSION_SIDECAR_BIN, else session-sidecar on PATH.
func sidecarCommand(t testing.TB) string {
	t.Helper()
	command := os.Getenv("SESSION_SIDECAR_BIN")
	if command == "" {
		command = sidecar.DefaultCommand
	}
	path, err := exec.LookPath(command)
	if err != nil {
		t.Fatalf("no sidecar to test against (set SESSION_SIDECAR_BIN or put session-sidecar on PATH): %v", err)
	}
	return path
}

// testContext is a context that ends with the test (or after a minute).
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// start runs a real sidecar on a fresh sessions root; it is closed (and must close cleanly) at the end of the test.
func start(t testing.TB, opts sidecar.Options) (*sidecar.Client, string) {
	t.Helper()
	if opts.Command == "" {
		opts.Command = sidecarCommand(t)
	}
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	if testing.Verbose() && opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	client, err := sidecar.Start(testContext(t), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := client.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return client, opts.Root
}

// snapshot hashes every file below root.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(root, path)
		files[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// writeManySessions writes count small sessions below root, straight to disk.
func writeManySessions(t testing.TB, root string, count int) {
	t.Helper()
	folder := filepath.Join(root, "--many--")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range count {
		header, _ := json.Marshal(map[string]any{"type": "session", "version": 3, "id": fmt.Sprintf("m%d", i),
			"timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/many"})
		body, _ := json.Marshal(map[string]any{"type": "message", "id": "a1", "parentId": nil,
			"timestamp": "2025-01-01T00:00:01.000Z", "message": map[string]any{"role": "user", "content": fmt.Sprintf("question %d", i)}})
		name := filepath.Join(folder, fmt.Sprintf("2025-01-01T00-00-00-000Z_m%d.jsonl", i))
		if err := os.WriteFile(name, append(append(header, '\n'), append(body, '\n')...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
