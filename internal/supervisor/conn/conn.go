// Package conn is one run of an adapter's protocol connection (adapter
// protocol 1): the handshake, the daemon's requests with their deadlines,
// cancels and the late-reply rule, pings, events, the adapter's own
// requests, and the violations and strikes of section 6.
//
// A Conn speaks over the adapter's standard output and input and owns no
// process: when it decides that the adapter must be killed (a tampered
// reply, three missed pings, five strikes) it ends with an *EndError whose
// Kill is set, and the supervisor kills the process group. That keeps the
// protocol testable over pipes and the process handling testable without a
// protocol.
package conn

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/supervisor/eventq"
	"github.com/openhal/gateway/internal/supervisor/strikes"
	"github.com/openhal/gateway/jsonrpc"
)

// Timing holds the protocol's durations. Tests shorten them; the
// supervisor runs the protocol's own (DefaultTiming).
type Timing struct {
	Handshake    time.Duration // wait for the initialize reply
	PingInterval time.Duration // first ping after initialized, then between sends
	PingTimeout  time.Duration // a ping not answered by then is a miss
	PingMisses   int           // misses in a row that kill
	Request      time.Duration // default deadline of the daemon's other requests
}

// DefaultTiming returns the protocol's numbers: a 10 s handshake, a ping
// every 15 s answered within 5 s, 3 misses kill, requests 10 s.
func DefaultTiming() Timing {
	return Timing{
		Handshake:    10 * time.Second,
		PingInterval: 15 * time.Second,
		PingTimeout:  5 * time.Second,
		PingMisses:   3,
		Request:      10 * time.Second,
	}
}

// Handler serves what an adapter asks of the daemon.
type Handler interface {
	// Request answers one adapter request (devices.list, device.read,
	// ...). It runs on a goroutine of its own; ctx ends when the
	// connection does. An unknown method is answered with -32601 by the
	// handler itself.
	Request(ctx context.Context, method string, params json.RawMessage) (any, *jsonrpc.Error)
	// Notify takes one adapter notification (value.publish). It runs on
	// the reader, in order, and must not block.
	Notify(method string, params json.RawMessage)
}

// Config is what one run needs.
type Config struct {
	// Record is the name and version installed: the reply must match.
	Record adapterproto.Info
	Kind   string // adapterproto.KindService or KindTool
	Grant  adapterproto.Grant
	State  string // the adapter's state directory (paths.state)
	Host   adapterproto.Host
	Limits adapterproto.Limits
	// Settings are the adapter's settings (initialize's "settings"); nil
	// for none.
	Settings json.RawMessage
	Timing   Timing
	Clock    clock.Clock
	// Handler serves the adapter's requests; nil answers every one with
	// -32601.
	Handler Handler
	// Events is the run's event queue (services); nil for a tool.
	Events *eventq.Queue
	// Strikes counts this run's violations after the handshake.
	Strikes *strikes.Strikes
	Log     *slog.Logger
}

// Conn is one adapter run's connection.
type Conn struct {
	cfg   Config
	clk   clock.Clock
	log   *slog.Logger
	stdin io.WriteCloser
	lines *jsonrpc.LineReader

	out *writer

	// ctx ends with the connection: handlers of adapter requests see it.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	nextID    uint64
	pending   map[uint64]*call
	cancelled map[uint64]struct{}
	cancelLog []uint64 // cancelled ids in order, to bound the map
	slots     fifoSem
	seen      idWindow // the adapter's recent request ids

	handshake chan firstFrame // the first frame, during the handshake
	hsDecided chan struct{}   // closed once the handshake is judged
	pumpDone  chan struct{}   // closed when the event pump returns
	ready     atomic.Bool     // the handshake is done
	served    chan struct{}   // a token per adapter request being served

	done    chan struct{}
	endOnce sync.Once
	endErr  error

	stats counters
}

// counters are what status and /metrics show about a run.
type counters struct {
	late       atomic.Uint64 // replies after a deadline or cancel, dropped
	violations atomic.Uint64
	pingMisses atomic.Uint64 // misses in a row now
	requests   atomic.Uint64 // daemon requests sent
	adapterReq atomic.Uint64 // adapter requests served
}

// Stats is a snapshot of a run's counters.
type Stats struct {
	LateReplies    uint64 `json:"lateReplies"`
	Violations     uint64 `json:"violations"`
	PingMisses     uint64 `json:"pingMisses"`
	InFlight       int    `json:"inFlight"`
	Requests       uint64 `json:"requests"`
	AdapterRequest uint64 `json:"adapterRequests"`
}

