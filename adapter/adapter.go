package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/jsonrpc"
)

// Adapter describes one adapter: the name and version it answers
// initialize with, and what it does with the daemon's messages. Every
// callback is optional.
type Adapter struct {
	// Name and Version must be those of the installed manifest
	// (adapter.json): the daemon compares them with its record and fails
	// an adapter that differs as tampered.
	Name    string
	Version string

	// OnInitialize is called once initialize has arrived, before it is
	// answered, so that an adapter can refuse to start (its state
	// directory cannot be opened, say): an error is sent as initialize's
	// answer and ends Run, which the daemon counts as a crash. c.Params
	// holds what the daemon sent. ctx lives as long as the connection: a
	// goroutine started here ends with it. c may not send yet: the
	// adapter speaks only once initialize is answered.
	OnInitialize func(ctx context.Context, c *Conn) error

	// OnInitialized is called when the daemon's initialized notification
	// arrives: the handshake is over and c may call the daemon, so that a
	// service adds its run-time devices or reads the Hub's state here
	// (OnInitialize may not: the adapter is silent until its answer). It
	// runs on a goroutine of its own, with the connection's ctx, and Run
	// waits for it before returning.
	OnInitialized func(ctx context.Context, c *Conn)

	// OnEvent receives the daemon's events (services only), one at a
	// time, in the order sent. It runs on a goroutine of its own, so that
	// a slow event delays neither pings nor the answers to the adapter's
	// own calls (OnEvent may call the daemon). While it runs, further
	// events wait in a queue of limits.event_queue; when that is full the
	// newest is dropped and counted in the next one's Dropped, as the
	// daemon does with its own queue.
	OnEvent func(ctx context.Context, c *Conn, e Event)

	// OnRead answers device.read for one of the adapter's own devices (id
	// without the adapter's prefix). OnWrite answers device.write; its
	// Reading may leave Value nil. Each request runs on a goroutine of
	// its own; ctx is cancelled when the daemon cancels the request (it
	// has then been answered with -32024) or the connection ends. An
	// error becomes the JSON-RPC error: an *Error as it is, anything
	// else as CodeFailed with its text. Nil answers -32601.
	OnRead  func(ctx context.Context, c *Conn, device string) (Reading, error)
	OnWrite func(ctx context.Context, c *Conn, device string, value json.RawMessage) (Reading, error)

	// Logger receives what the package has to say (frames it could not
	// read, answers it could not write). Nil means slog.Default(), which
	// writes to standard error: the adapter's log.
	Logger *slog.Logger
}

// Event is the params of the daemon's event notification: a HAL
// notification (Type is its name without "hal/", Data its params), Seq
// counting this adapter's events, and Dropped, when not 0, how many
// events the daemon dropped since the previous one delivered.
type Event struct {
	Seq     uint64          `json:"seq"`
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data"`
	Dropped uint64          `json:"dropped,omitempty"`
}

// Reading is a device's value, as an answer to device.read or
// device.write. A zero TS is left out, and the daemon stamps the value
// itself; otherwise it is sent in UTC with nanoseconds.
type Reading struct {
	Value any
	TS    time.Time
}

// Error is a JSON-RPC error. A callback returns one to choose the code,
// message and data of its answer; Conn.Call returns one (wrapped) when
// the daemon answers with an error, with Data as the raw JSON received.
type Error = jsonrpc.Error

// CodeFailed is the code of the answer to a callback that failed with an
// error that is not an *Error.
const CodeFailed = -32000

// ErrNoDaemon is Main's complaint when OXIDEPM_ADAPTER_PROTOCOLS is not
// set: the process was started by hand, not by a daemon.
var ErrNoDaemon = errors.New(adapterproto.EnvProtocols + " is not set: not started by a daemon (the gateway starts an installed adapter; see gateway adapter install)")

// ErrIncompatible is Run's error when the daemon offers no protocol that
// this package speaks; the daemon has been told with error -32022.
var ErrIncompatible = errors.New("no protocol in common with the daemon")

// Main runs the adapter over standard input and output and exits: 0 when
// the daemon shut it down or closed its input, 1 on an error, 2 when it
// was not started by a daemon. It is what func main calls.
func (a Adapter) Main() {
	os.Exit(a.main(context.Background(), os.LookupEnv, os.Stdin, os.Stdout, os.Stderr))
}

// main is Main with its world passed in, for tests.
func (a Adapter) main(ctx context.Context, lookup func(string) (string, bool), in io.Reader, out, errOut io.Writer) int {
	if _, ok := lookup(adapterproto.EnvProtocols); !ok {
		fmt.Fprintf(errOut, "%s: %v\n", a.Name, ErrNoDaemon)
		return 2
	}
	if err := a.Run(ctx, in, out); err != nil {
		fmt.Fprintf(errOut, "%s: %v\n", a.Name, err)
		return 1
	}
	return 0
}

// Run speaks the protocol over r (the daemon's frames) and w (the
// adapter's) until the daemon sends shutdown or closes r (nil), ctx ends
// (ctx.Err()), or something breaks: initialize refused, a write that
// fails, a read error. Before returning it cancels every request still in
// flight, waits for the callbacks it started (so that none runs after
// Run; their answers are still sent) and delivers the events already
// queued. A read already blocked on r when ctx ends is left behind; closing
// r ends it.
func (a Adapter) Run(ctx context.Context, r io.Reader, w io.Writer) error {
	if a.Logger == nil {
		a.Logger = slog.Default()
	}
	c := newConn(a, w)
	return c.run(ctx, r)
}
