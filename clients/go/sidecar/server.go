package sidecar

// A shared sidecar on a unix socket (`session-sidecar serve --socket PATH`):
// StartServer runs one and returns once it serves; DialSocket attaches a
// client to one, started here or elsewhere, waiting until it accepts.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ServeOptions configure StartServer.
type ServeOptions struct {
	// Socket is the unix socket path to serve on (required).
	Socket string
	// Command is the sidecar to run (default DefaultCommand on PATH, or
	// $SESSION_SIDECAR_BIN when set); Args go after `serve --socket PATH`,
	// e.g. {"--root", dir}.
	Command string
	Args    []string
	Env     []string  // nil: this process's environment
	Stderr  io.Writer // the server's log; nil: discarded (its tail is kept for errors)
}

// Server is a sidecar serving a unix socket, started by StartServer.
type Server struct {
	Socket  string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	stderr  *tail
}

// StartServer runs `session-sidecar serve --socket PATH` and returns once
// the sidecar says it is ready (it prints "ready" when it accepts clients).
// ctx bounds the start only; end the server with Close. When the process
// exits first, the error is an *ExitError with its stderr.
func StartServer(ctx context.Context, opts ServeOptions) (*Server, error) {
	if opts.Socket == "" {
		return nil, errors.New("session-sidecar: ServeOptions.Socket is empty")
	}
	command := opts.Command
	if command == "" {
		command = os.Getenv("SESSION_SIDECAR_BIN")
	}
	if command == "" {
		command = DefaultCommand
	}
	path, err := exec.LookPath(command)
	if err != nil {
		return nil, fmt.Errorf("session-sidecar: %w", err)
	}
	cmd := exec.Command(path, append([]string{"serve", "--socket", opts.Socket}, opts.Args...)...)
	cmd.Env = opts.Env
	stderr := &tail{max: 8 << 10}
	cmd.Stderr = stderr
	if opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, opts.Stderr)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("session-sidecar: start %s: %w", path, err)
	}
	s := &Server{Socket: opts.Socket, cmd: cmd, done: make(chan struct{}), stderr: stderr}
	ready := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(stdout)
		signalled := false
		for lines.Scan() {
			if !signalled && strings.Contains(lines.Text(), "ready") {
				close(ready)
				signalled = true
			}
		}
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.done:
		e := &ExitError{ExitCode: cmd.ProcessState.ExitCode(), Stderr: stderr.String()}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal()
		}
		return nil, e
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-s.done
		return nil, fmt.Errorf("session-sidecar: serve --socket %s not ready: %w", opts.Socket, ctx.Err())
	}
}

// Connect attaches a client to the server (DialSocket).
func (s *Server) Connect(ctx context.Context, opts Options) (*Client, error) {
	return DialSocket(ctx, s.Socket, opts)
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Close stops the server (SIGTERM: it closes its sessions and removes the
// socket), killing it when it has not exited within 5 seconds. It returns
// nil when the server exited cleanly.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return s.waitErr
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("session-sidecar: killed the server (pid %d), still running 5s after SIGTERM", s.cmd.Process.Pid)
	}
	return s.waitErr
}

// DialSocket attaches a client to a sidecar serving the unix socket path
// (`serve --socket PATH`, started by StartServer or by anyone), retrying
// while the socket does not accept yet, until ctx ends. The client is
// initialized like Attach's; Close shuts down this connection only.
func DialSocket(ctx context.Context, path string, opts Options) (*Client, error) {
	var dialer net.Dialer
	for {
		conn, err := dialer.DialContext(ctx, "unix", path)
		if err == nil {
			return Attach(ctx, conn, conn, opts)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("session-sidecar: no sidecar serves %s: %w (last: %v)", path, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
