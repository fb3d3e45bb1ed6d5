package sidecar

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultCommand is the executable Start runs when Options.Command is empty,
// looked up on PATH.
const DefaultCommand = "session-sidecar"

// SummarizeFunc answers the sidecar's session/summarize request (compaction
// or a branch summary with provider "client"), so an agent can use its own
// model access. ctx is cancelled when the client closes or the sidecar
// sends $/cancelRequest for the request. Return an *Error to choose the
// error code the sidecar sees; any other error is sent as internalError.
type SummarizeFunc func(ctx context.Context, req SummarizeParams) (SummarizeResult, error)

// Options configure Start and Attach. The zero value runs "session-sidecar"
// from PATH with its own sessions root.
type Options struct {
	// Command is the program to run: the sidecar executable's path, or a name
	// looked up on PATH, or a launcher whose leading arguments go first in Args
	// (Command "uvx", Args {"session-sidecar"}). Default: DefaultCommand. Start only.
	Command string
	// Args are extra command-line arguments, e.g. {"--root", dir}. Start only.
	Args []string
	// Env is the child's environment (nil: this process's). Start only.
	Env []string
	// Dir is the child's working directory (empty: this process's). Start only.
	Dir string
	// Stderr receives the child's log (nil: discarded). The last 8 KiB are
	// kept either way and reported in ExitError. Start only.
	Stderr io.Writer

	// Root is the sessions root, sent as initialize's sessionRoot. Empty: the
	// sidecar's own (--root, else $SESSION_SIDECAR_HOME, else the user data dir).
	Root string
	// Settings override the sidecar's settings for this connection.
	Settings *Settings
	// ClientName and ClientVersion are sent as initialize's clientInfo.
	// Default name: "session-sidecar-go".
	ClientName, ClientVersion string
	// Token is sent as initialize's token: a sidecar serving TCP (serve
	// --listen) serves only clients that send the token of its --token-file.
	// Without it, or with another, Attach fails with ErrUnauthorized (-33071).
	Token string

	// Summarize answers session/summarize. Nil: the request is refused and
	// compaction with provider "client" fails with providerError.
	Summarize SummarizeFunc
	// OnDidCompact receives session/didCompact (compaction.autoCompact).
	OnDidCompact func(DidCompactParams)
	// OnDidAppend and OnDidReload receive session/didAppend and
	// session/didReload: another program wrote a session opened with Watch.
	OnDidAppend func(DidAppendParams)
	OnDidReload func(DidReloadParams)
	// One typed handler per event of a subscription (Subscribe); didAppend
	// and didCompact of a subscription come to OnDidAppend and OnDidCompact,
	// with a Cursor.
	OnDidChangeLeaf  func(DidChangeLeafParams)
	OnDidSetLabel    func(DidSetLabelParams)
	OnDidSetName     func(DidSetNameParams)
	OnDidClose       func(DidCloseParams)
	OnResync         func(ResyncParams)
	OnDidLoseControl func(DidLoseControlParams)
	// OnSessionEvent receives those same events that have no typed handler
	// set: one of *DidChangeLeafParams, *DidSetLabelParams,
	// *DidSetNameParams, *DidCloseParams, *ResyncParams or *DidLoseControlParams.
	OnSessionEvent func(SessionEvent)
	// OnProgress receives work-done progress the sidecar reports on tokens it
	// created itself (window/workDoneProgress/create, e.g. an autoCompact run),
	// not for a call of yours (those go to WithProgress). Nil: such tokens are
	// refused and the sidecar sends no progress for that work.
	OnProgress func(ProgressParams)
	// OnNotification receives every notification no typed handler took, by
	// method name: the escape hatch for methods newer than this client.
	//
	// OnDidCompact, OnProgress and OnNotification run one at a time, in the
	// order the sidecar sent them, on a goroutine of their own: they may call
	// the client.
	OnNotification func(method string, params json.RawMessage)

	// CancelTimeout is how long a call whose context ended waits, after
	// sending $/cancelRequest, for the sidecar's verdict (requestCancelled:
	// nothing changed; or the result: it took effect). Zero (the default):
	// the call returns at once with an error matching ctx.Err(), and whether
	// it took effect is not known.
	CancelTimeout time.Duration
	// CloseTimeout bounds Close: shutdown, exit and the process ending. A
	// sidecar still running after it is killed. Default 5s.
	CloseTimeout time.Duration
}

