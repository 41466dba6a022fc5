package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	neturl "net/url"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// The gateway's clients and the echo server's are the same: each sends a
// request encoded once, waits for the message back and checks it by its
// bytes, so that both servers meet the same client and the ratio is the
// servers' alone. (A client library's own work — a reader goroutine
// handing each answer to its caller, JSON decoded into structs — would
// weigh on the gateway's side only.)

// msgConn carries whole messages: a line of TCP, a WebSocket text frame.
type msgConn interface {
	send(ctx context.Context, msg []byte) error
	// recv returns the next message, valid until the next recv.
	recv(ctx context.Context) ([]byte, error)
	close()
}

// lineConn is a TCP connection, one message per line.
type lineConn struct {
	c net.Conn
	r *bufio.Reader
	w []byte // msg and its newline
}

func dialLine(ctx context.Context, url string) (*lineConn, error) {
	u, err := neturl.Parse(url)
	if err != nil || u.Scheme != "tcp" {
		return nil, fmt.Errorf("URL %q: want tcp://host:port", url)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	return &lineConn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (l *lineConn) send(ctx context.Context, msg []byte) error {
	if d, ok := ctx.Deadline(); ok {
		l.c.SetDeadline(d)
	}
	l.w = append(append(l.w[:0], msg...), '\n')
	_, err := l.c.Write(l.w)
	return err
}

func (l *lineConn) recv(context.Context) ([]byte, error) {
	b, err := l.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

func (l *lineConn) close() { l.c.Close() }

// frameConn is a WebSocket connection, one message per text frame.
type frameConn struct{ c *websocket.Conn }

func dialFrames(ctx context.Context, url string) (*frameConn, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	c.SetReadLimit(maxEchoMessage)
	return &frameConn{c: c}, nil
}

func (f *frameConn) send(ctx context.Context, msg []byte) error {
	return f.c.Write(ctx, websocket.MessageText, msg)
}

func (f *frameConn) recv(ctx context.Context) ([]byte, error) {
	_, b, err := f.c.Read(ctx)
	return b, err
}

func (f *frameConn) close() { f.c.CloseNow() }

// dialMsgs opens a msgConn over transport.
func dialMsgs(ctx context.Context, transport, url string) (msgConn, error) {
	if transport == transportTCP {
		return dialLine(ctx, url)
	}
	return dialFrames(ctx, url)
}

// exchange sends a request and checks that the answer holds want: a
// request of one client, as the table measures it. Notifications that
// arrive first (the gateway sends every client the values of the devices
// it sees) are skipped.
type exchange struct {
	c    msgConn
	reqs [][]byte // sent in turn
	want []byte
	n    int
}

func (e *exchange) do(ctx context.Context) error {
	req := e.reqs[e.n%len(e.reqs)]
	e.n++
	if err := e.c.send(ctx, req); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	for {
		b, err := e.c.recv(ctx)
		if err != nil {
			return fmt.Errorf("receive: %w", err)
		}
		if bytes.Contains(b, e.want) {
			return nil
		}
		if !bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0","method":`)) {
			return fmt.Errorf("sent %s, got %.300s", req, b)
		}
	}
}

func (e *exchange) close() { e.c.close() }

// benchID is the id of every measured request: the length of a typical
// client's ids.
var benchID = jsonrpc.IntID(10000)

// request encodes one of the measured requests.
func request(method string, params any) []byte {
	b, err := jsonrpc.AppendRequest(nil, benchID, method, params)
	if err != nil {
		panic(err) // constant input
	}
	return b
}

// dialHub connects to the gateway and completes hal/initialize with
// token.
func dialHub(ctx context.Context, transport, url, token string) (msgConn, error) {
	c, err := dialMsgs(ctx, transport, url)
	if err != nil {
		return nil, err
	}
	v := openhal.Version
	init := exchange{c: c, want: []byte(`"result":{`), reqs: [][]byte{request(openhal.MethodInitialize,
		openhal.InitializeParams{ProtocolVersion: &v, ClientInfo: &openhal.ClientInfo{Name: "halbench", Version: "1"}, Token: &token})}}
	if err := init.do(ctx); err != nil {
		c.close()
		return nil, fmt.Errorf("hal/initialize: %w", err)
	}
	done, err := jsonrpc.AppendNotification(nil, openhal.NotifyInitialized, nil)
	if err == nil {
		err = c.send(ctx, done)
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("hal/initialized: %w", err)
	}
	return c, nil
}

// dialHubReader is a client that reads readDevice, answered from the
// gateway's cache.
func dialHubReader(ctx context.Context, transport, url, token string) (requester, error) {
	c, err := dialHub(ctx, transport, url, token)
	if err != nil {
		return nil, err
	}
	return &exchange{c: c, reqs: [][]byte{readRequest()},
		want: []byte(`"id":10000,"result":{"device":"` + readDevice + `"`)}, nil
}

// dialHubWriter is a client that writes writeDevice, true then false:
// each write applied, audited and synced before its answer.
func dialHubWriter(ctx context.Context, transport, url, token string) (requester, error) {
	c, err := dialHub(ctx, transport, url, token)
	if err != nil {
		return nil, err
	}
	var reqs [][]byte
	for _, v := range []bool{true, false} {
		reqs = append(reqs, request(openhal.MethodWrite, map[string]any{"device": writeDevice, "value": v}))
	}
	return &exchange{c: c, reqs: reqs, want: []byte(`"status":"applied"`)}, nil
}

// dialEcho is a client of the echo server: the message back is the
// request itself.
func dialEcho(ctx context.Context, transport, url string, msg []byte) (requester, error) {
	c, err := dialMsgs(ctx, transport, url)
	if err != nil {
		return nil, fmt.Errorf("echo: %w", err)
	}
	return &exchange{c: c, reqs: [][]byte{msg}, want: msg}, nil
}
