package halclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// Options say who the client is and how it proves it.
type Options struct {
	// Token is the bearer token. On WebSocket it goes in the upgrade
	// request's Authorization header; on TCP and Unix sockets in
	// params.token of hal/initialize.
	Token string
	// ClientName and ClientVersion fill clientInfo; empty means "halclient"
	// and the version of the binary's main module.
	ClientName, ClientVersion string
	// Fingerprint pins the Hub's TLS certificate for wss:// and tls://
	// URLs: the SHA-256 of the leaf certificate's DER in hex, any case,
	// colons allowed, as the gateway logs it at start. With it, the Hub is
	// trusted if and only if its certificate has this fingerprint (names,
	// dates and CAs are not checked: a gateway's self-signed certificate
	// has no CA). Without it, the system's CAs decide, or KnownGateways.
	// A Fingerprint with a URL without TLS is refused rather than
	// silently ignored.
	Fingerprint string
	// KnownGateways is a known-gateways file (KnownGatewaysFile is the
	// user's; "" uses none): a TLS Hub whose certificate the file trusts
	// under the gateway's id is trusted; one whose certificate differs
	// from what the file trusts for its id, Name or address is refused
	// (ChangedGatewayError); one the file does not know is trusted by the
	// Fingerprint, the system's CAs or FirstUse, and recorded, except
	// a CA's. All of it is decided in the TLS handshake, before anything
	// is sent.
	KnownGateways string
	// Name is what the gateway was found as (its name on the LAN), noted
	// in KnownGateways beside its address and checked like it.
	Name string
	// FirstUse decides a gateway that nothing vouches for yet (no
	// Fingerprint, not a CA's, not in KnownGateways): nil trusts it, and
	// it is recorded and dialled again; an error refuses it. It is called
	// between two dials, not inside the handshake, so that a person may
	// take their time. Nil refuses every such gateway with an
	// UnknownGatewayError.
	FirstUse func(context.Context, Presented) error
	// Insecure allows ws:// and tcp:// to a host off loopback, where the
	// token crosses the network in clear. Without it such a URL is
	// refused (ClearTextError) before anything is sent.
	Insecure bool
	// NotificationBuffer is how many notifications wait for the reader of
	// Notifications before newer ones are dropped (and counted by
	// Dropped); 0 means 1024.
	NotificationBuffer int
}

// ErrClosed is the error of a connection that Close ended.
var ErrClosed = errors.New("halclient: connection closed")

// closeTimeout bounds how long Close waits to say hal/shutdown.
const closeTimeout = time.Second

// Notification is one notification from the Hub, as received.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Conn is an initialized connection to a Hub. Its methods may be called
// from several goroutines at once.
type Conn struct {
	url         string
	tr          transport
	init        openhal.InitializeResult
	fingerprint string // of the TLS Hub's certificate; "" for plain

	nextID atomic.Uint64
	wlock  chan struct{} // holds one token: the right to write a message

	mu      sync.Mutex
	pending map[uint64]chan jsonrpc.Message

	notes   chan Notification
	dropped atomic.Uint64

	failOnce   sync.Once
	err        error         // why the connection ended; set before done closes
	done       chan struct{} // closed when the connection ends
	readerDone chan struct{}
}

// Dial connects to url (ws://host:port/hal, wss://host:port/hal,
// tcp://host:port, tls://host:port or unix:///path), initializes the session as seed 3.1.1 describes, and
// returns the connection ready for requests. Errors read as one line for a
// person: nothing listening, a refused token, a Hub that speaks another
// protocol version.
func Dial(ctx context.Context, url string, opt Options) (*Conn, error) {
	tr, fp, err := dialTransport(ctx, url, opt)
	if err != nil {
		if trusted, err := firstUse(ctx, opt, err); !trusted {
			return nil, err
		}
		if tr, fp, err = dialTransport(ctx, url, opt); err != nil {
			return nil, err
		}
	}
	c, err := start(ctx, url, tr, opt)
	if err != nil {
		return nil, err
	}
	c.fingerprint = fp
	return c, nil
}

// Fingerprint is the SHA-256 of the certificate the Hub presented, in
// lowercase hex, as it was checked; "" for a transport without TLS.
func (c *Conn) Fingerprint() string { return c.fingerprint }