// Client is a connection to one sidecar. Its methods are safe for concurrent
// use; calls on one session run in the order they were sent, calls on
// different sessions run side by side.
type Client struct {
	opts Options

	wmu sync.Mutex
	w   io.Writer
	wc  io.Closer // nil when the writer is not ours to close
	rc  io.Closer // the read end of the child's stdout (Start only)
	r   *bufio.Reader

	cmd      *exec.Cmd
	procDone chan struct{}  // closed once the process has been waited for
	exitCode int            // valid after procDone
	signal   syscall.Signal // valid after procDone: the signal that ended the process, 0 if none
	stderr   *tail

	nextID   atomic.Int64
	mu       sync.Mutex
	pending  map[int64]chan response
	progress map[string]*queue[WorkDoneProgress]
	incoming map[string]context.CancelFunc
	closing  bool
	orphans  []*orphan // errors answered with id null, not yet matched to a call
	readErr  error     // why the read loop ended; non-nil once it has
	readDone chan struct{}
	notes    *queue[notification]

	base       context.Context // parent of the contexts given to Summarize
	cancelBase context.CancelFunc

	initResult InitializeResult
	closeOnce  sync.Once
	closeErr   error
}

type response struct {
	result json.RawMessage
	err    error
}

type notification struct {
	method string
	params json.RawMessage
}