// Stats returns the run's counters.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	inFlight := len(c.pending)
	c.mu.Unlock()
	return Stats{
		LateReplies: c.stats.late.Load(), Violations: c.stats.violations.Load(),
		PingMisses: c.stats.pingMisses.Load(), InFlight: inFlight,
		Requests: c.stats.requests.Load(), AdapterRequest: c.stats.adapterReq.Load(),
	}
}

// EndError says why a connection ended.
type EndError struct {
	// Reason is a short word: "eof", "read_error", "write_error", "pings",
	// "strikes", "closed".
	Reason string
	Detail string
	// Kill is set when the protocol requires the process group killed at
	// once (3 missed pings, 5 strikes).
	Kill bool
}

func (e *EndError) Error() string {
	if e.Detail == "" {
		return "adapter connection ended: " + e.Reason
	}
	return "adapter connection ended: " + e.Reason + ": " + e.Detail
}

// ErrCrashed is the error of every request in flight when the connection
// ends (E_ADAPTER_CRASHED).
var ErrCrashed = errors.New("the adapter's connection ended with the request in flight")

// ErrTimeout is the error of a request whose deadline passed; it was
// cancelled.
var ErrTimeout = errors.New("the adapter did not answer in time")

// Open starts a connection over the adapter's standard output and input
// and runs the handshake (section 4). It returns the ready connection, or a
// *HandshakeError. ctx bounds the handshake only, besides its own deadline.
//
// On an error the connection is closed; the caller kills the process (a
// tampered reply requires it) or lets it crash out.
func Open(ctx context.Context, stdout io.Reader, stdin io.WriteCloser, cfg Config) (*Conn, error) {
	c := newConn(stdout, stdin, cfg)
	go c.readLoop()
	go c.out.run(c)
	if err := c.runHandshake(ctx); err != nil {
		c.end(&EndError{Reason: "handshake", Detail: err.Error()})
		return nil, err
	}
	if c.cfg.Kind == adapterproto.KindService {
		go c.pingLoop()
		if c.cfg.Events != nil {
			go c.pumpEvents()
		}
	}
	return c, nil
}

func newConn(stdout io.Reader, stdin io.WriteCloser, cfg Config) *Conn {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Timing == (Timing{}) {
		cfg.Timing = DefaultTiming()
	}
	if cfg.Limits == (adapterproto.Limits{}) {
		cfg.Limits = adapterproto.DefaultLimits()
	}
	if cfg.Strikes == nil {
		cfg.Strikes = &strikes.Strikes{Clock: cfg.Clock}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		cfg: cfg, clk: cfg.Clock, log: cfg.Log, stdin: stdin,
		lines:     jsonrpc.NewLineReader(stdout, cfg.Limits.MaxLine),
		ctx:       ctx,
		cancel:    cancel,
		nextID:    1,
		pending:   map[uint64]*call{},
		cancelled: map[uint64]struct{}{},
		slots:     fifoSem{free: cfg.Limits.MaxInFlight},
		handshake: make(chan firstFrame, 1),
		hsDecided: make(chan struct{}),
		pumpDone:  make(chan struct{}),
		served:    make(chan struct{}, cfg.Limits.MaxInFlight),
		done:      make(chan struct{}),
	}
	c.out = newWriter(stdin)
	return c
}

// Done is closed when the connection has ended; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (an *EndError), or nil while it
// lives.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.endErr
	default:
		return nil
	}
}

// Close ends the connection from the daemon's side (the process has been
// stopped or killed). Requests in flight fail with ErrCrashed.
func (c *Conn) Close() { c.end(&EndError{Reason: "closed"}) }

// end ends the connection once: every request in flight fails, the
// writer takes no more frames (it writes those queued before, such as the
// cancel of the ping whose miss ends the connection, and then stops) and
// the remembered ids are forgotten (section 4: "the id is forgotten when
// ... the connection ends").
func (c *Conn) end(err *EndError) {
	c.endOnce.Do(func() {
		c.endErr = err
		c.cancel()
		c.mu.Lock()
		calls := c.pending
		c.pending = map[uint64]*call{}
		c.cancelled = map[uint64]struct{}{}
		c.cancelLog = nil
		c.mu.Unlock()
		for _, cl := range calls {
			cl.finish(nil, ErrCrashed)
		}
		close(c.done)
		c.out.close()
		if err.Kill {
			c.log.Warn("adapter to be killed", "adapter", c.cfg.Record.Name, "reason", err.Reason, "detail", err.Detail)
		}
	})
}

// alive reports whether the connection has not ended.
func (c *Conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// rpcID encodes a daemon request id.
func rpcID(id uint64) json.RawMessage { return jsonrpc.IntID(id) }