// start runs the connection's reader and initializes the session over
// tr; on an error the connection is closed.
func start(ctx context.Context, url string, tr transport, opt Options) (*Conn, error) {
	c := newConn(url, tr, opt.NotificationBuffer)
	go c.readLoop()
	if err := c.initialize(ctx, opt); err != nil {
		c.fail(ErrClosed)
		<-c.readerDone
		return nil, err
	}
	return c, nil
}

// DialConn initializes a session over c, a connection already made that
// carries one message per line (as tcp:// does), and returns it ready for
// requests; name is the URL the connection is known by in errors. It
// serves a client inside the gateway, such as the MCP bridge on /mcp, that
// reaches the Hub through Hub.Pipe rather than a socket, so that it is an
// ordinary client all the same. On an error c is closed.
func DialConn(ctx context.Context, c net.Conn, name string, opt Options) (*Conn, error) {
	if opt.Fingerprint != "" {
		c.Close()
		return nil, &OptionError{Option: "Fingerprint", Err: errors.New("a connection made by the caller has no certificate to pin")}
	}
	return start(ctx, name, &lineTransport{c: c, lr: jsonrpc.NewLineReader(c, maxMessage)}, opt)
}

func newConn(url string, tr transport, buffer int) *Conn {
	if buffer <= 0 {
		buffer = 1024
	}
	c := &Conn{
		url:        url,
		tr:         tr,
		wlock:      make(chan struct{}, 1),
		pending:    map[uint64]chan jsonrpc.Message{},
		notes:      make(chan Notification, buffer),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	c.wlock <- struct{}{}
	return c
}

// initialize sends hal/initialize, checks the answer and confirms with
// hal/initialized. A Hub that answers with a version this client cannot
// use is left at once (seed 3.1.2, point 5).
func (c *Conn) initialize(ctx context.Context, opt Options) error {
	version := openhal.Version
	name, ver := opt.ClientName, opt.ClientVersion
	if name == "" {
		name = "halclient"
	}
	if ver == "" {
		ver = moduleVersion()
	}
	params := openhal.InitializeParams{
		ProtocolVersion: &version,
		ClientInfo:      &openhal.ClientInfo{Name: name, Version: ver},
	}
	if !c.tr.bearer() && opt.Token != "" {
		params.Token = &opt.Token
	}
	var res openhal.InitializeResult
	if err := c.Call(ctx, openhal.MethodInitialize, params, &res); err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) && ctx.Err() == nil {
			// The hub closes at once a connection past its budget of
			// connections not yet authenticated (openhal-0.1 §2).
			return fmt.Errorf("%w before answering hal/initialize (too many connections waiting to authenticate from this address? try again)", err)
		}
		return Describe(err, openhal.MethodInitialize, "")
	}
	if res.ProtocolVersion != openhal.Version {
		return &VersionError{URL: c.url, Hub: res.ProtocolVersion, Client: []string{openhal.Version}}
	}
	c.init = res
	return c.Notify(ctx, openhal.NotifyInitialized, nil)
}

// moduleVersion is the version of the binary's main module, as the Go
// toolchain recorded it.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// Init returns the Hub's answer to hal/initialize. Its Stopped is the
// emergency stop in force when the connection was made (nil if none): a
// stop engaged earlier, or latched by an earlier run of the gateway, of
// which no hal/stopped will come.
func (c *Conn) Init() openhal.InitializeResult { return c.init }

// URL returns the URL the connection was dialled with.
func (c *Conn) URL() string { return c.url }