// envelope is any JSON-RPC message.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Start spawns the sidecar, initializes it and returns a ready client. ctx
// bounds the start and initialize only, not the process's life: end it with
// Close.
func Start(ctx context.Context, opts Options) (*Client, error) {
	command := opts.Command
	if command == "" {
		command = DefaultCommand
	}
	path, err := exec.LookPath(command)
	if err != nil {
		return nil, fmt.Errorf("session-sidecar: %w", err)
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	cmd := exec.Command(path, opts.Args...)
	// Files, not io.Writers: no copying goroutine, so waiting for the process
	// never races with reading its last answers.
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	cmd.Env, cmd.Dir = opts.Env, opts.Dir
	stderr := &tail{max: 8 << 10}
	if opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, opts.Stderr)
	} else {
		cmd.Stderr = stderr
	}
	cmd.WaitDelay = time.Second // a grandchild holding stderr open must not hold up Wait
	err = cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, fmt.Errorf("session-sidecar: start %s: %w", path, err)
	}
	c := newClient(stdoutR, stdinW, stdinW, opts)
	c.cmd, c.stderr, c.rc = cmd, stderr, stdoutR
	go func() {
		err := cmd.Wait()
		c.exitCode = cmd.ProcessState.ExitCode()
		if err != nil && c.exitCode == 0 {
			c.exitCode = -1
		}
		if ws, ok := cmd.ProcessState.Sys().(interface {
			Signaled() bool
			Signal() syscall.Signal
		}); ok && ws.Signaled() {
			c.signal = ws.Signal()
		}
		close(c.procDone)
	}()
	go c.readLoop()
	if err := c.initialize(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Attach speaks to a sidecar over the given streams (its stdout as r, its
// stdin as w), initializes it and returns a ready client. Close sends
// shutdown and exit, then closes w if it is an io.Closer.
func Attach(ctx context.Context, r io.Reader, w io.Writer, opts Options) (*Client, error) {
	wc, _ := w.(io.Closer)
	c := newClient(r, w, wc, opts)
	go c.readLoop()
	if err := c.initialize(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func newClient(r io.Reader, w io.Writer, wc io.Closer, opts Options) *Client {
	if opts.CancelTimeout < 0 {
		opts.CancelTimeout = 0
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = 5 * time.Second
	}
	if opts.ClientName == "" {
		opts.ClientName = "session-sidecar-go"
	}
	c := &Client{
		opts:     opts,
		w:        w,
		wc:       wc,
		r:        bufio.NewReaderSize(r, 64<<10),
		procDone: make(chan struct{}),
		pending:  map[int64]chan response{},
		progress: map[string]*queue[WorkDoneProgress]{},
		incoming: map[string]context.CancelFunc{},
		readDone: make(chan struct{}),
	}
	c.base, c.cancelBase = context.WithCancel(context.Background())
	c.notes = startQueue(c.deliver)
	return c
}

func (c *Client) initialize(ctx context.Context) error {
	params := InitializeParams{
		ClientInfo:      &ClientInfo{Name: c.opts.ClientName, Version: c.opts.ClientVersion},
		ProtocolVersion: ProtocolVersion,
		Settings:        c.opts.Settings,
		SessionRoot:     c.opts.Root,
		Token:           c.opts.Token,
	}
	if err := c.Call(ctx, "initialize", params, &c.initResult); err != nil {
		// A sidecar of another major refuses our version and says which it speaks.
		var rpcErr *Error
		if errors.As(err, &rpcErr) && rpcErr.Data["field"] == "protocolVersion" {
			if supported, ok := rpcErr.Data["supported"].(string); ok {
				return &ProtocolVersionError{Server: supported, Client: ProtocolVersion}
			}
		}
		return err
	}
	if protocolMajor(c.initResult.ProtocolVersion) != protocolMajor(ProtocolVersion) {
		return &ProtocolVersionError{Server: c.initResult.ProtocolVersion, Client: ProtocolVersion}
	}
	return c.notify("initialized", struct{}{})
}

// InitializeResult is the sidecar's answer to initialize: its version,
// capabilities, sessions root and effective settings.
func (c *Client) InitializeResult() InitializeResult { return c.initResult }

// Pid is the sidecar's process id (0 for Attach).
func (c *Client) Pid() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// CallOption configures one call.
type CallOption func(*callOptions)

type callOptions struct {
	progress func(WorkDoneProgress)
}

// WithProgress asks the sidecar for work-done progress ($/progress) on this
// call and hands each value to fn: begin, reports, end, in the order sent,
// all before the call returns. fn runs on a goroutine of its own and may
// call the client.
func WithProgress(fn func(WorkDoneProgress)) CallOption {
	return func(o *callOptions) { o.progress = fn }
}

// Call sends any request and decodes its result into result (a pointer, or
// nil to drop it). The typed methods (Create, Append, ...) wrap it.
//
// No call is left waiting:
//   - A ctx that has already ended sends nothing and returns ctx.Err().
//   - When ctx ends before the answer, Call sends $/cancelRequest and returns
//     at once with an error matching ctx.Err() (errors.Is). With
//     Options.CancelTimeout set it waits that long for the sidecar's verdict
//     instead: requestCancelled comes back as an *Error that also matches
//     ctx.Err(), meaning nothing was changed; if the sidecar had already
//     finished, its result is returned as usual (the call took effect).
//   - Params whose JSON is over MaxMessageBytes are not sent: the error is an
//     *Error matching ErrPayloadTooLarge. Params encoding/json cannot encode
//     (NaN, a channel) return the encoder's error, wrapped.
//   - An error the sidecar answers with id null (a frame it could not read)
//     settles the call it was for: at once when one call is in flight, else
//     as soon as the other calls in flight at that moment are answered and
//     one is left (see README, "No call left waiting").
//   - After Close, calls return ErrClosed; when the sidecar has died, an
//     *ExitError matching ErrServerExited.
func (c *Client) Call(ctx context.Context, method string, params, result any, opts ...CallOption) error {
	if err := ctx.Err(); err != nil {
		return err // not sent at all
	}
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	id := c.nextID.Add(1)
	token := ""
	if o.progress != nil {
		token = "go-" + strconv.FormatInt(id, 10)
	}
	body, err := encodeRequest(id, method, params, token)
	if err != nil {
		return fmt.Errorf("session-sidecar: %s params: %w", method, err)
	}
	if err := checkSize(method, body); err != nil {
		return err
	}
	ch := make(chan response, 1)
	var progress *queue[WorkDoneProgress]
	c.mu.Lock()
	if c.closing && method != "shutdown" {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.readErr != nil {
		c.mu.Unlock()
		return c.exitError()
	}
	c.pending[id] = ch
	if token != "" {
		progress = startQueue(o.progress)
		c.progress[token] = progress
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		if token != "" {
			delete(c.progress, token)
		}
		c.mu.Unlock()
		if progress != nil {
			progress.closeAndWait() // every report is delivered before the call returns
		}
	}()

	if err := c.write(body); err != nil {
		select {
		case <-c.readDone: // the sidecar is gone: say so, with its exit code and stderr
			return c.exitError()
		case <-time.After(time.Second):
			return fmt.Errorf("session-sidecar: send %s: %w", method, err)
		}
	}
	var resp response
	select {
	case resp = <-ch:
	case <-ctx.Done():
		_ = c.notify("$/cancelRequest", CancelParams{ID: id})
		if c.opts.CancelTimeout == 0 {
			return fmt.Errorf("session-sidecar: %s: %w ($/cancelRequest sent; set Options.CancelTimeout to wait for whether it took effect)", method, ctx.Err())
		}
		timer := time.NewTimer(c.opts.CancelTimeout)
		defer timer.Stop()
		select {
		case resp = <-ch:
			var rpc *Error
			if errors.As(resp.err, &rpc) && rpc.Code == CodeRequestCancelled {
				rpc.cause = ctx.Err()
			}
		case <-timer.C:
			return fmt.Errorf("session-sidecar: %s: %w (no answer to $/cancelRequest within %s)", method, ctx.Err(), c.opts.CancelTimeout)
		}
	}
	if resp.err != nil {
		return resp.err
	}
	if result == nil {
		return nil
	}
	if len(resp.result) == 0 {
		resp.result = json.RawMessage("null")
	}
	if err := json.Unmarshal(resp.result, result); err != nil {
		return fmt.Errorf("session-sidecar: %s result: %w", method, err)
	}
	return nil
}

// Notify sends a notification. After Close it returns ErrClosed; params over
// MaxMessageBytes are not sent (an *Error matching ErrPayloadTooLarge).
func (c *Client) Notify(method string, params any) error {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return ErrClosed
	}
	return c.notify(method, params)
}

// MaxMessageBytes is the largest message body the sidecar reads (its
// framing's limit, 64 MiB); a larger one is refused by the client before sending.
const MaxMessageBytes = 64 << 20

// checkSize refuses a body the sidecar would skip as payloadTooLarge: sent,
// it would cost the transfer and come back with id null.
func checkSize(method string, body []byte) error {
	if len(body) <= MaxMessageBytes {
		return nil
	}
	return &Error{Code: CodePayloadTooLarge,
		Message: fmt.Sprintf("%s: the message is %d bytes, over the sidecar's limit of %d (64 MiB); nothing was sent", method, len(body), MaxMessageBytes),
		Data:    map[string]any{"kind": "payloadTooLarge", "size": len(body), "limit": MaxMessageBytes}}
}

// notify sends a notification, also while closing (exit, $/cancelRequest).
func (c *Client) notify(method string, params any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("session-sidecar: %s params: %w", method, err)
	}
	if err := checkSize(method, body); err != nil {
		return err
	}
	return c.write(body)
}

func encodeRequest(id int64, method string, params any, token string) ([]byte, error) {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, err
		}
		if string(raw) == "null" {
			raw = nil
		}
	}
	if token != "" {
		if raw == nil {
			raw = json.RawMessage("{}")
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) < 2 || raw[0] != '{' {
			return nil, fmt.Errorf("progress needs object params, got %.20s", raw)
		}
		tok, _ := json.Marshal(token)
		patched := append([]byte(`{"workDoneToken":`), tok...)
		if !bytes.Equal(raw, []byte("{}")) {
			patched = append(patched, ',')
		}
		raw = append(patched, raw[1:]...)
	}
	msg := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int64           `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", id, method, raw}
	return json.Marshal(msg)
}

// write sends one message in LSP framing.
func (c *Client) write(body []byte) error {
	frame := make([]byte, 0, len(body)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(body)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, body...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(frame)
	return err
}

// readFrame reads one LSP frame: headers, a blank line, Content-Length bytes.
func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line != "" {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if length < 0 {
				continue // blank lines between frames
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("session-sidecar: bad header line %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("session-sidecar: bad Content-Length %q", value)
			}
			length = n
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// readLoop is the only reader of the sidecar's output. It handles messages
// in order: progress is queued before the answer of its call is delivered.
func (c *Client) readLoop() {
	var err error
	for {
		var body []byte
		if body, err = readFrame(c.r); err != nil {
			break
		}
		var m envelope
		if json.Unmarshal(body, &m) != nil {
			continue // not JSON-RPC; the sidecar never sends this
		}
		switch {
		case m.Method != "" && m.ID != nil && string(m.ID) != "null":
			go c.serve(m.ID, m.Method, m.Params)
		case m.Method != "":
			c.notification(m.Method, m.Params)
		default:
			c.response(&m)
		}
	}
	if err == io.EOF {
		err = nil
	}
	c.finish(err)
}

func (c *Client) response(m *envelope) {
	var e *Error
	if m.Error != nil {
		e = &Error{Code: m.Error.Code, Message: m.Error.Message}
		if len(m.Error.Data) > 0 {
			_ = json.Unmarshal(m.Error.Data, &e.Data)
		}
	}
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		if e != nil && (len(m.ID) == 0 || string(m.ID) == "null") {
			c.orphanError(e)
		}
		return // not one of ours
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range c.orphans {
		delete(o.suspects, id) // answered by its id: not what a null-id error was for
	}
	c.settleOrphans()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	if !ok {
		return
	}
	if e != nil {
		ch <- response{err: e}
		return
	}
	ch <- response{result: m.Result}
}

// orphan is an error the sidecar answered with id null: it could not read
// the id of a frame (invalid UTF-8, a string JSON cannot hold, an oversized
// body whose head it could not parse). That frame was one of the requests in
// flight when the error came, the suspects. Our notifications cannot be it:
// encoding/json writes valid JSON and both calls and notifications are
// refused here when over the size limit.
type orphan struct {
	err      *Error
	suspects map[int64]bool
}

// orphanError records a null-id error and settles what it can.
func (c *Client) orphanError(e *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := &orphan{err: e, suspects: map[int64]bool{}}
	for id := range c.pending {
		o.suspects[id] = true
	}
	c.orphans = append(c.orphans, o)
	c.settleOrphans()
}

// settleOrphans matches null-id errors to calls where the match is certain
// (c.mu held). Every request gets exactly one answer, so a call answered by
// its id is no suspect; an error left with one suspect was that call's; and
// when the suspects of all unmatched errors number as many as the errors,
// each of them is one error's call (the errors are given in the order they
// came, to the calls in the order they were sent). A call that gave up
// (its context ended) stays a suspect, so it can absorb an error but never
// makes another call take one that was not its own.
func (c *Client) settleOrphans() {
	settle := func(id int64, e *Error) {
		for _, o := range c.orphans {
			delete(o.suspects, id)
		}
		if ch, ok := c.pending[id]; ok {
			delete(c.pending, id)
			ch <- response{err: e}
		}
	}
	for changed := true; changed; {
		changed = false
		kept := c.orphans[:0]
		var single *orphan
		for _, o := range c.orphans {
			switch {
			case len(o.suspects) == 0:
				changed = true // nothing left to give it to
			case len(o.suspects) == 1 && single == nil:
				single, changed = o, true
			default:
				kept = append(kept, o)
			}
		}
		c.orphans = kept
		if single != nil {
			for id := range single.suspects {
				settle(id, single.err)
			}
		}
	}
	union := map[int64]bool{}
	for _, o := range c.orphans {
		for id := range o.suspects {
			union[id] = true
		}
	}
	if len(c.orphans) == 0 || len(union) != len(c.orphans) {
		return
	}
	ids := make([]int64, 0, len(union))
	for id := range union {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	orphans := c.orphans
	c.orphans = nil
	for i, id := range ids {
		settle(id, orphans[i].err)
	}
}

func (c *Client) notification(method string, params json.RawMessage) {
	switch method {
	case "$/progress":
		var p struct {
			Token any              `json:"token"`
			Value WorkDoneProgress `json:"value"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		token, _ := p.Token.(string)
		c.mu.Lock()
		q := c.progress[token]
		c.mu.Unlock()
		if q != nil {
			q.push(p.Value)
			return
		}
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(params, &p) == nil {
			c.mu.Lock()
			cancel := c.incoming[string(p.ID)]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		return
	}
	c.notes.push(notification{method, params})
}

// deliver runs on the notification queue's goroutine.
func (c *Client) deliver(n notification) {
	if n.method == "$/progress" && c.opts.OnProgress != nil {
		var p ProgressParams
		if json.Unmarshal(n.params, &p) == nil {
			c.opts.OnProgress(p)
			return
		}
	}
	if n.method == "session/didCompact" && c.opts.OnDidCompact != nil {
		var p DidCompactParams
		if json.Unmarshal(n.params, &p) == nil {
			c.opts.OnDidCompact(p)
			return
		}
	}
	if n.method == "session/didAppend" && c.opts.OnDidAppend != nil {
		var p DidAppendParams
		if json.Unmarshal(n.params, &p) == nil {
			c.opts.OnDidAppend(p)
			return
		}
	}
	if n.method == "session/didReload" && c.opts.OnDidReload != nil {
		var p DidReloadParams
		if json.Unmarshal(n.params, &p) == nil {
			c.opts.OnDidReload(p)
			return
		}
	}
	if c.deliverTyped(n) {
		return
	}
	if c.opts.OnSessionEvent != nil && deliverSessionEvent(n, c.opts.OnSessionEvent) {
		return
	}
	if c.opts.OnNotification != nil {
		c.opts.OnNotification(n.method, n.params)
	}
}

// typedHandler decodes params into P and calls fn, when fn is set.
func typedHandler[P any](fn func(P), params json.RawMessage) bool {
	if fn == nil {
		return false
	}
	var p P
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	fn(p)
	return true
}

// deliverTyped hands a subscription event to its typed handler, if one is set.
func (c *Client) deliverTyped(n notification) bool {
	switch n.method {
	case "session/didChangeLeaf":
		return typedHandler(c.opts.OnDidChangeLeaf, n.params)
	case "session/didSetLabel":
		return typedHandler(c.opts.OnDidSetLabel, n.params)
	case "session/didSetName":
		return typedHandler(c.opts.OnDidSetName, n.params)
	case "session/didClose":
		return typedHandler(c.opts.OnDidClose, n.params)
	case "session/resync":
		return typedHandler(c.opts.OnResync, n.params)
	case "session/didLoseControl":
		return typedHandler(c.opts.OnDidLoseControl, n.params)
	}
	return false
}

// SessionEvent is a subscription's event other than didAppend and didCompact:
// *DidChangeLeafParams, *DidSetLabelParams, *DidSetNameParams,
// *DidCloseParams, *ResyncParams or *DidLoseControlParams.
type SessionEvent any

// sessionEvents decodes each such notification into its type.
var sessionEvents = map[string]func() SessionEvent{
	"session/didChangeLeaf":  func() SessionEvent { return &DidChangeLeafParams{} },
	"session/didSetLabel":    func() SessionEvent { return &DidSetLabelParams{} },
	"session/didSetName":     func() SessionEvent { return &DidSetNameParams{} },
	"session/didClose":       func() SessionEvent { return &DidCloseParams{} },
	"session/resync":         func() SessionEvent { return &ResyncParams{} },
	"session/didLoseControl": func() SessionEvent { return &DidLoseControlParams{} },
}

func deliverSessionEvent(n notification, fn func(SessionEvent)) bool {
	newEvent, ok := sessionEvents[n.method]
	if !ok {
		return false
	}
	event := newEvent()
	if json.Unmarshal(n.params, event) != nil {
		return false
	}
	fn(event)
	return true
}

// servedRequests are the server→client requests the client answers, and
// typedNotifications the server→client notifications it decodes itself
// (a test compares both with schema.json).
var (
	servedRequests     = []string{"session/summarize", "window/workDoneProgress/create"}
	typedNotifications = []string{"$/progress", "session/didAppend", "session/didChangeLeaf", "session/didClose",
		"session/didCompact", "session/didLoseControl", "session/didReload", "session/didSetLabel", "session/didSetName",
		"session/resync"}
)

// serve answers a request from the sidecar (session/summarize).
func (c *Client) serve(id json.RawMessage, method string, params json.RawMessage) {
	ctx, cancel := context.WithCancel(c.base)
	key := string(id)
	c.mu.Lock()
	c.incoming[key] = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.incoming, key)
		c.mu.Unlock()
		cancel()
	}()
	var result any
	var rpcErr *wireError
	switch {
	case method == "window/workDoneProgress/create":
		if c.opts.OnProgress == nil {
			rpcErr = &wireError{Code: CodeMethodNotFound, Message: "this client takes no server-initiated progress (sidecar.Options.OnProgress)"}
		} // else accepted: the result is null
	case method != "session/summarize":
		rpcErr = &wireError{Code: CodeMethodNotFound, Message: "the Go client does not serve " + method}
	case c.opts.Summarize == nil:
		rpcErr = &wireError{Code: CodeMethodNotFound, Message: "this client has no Summarize function (sidecar.Options.Summarize)"}
	default:
		var req SummarizeParams
		if err := json.Unmarshal(params, &req); err != nil {
			rpcErr = &wireError{Code: CodeInvalidParams, Message: "session/summarize params: " + err.Error()}
			break
		}
		res, err := c.opts.Summarize(ctx, req)
		if err != nil {
			rpcErr = asError(err)
		} else {
			result = res
		}
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		msg["error"] = rpcErr
	} else {
		msg["result"] = result
	}
	body, err := json.Marshal(msg)
	if err == nil {
		_ = c.write(body)
	}
}

