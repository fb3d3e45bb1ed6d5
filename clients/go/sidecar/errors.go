package sidecar

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// Error is an error answer from the sidecar: its JSON-RPC code, message and
// data (data["kind"] names the error; invalidParams carries data["field"]).
//
// Compare with errors.Is against the Err* sentinels, which match on the code:
//
//	if errors.Is(err, sidecar.ErrSessionNotFound) { ... }
//	var rpcErr *sidecar.Error
//	if errors.As(err, &rpcErr) { log.Print(rpcErr.Code, rpcErr.Data["field"]) }
//
// A call whose context ended and that the server then answered with
// requestCancelled returns an *Error that also matches the context's error
// (errors.Is(err, context.Canceled)).
type Error struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`

	cause error // the context error of a cancelled call
}

func (e *Error) Error() string {
	if kind := e.Kind(); kind != "" {
		return fmt.Sprintf("session-sidecar: %s (%d): %s", kind, e.Code, e.Message)
	}
	return fmt.Sprintf("session-sidecar: error %d: %s", e.Code, e.Message)
}

// Kind is data["kind"], or the kind the schema gives the code.
func (e *Error) Kind() string {
	if kind, ok := e.Data["kind"].(string); ok {
		return kind
	}
	return errorKinds[e.Code]
}

// Is matches another *Error with the same code (the Err* sentinels).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Unwrap returns the context error of a cancelled call, else nil.
func (e *Error) Unwrap() error { return e.cause }

// ErrClosed is returned by every call and Notify on a client that is closed
// or closing (Close was called), whatever state the sidecar is in.
var ErrClosed = errors.New("session-sidecar: client closed")

// ErrServerExited is matched (errors.Is) by the error of every call the
// sidecar left unanswered because its output ended; see ExitError.
var ErrServerExited = errors.New("session-sidecar: the sidecar exited")

// ExitError says the sidecar's output ended before it answered a call.
type ExitError struct {
	// ExitCode is the process's exit code, or -1 when unknown (streams given
	// to Attach, still running) or when a signal ended it.
	ExitCode int
	// Signal is the signal that ended the process (syscall.SIGKILL, ...), 0 if none did.
	Signal syscall.Signal
	// Stderr is the tail of the process's stderr (up to 8 KiB), when Start captured it.
	Stderr string
	// Err is the read error that ended the stream (nil at a clean end of file).
	Err error
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("session-sidecar: the sidecar exited before answering (exit code %d)", e.ExitCode)
	if e.Signal != 0 {
		msg = fmt.Sprintf("session-sidecar: the sidecar was killed by signal %d (%s) before answering", int(e.Signal), signalName(e.Signal))
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Stderr != "" {
		msg += "; stderr: " + e.Stderr
	}
	return msg
}

// signalName is the conventional name of the common signals ("SIGKILL"), else Go's description.
func signalName(sig syscall.Signal) string {
	names := map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
	if name, ok := names[int(sig)]; ok {
		return name + ": " + sig.String()
	}
	return sig.String()
}

func (e *ExitError) Is(target error) bool { return target == ErrServerExited }
func (e *ExitError) Unwrap() error        { return e.Err }

// asError turns a handler's error into the error object of a response.
func asError(err error) *wireError {
	var rpc *Error
	if errors.As(err, &rpc) {
		data, _ := json.Marshal(rpc.Data)
		return &wireError{Code: rpc.Code, Message: rpc.Message, Data: data}
	}
	return &wireError{Code: CodeInternalError, Message: err.Error()}
}

// ProtocolVersionError is returned by Start and Attach when the sidecar
// speaks a protocol whose major version differs from this client's
// (PROTOCOL.md, Lifecycle: same major, compatible). The sidecar is closed.
type ProtocolVersionError struct {
	Server string // the sidecar's protocolVersion
	Client string // this client's, ProtocolVersion
}

func (e *ProtocolVersionError) Error() string {
	return fmt.Sprintf("session-sidecar speaks protocol %s but this client speaks %s: the major versions must match; "+
		"run a session-sidecar whose protocol is %s.x or use a client for protocol %s",
		e.Server, e.Client, protocolMajor(e.Client), e.Server)
}

// protocolMajor is the major part of a protocolVersion ("1.0" -> "1").
func protocolMajor(version string) string {
	major, _, _ := strings.Cut(version, ".")
	return major
}
