package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// maxEchoMessage is the largest WebSocket message the echo server takes,
// the Hub's default limit.
const maxEchoMessage = 256 << 10

// cmdEcho runs the echo server until ctx ends. halbench starts it as a
// process of its own, as it starts the gateway, so that both servers are
// scheduled alike and neither shares a Go runtime with the clients.
func cmdEcho(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("halbench echo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wsAddr := fs.String("ws", "127.0.0.1:0", "WebSocket listen `address`")
	tcpAddr := fs.String("tcp", "127.0.0.1:0", "TCP listen `address`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	e, err := startEcho(*wsAddr, *tcpAddr)
	if err != nil {
		return err
	}
	log.Info("listening", "transport", "websocket", "url", e.wsURL())
	log.Info("listening", "transport", "tcp", "url", e.tcpURL())
	log.Info("ready")
	<-ctx.Done()
	e.Close()
	return nil
}

// echoServer sends every WebSocket message and every TCP line back
// unchanged: the least any server can do with a request, over the same
// transports as the Hub.
type echoServer struct {
	ws, tcp net.Listener
	srv     *http.Server

	mu     sync.Mutex
	conns  map[io.Closer]struct{} // open connections, closed by Close
	closed bool
	wg     sync.WaitGroup
}

func startEcho(wsAddr, tcpAddr string) (*echoServer, error) {
	ws, err := net.Listen("tcp", wsAddr)
	if err != nil {
		return nil, fmt.Errorf("echo: listen websocket %s: %w", wsAddr, err)
	}
	tcp, err := net.Listen("tcp", tcpAddr)
	if err != nil {
		ws.Close()
		return nil, fmt.Errorf("echo: listen tcp %s: %w", tcpAddr, err)
	}
	e := &echoServer{ws: ws, tcp: tcp, conns: map[io.Closer]struct{}{}}
	// HTTP/1.1 only, as the gateway serves it: a WebSocket upgrade is an
	// HTTP/1.1 exchange.
	e.srv = &http.Server{Handler: http.HandlerFunc(e.serveWS), ReadHeaderTimeout: 10 * time.Second}
	e.srv.Protocols = new(http.Protocols)
	e.srv.Protocols.SetHTTP1(true)
	e.wg.Add(2)
	go func() {
		defer e.wg.Done()
		e.srv.Serve(ws)
	}()
	go func() {
		defer e.wg.Done()
		e.acceptTCP()
	}()
	return e, nil
}

func (e *echoServer) wsURL() string  { return "ws://" + e.ws.Addr().String() + "/echo" }
func (e *echoServer) tcpURL() string { return "tcp://" + e.tcp.Addr().String() }

// Close stops both listeners and closes every connection.
func (e *echoServer) Close() {
	e.srv.Close()
	e.tcp.Close()
	e.mu.Lock()
	e.closed = true
	for c := range e.conns {
		c.Close()
	}
	e.mu.Unlock()
	e.wg.Wait()
}

// track registers an open connection; false means the server is closing
// and the caller should close c itself.
func (e *echoServer) track(c io.Closer) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.conns[c] = struct{}{}
	e.wg.Add(1)
	return true
}

func (e *echoServer) untrack(c io.Closer) {
	e.mu.Lock()
	delete(e.conns, c)
	e.mu.Unlock()
	c.Close()
	e.wg.Done()
}

// serveWS echoes each message in a frame of the same type.
func (e *echoServer) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered the client
	}
	c.SetReadLimit(maxEchoMessage)
	closer := wsCloser{c}
	if !e.track(closer) {
		c.CloseNow()
		return
	}
	defer e.untrack(closer)
	ctx := context.Background()
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		if err := c.Write(ctx, typ, b); err != nil {
			return
		}
	}
}

type wsCloser struct{ c *websocket.Conn }

func (w wsCloser) Close() error { return w.c.CloseNow() }

func (e *echoServer) acceptTCP() {
	for {
		c, err := e.tcp.Accept()
		if err != nil {
			return
		}
		if !e.track(c) {
			c.Close()
			return
		}
		go e.serveTCP(c)
	}
}

// serveTCP echoes what it reads, a line at a time; a line longer than its
// buffer goes back in pieces, unchanged all the same.
func (e *echoServer) serveTCP(c net.Conn) {
	defer e.untrack(c)
	r := bufio.NewReaderSize(c, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := c.Write(line); werr != nil {
				return
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
