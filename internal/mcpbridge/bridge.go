// Package mcpbridge serves the Model Context Protocol to AI agents as an
// ordinary OpenHAL client of the Hub. Every tool call is a request of the
// agent's own token, so that the Hub's scopes, device limits, safety rules,
// emergency stop, confirmations and audit log apply to it exactly as to any
// other client: the bridge adds no power of its own and takes none away.
//
// One Bridge stands for one token. `gateway mcp` runs one on stdio, dialled
// to a gateway like the CLI; the gateway's /mcp endpoint (Handler) keeps one
// per bearer token, each reaching the Hub through Hub.Pipe.
//
// What the bridge never does, whatever the token's scope: approve, reject
// or resume. A confirmation is a person's consent, and a model that could
// give it would make it worthless; the pending result says where a person
// gives it instead.
package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// Options configure a Bridge.
type Options struct {
	// Dial connects to the Hub with the agent's token. New calls it once;
	// with Redial, the bridge calls it again after a lost connection.
	Dial func(ctx context.Context) (*halclient.Conn, error)
	// Redial keeps the bridge alive across a lost connection (a restart
	// of the gateway): it dials again with backoff, and calls made
	// meanwhile fail with words that say so. Without it (the /mcp
	// endpoint, inside the gateway) the bridge ends with its connection.
	Redial bool
	// Gateway names the gateway in resource URIs
	// (openhal://<Gateway>/devices/<id>); "" uses the Hub's name.
	Gateway string
	// ConsoleURL is the operator console's address ("" when unknown),
	// and ApproveFlags the flags a person gives `gateway confirm approve
	// ID` to reach the same gateway with its admin token ("--hub URL",
	// "--state-dir DIR"; "" when the command's defaults reach it): both
	// go in a pending result, where a person approves.
	ConsoleURL, ApproveFlags string
	// Version is the bridge's version in serverInfo.
	Version string
	// Logger receives the bridge's own events; nil discards them.
	Logger *slog.Logger
}

// Bridge is an MCP server acting as one token on one Hub.
type Bridge struct {
	opt       Options
	server    *mcp.Server
	log       *slog.Logger
	gw        string // the gateway's name in URIs
	principal openhal.Principal

	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	done   chan struct{} // closed when the follow loop ends

	mu      sync.Mutex
	conn    *halclient.Conn // nil while disconnected
	lostErr error           // why there is no connection
	devices map[string]device.Descriptor
	stopped *openhal.StopInfo

	reg  sync.Mutex           // one refresh at a time; guards defs and res
	defs map[string]*mcp.Tool // the tools registered, by name
	res  map[string]bool      // the device resource URIs registered

	watch  *watchers
	notify *updates
	lane   stopLane // the stops engaged ahead of the SDK (stoplane.go)
}

// New dials the Hub and builds the MCP server for the token's principal:
// its tools (by scope) and its resources (the devices it sees). A failed
// first dial is returned as it is: a refused token or an absent gateway is
// better said at start than hidden behind tools that all fail.
func New(ctx context.Context, opt Options) (*Bridge, error) {
	conn, err := opt.Dial(ctx)
	if err != nil {
		return nil, err
	}
	b := &Bridge{opt: opt, log: opt.Logger, watch: newWatchers(), defs: map[string]*mcp.Tool{}, res: map[string]bool{}}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	init := conn.Init()
	b.gw = opt.Gateway
	if b.gw == "" {
		b.gw = init.HubInfo.Name
	}
	b.server = mcp.NewServer(&mcp.Implementation{Name: "openhal-gateway", Title: "OpenHAL gateway", Version: opt.Version},
		&mcp.ServerOptions{
			Instructions:       instructions(init.Principal),
			SubscribeHandler:   b.subscribe,
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
			Capabilities: &mcp.ServerCapabilities{
				Tools:     &mcp.ToolCapabilities{ListChanged: true},
				Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			},
		})
	b.notify = newUpdates(b.server)
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.done = make(chan struct{})
	if err := b.attach(ctx, conn); err != nil {
		conn.Close()
		b.cancel()
		return nil, err
	}
	b.addStaticResources()
	go b.follow(conn)
	return b, nil
}