// finish fails every call still waiting once the sidecar's output has ended.
func (c *Client) finish(err error) {
	c.mu.Lock()
	if err == nil {
		err = io.EOF
	}
	c.readErr = err
	pending := c.pending
	c.pending = map[int64]chan response{}
	c.orphans = nil
	c.mu.Unlock()
	exit := c.exitError()
	for _, ch := range pending {
		ch <- response{err: exit}
	}
	c.notes.close()
	close(c.readDone)
}

// exitError describes the end of the sidecar's output, with its exit code
// when the process has ended (waiting briefly for it).
func (c *Client) exitError() error {
	c.mu.Lock()
	readErr := c.readErr
	c.mu.Unlock()
	e := &ExitError{ExitCode: -1}
	if readErr != io.EOF {
		e.Err = readErr
	}
	if c.cmd != nil {
		select {
		case <-c.procDone:
			e.ExitCode, e.Signal = c.exitCode, c.signal
		case <-time.After(500 * time.Millisecond):
		}
		e.Stderr = c.stderr.String()
	}
	return e
}

// Close ends the connection: it sends shutdown (the sidecar finishes the
// calls in flight and closes its sessions) and exit, closes the sidecar's
// input and waits for the process, killing it when it has not exited within
// Options.CloseTimeout. Notification callbacks still running finish before
// it returns. Calls made after Close return ErrClosed. It returns nil when the
// sidecar exited with status 0.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