// Call sends a request and waits for its answer, which it decodes into
// result (unless result is nil). Ids count up from 1; calls may overlap,
// and the Hub may answer them in any order. An error answer is returned as
// a *jsonrpc.Error; Describe turns it into a sentence.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	id := c.nextID.Add(1)
	ch := make(chan jsonrpc.Message, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	msg, err := jsonrpc.AppendRequest(nil, jsonrpc.IntID(id), method, params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	if err := c.send(ctx, msg); err != nil {
		return err
	}
	select {
	case m := <-ch:
		return decodeAnswer(method, m, result)
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		select {
		case m := <-ch: // answered just before the end
			return decodeAnswer(method, m, result)
		default:
			return c.err
		}
	}
}

func decodeAnswer(method string, m jsonrpc.Message, result any) error {
	if m.Error != nil {
		return m.Error
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(m.Result, result); err != nil {
		return fmt.Errorf("decode the answer to %s: %w", method, err)
	}
	return nil
}

// Notify sends a notification to the Hub.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	msg, err := jsonrpc.AppendNotification(nil, method, params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	return c.send(ctx, msg)
}

// send writes one message. A failed or cut-short write leaves the stream
// in an unknown state, so it ends the connection.
func (c *Conn) send(ctx context.Context, msg []byte) error {
	select {
	case <-c.wlock:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.err
	}
	defer func() { c.wlock <- struct{}{} }()
	select {
	case <-c.done:
		return c.err
	default:
	}
	if err := c.tr.write(ctx, msg); err != nil {
		err = fmt.Errorf("send to %s: %w", c.url, err)
		c.fail(err)
		return err
	}
	return nil
}

// Notifications returns the notifications the Hub sends, in order. The
// channel is closed when the connection ends. When nobody reads it and its
// buffer is full, newer notifications are dropped and counted by Dropped:
// a connection used only for requests never stalls on them.
func (c *Conn) Notifications() <-chan Notification { return c.notes }

// Dropped returns how many notifications were dropped because the
// Notifications channel was full.
func (c *Conn) Dropped() uint64 { return c.dropped.Load() }

// Done is closed when the connection ends.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended: ErrClosed after Close, an error
// naming the URL when the connection was lost, nil while it is open.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Close says hal/shutdown (seed 3.1.4) and closes the connection.
func (c *Conn) Close() error {
	select {
	case <-c.done:
	default:
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		c.Notify(ctx, openhal.NotifyShutdown, nil) // best effort: the close follows anyway
		cancel()
		c.fail(ErrClosed)
	}
	<-c.readerDone
	return nil
}

// fail ends the connection once, with err as the reason.
func (c *Conn) fail(err error) {
	c.failOnce.Do(func() {
		c.err = err
		close(c.done)
		c.tr.close()
	})
}

// readLoop reads messages until the connection ends: answers go to their
// callers, notifications to the Notifications channel.
func (c *Conn) readLoop() {
	defer close(c.readerDone)
	defer close(c.notes)
	for {
		b, err := c.tr.read()
		if err != nil {
			c.fail(lostError(c.url, err))
			return
		}
		m, jerr := jsonrpc.DecodeHAL(b)
		if jerr != nil {
			c.fail(c.brokenMessage(b, jerr))
			return
		}
		if m.Error != nil {
			m.Error = withDecodedData(m.Error)
		}
		switch {
		case m.IsNotification():
			c.notification(m)
		case m.IsResponse():
			if err := c.answer(m); err != nil {
				c.fail(err)
				return
			}
		}
		// The Hub sends no requests; one would be a Hub bug, and it
		// waits for no answer, so it is ignored.
	}
}

func (c *Conn) notification(m jsonrpc.Message) {
	select {
	case c.notes <- Notification{Method: m.Method, Params: m.Params}:
	default:
		c.dropped.Add(1)
	}
}

// answer routes a response to its caller. An error with no id (or one
// this client never used) answers something the Hub could not read, such
// as a message over its size limit; the Hub then closes the connection, so
// the error becomes the connection's.
func (c *Conn) answer(m jsonrpc.Message) error {
	id, ok := jsonrpc.ParseUint64ID(m.ID)
	if ok {
		c.mu.Lock()
		ch := c.pending[id]
		c.mu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default: // a second answer to one id: keep the first
			}
			return nil
		}
		if id != 0 && id <= c.nextID.Load() {
			return nil // its caller gave up waiting (context ended)
		}
	}
	return fmt.Errorf("the hub at %s answered a request never sent (id %s)", c.url, m.ID)
}

// brokenMessage explains a message DecodeHAL refused. The one the Hub
// sends on purpose is an error with "id": null, answering a message it
// could not read (one over its size limit, say); it then closes the
// connection, so that error becomes the connection's.
func (c *Conn) brokenMessage(b []byte, jerr *jsonrpc.Error) error {
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *jsonrpc.Error  `json:"error"`
	}
	if json.Unmarshal(b, &m) == nil && m.Error != nil && string(m.ID) == "null" {
		return fmt.Errorf("the hub at %s refused a message: %w", c.url, Describe(m.Error, "", ""))
	}
	return fmt.Errorf("the hub at %s sent a broken message: %s", c.url, jerr.Message)
}

// withDecodedData decodes an error's data (which DecodeHAL keeps as raw
// JSON) into plain Go values, so that callers can look into it and
// (*jsonrpc.Error).Reason works.
func withDecodedData(e *jsonrpc.Error) *jsonrpc.Error {
	raw, ok := e.Data.(json.RawMessage)
	if !ok {
		return e
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		e.Data = v
	}
	return e
}