// Principal is who the bridge acts as: the token's principal.
func (b *Bridge) Principal() openhal.Principal {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.principal
}

// Server is the MCP server, to run on a transport or serve over HTTP.
func (b *Bridge) Server() *mcp.Server { return b.server }

// Done is closed when the bridge has ended: Close was called, or (without
// Redial) its connection to the Hub was lost.
func (b *Bridge) Done() <-chan struct{} { return b.done }

// Close ends the bridge and its connection to the Hub. Confirmation
// requests it made stay pending: a request outlives its creator's
// connection (spec §7).
func (b *Bridge) Close() {
	b.cancel()
	b.mu.Lock()
	c := b.conn
	b.mu.Unlock()
	if c != nil {
		c.Close()
	}
	<-b.done
	b.notify.stop()
}

// attach makes conn the bridge's connection: the device list, the stop in
// force, and the tools and resources that follow from them.
func (b *Bridge) attach(ctx context.Context, conn *halclient.Conn) error {
	devs, err := conn.Devices(ctx)
	if err != nil {
		return fmt.Errorf("list the devices: %w", err)
	}
	b.mu.Lock()
	b.conn, b.lostErr = conn, nil
	b.devices = make(map[string]device.Descriptor, len(devs))
	for _, d := range devs {
		b.devices[d.ID] = d
	}
	b.stopped = conn.Init().Stopped
	b.principal = conn.Init().Principal
	b.mu.Unlock()
	b.refresh()
	return nil
}

// hub returns the live connection, or an error that says why there is
// none and what happens next.
func (b *Bridge) hub() (*halclient.Conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.conn != nil:
		return b.conn, nil
	case b.lostErr == nil:
		return nil, errors.New("this MCP server has closed its connection to the gateway")
	case refused(b.lostErr):
		return nil, fmt.Errorf("UNAUTHORIZED: the gateway no longer accepts this agent's token (%v): it was revoked or replaced. A person must give the agent a new token; nothing can be done until then", b.lostErr)
	case b.opt.Redial:
		return nil, fmt.Errorf("the gateway cannot be reached (%v); the bridge is reconnecting: try again in a few seconds", b.lostErr)
	}
	return nil, fmt.Errorf("the connection to the gateway ended (%v); start a new MCP session", b.lostErr)
}

// refused reports an error that redialling cannot mend: the Hub refused
// the token.
func refused(err error) bool {
	var he *halclient.HubError
	return errors.As(err, &he) && he.Code() == openhal.CodeUnauthorized
}

// follow passes the Hub's notifications on until the connection ends,
// then redials (with Redial) or ends the bridge.
func (b *Bridge) follow(conn *halclient.Conn) {
	defer close(b.done)
	for {
		for n := range conn.Notifications() {
			b.handle(n)
		}
		b.mu.Lock()
		b.conn, b.lostErr = nil, conn.Err()
		b.mu.Unlock()
		b.watch.lost()
		if !b.opt.Redial || b.ctx.Err() != nil {
			return
		}

		b.log.Warn("mcp: connection to the gateway lost; reconnecting", "err", conn.Err())
		if conn = b.redial(); conn == nil {
			return
		}
		b.log.Info("mcp: reconnected to the gateway")
	}
}

// Redial backoff: quick after a restart of the gateway, and no more than
// one attempt per 10 s while it stays away.
const (
	redialMin = 250 * time.Millisecond
	redialMax = 10 * time.Second
)

// redial dials until it succeeds or the bridge closes (nil).
func (b *Bridge) redial() *halclient.Conn {
	delay := redialMin
	for {
		select {
		case <-b.ctx.Done():
			return nil
		case <-time.After(delay):
		}
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		conn, err := b.opt.Dial(ctx)
		if err == nil {
			err = b.attach(ctx, conn)
			if err != nil {
				conn.Close()
			}
		}
		cancel()
		if err == nil {
			return conn
		}
		b.mu.Lock()
		b.lostErr = err
		b.mu.Unlock()
		if refused(err) {
			b.log.Warn("mcp: the gateway refuses this agent's token; not reconnecting", "err", err)
			return nil
		}
		delay = min(2*delay, redialMax)
	}
}