func (c *Client) close() error {
	deadline := time.Now().Add(c.opts.CloseTimeout)
	remaining := func() <-chan time.Time { return time.After(time.Until(deadline)) }
	c.mu.Lock()
	c.closing = true
	alive := c.readErr == nil
	c.mu.Unlock()

	var problem error
	if alive {
		done := make(chan error, 1)
		go func() {
			err := c.Call(context.Background(), "shutdown", nil, nil)
			if err == nil {
				err = c.notify("exit", nil)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, ErrServerExited) {
				problem = fmt.Errorf("session-sidecar: shutdown: %w", err)
			}
		case <-remaining():
			problem = fmt.Errorf("session-sidecar: no answer to shutdown within %s", c.opts.CloseTimeout)
		}
	}
	if c.wc != nil {
		c.wc.Close()
	}
	c.cancelBase() // summarize calls still running are abandoned

	if c.cmd == nil {
		select {
		case <-c.readDone:
			c.waitNotes(remaining())
		case <-remaining():
			if problem == nil {
				problem = fmt.Errorf("session-sidecar: the stream did not end within %s of exit", c.opts.CloseTimeout)
			}
		}
		return problem
	}
	select {
	case <-c.procDone:
	case <-remaining():
		_ = c.cmd.Process.Kill()
		<-c.procDone
		return fmt.Errorf("session-sidecar: killed the sidecar (pid %d), still running %s after Close", c.cmd.Process.Pid, c.opts.CloseTimeout)
	}
	select {
	case <-c.readDone:
	case <-time.After(time.Second): // a grandchild still holds the sidecar's stdout
		c.rc.Close()
		<-c.readDone
	}
	c.waitNotes(remaining())
	if problem != nil {
		return problem
	}
	if c.exitCode != 0 {
		return &ExitError{ExitCode: c.exitCode, Signal: c.signal, Stderr: c.stderr.String()}
	}
	return nil
}

// waitNotes lets the notification callbacks finish what the sidecar sent
// before it ended, so none runs after Close returns (bounded by Close's deadline).
func (c *Client) waitNotes(deadline <-chan time.Time) {
	select {
	case <-c.notes.done:
	case <-deadline:
	}
}

// queue hands values to fn one at a time, in order, on its own goroutine,
// without ever blocking the pusher.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func startQueue[T any](fn func(T)) *queue[T] {
	q := &queue[T]{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run(fn)
	return q
}

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.signal()
}

func (q *queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue[T]) closeAndWait() {
	q.close()
	<-q.done
}

func (q *queue[T]) run(fn func(T)) {
	defer close(q.done)
	for {
		q.mu.Lock()
		items, closed := q.items, q.closed
		q.items = nil
		q.mu.Unlock()
		for _, v := range items {
			fn(v)
		}
		if len(items) == 0 {
			if closed {
				return
			}
			<-q.wake
		}
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
