package halclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	neturl "net/url"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"gateway/jsonrpc"
)

// maxMessage is the largest message the client reads. It sits well above
// the Hub's default limit (256 KiB) so that a Hub configured for larger
// messages still works.
const maxMessage = 4 << 20

// transport carries whole messages, whatever the framing.
type transport interface {
	// read returns the next message; after close it returns an error.
	read() ([]byte, error)
	// write writes one message. The caller serializes writes.
	write(ctx context.Context, msg []byte) error
	close() error
	// bearer reports whether the token travelled with the transport
	// (a WebSocket's Authorization header) rather than in params.token.
	bearer() bool
}

// URLError is a URL this client cannot dial: a typo, or a scheme it does
// not speak. Retrying it is pointless.
type URLError struct {
	URL    string
	Reason string
}

func (e *URLError) Error() string { return fmt.Sprintf("hub URL %q: %s", e.URL, e.Reason) }

// NotListeningError is a dial that found no one at the address.
type NotListeningError struct {
	URL string
	Err error
}

func (e *NotListeningError) Error() string {
	return fmt.Sprintf("nothing listening at %s (is the gateway running?)", e.URL)
}

func (e *NotListeningError) Unwrap() error { return e.Err }

// dialTransport opens the transport that url's scheme names.
func dialTransport(ctx context.Context, url string, opt Options) (transport, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return nil, &URLError{URL: url, Reason: "not a URL"}
	}
	if opt.Fingerprint != "" && u.Scheme != "wss" && u.Scheme != "tls" {
		return nil, &URLError{URL: url, Reason: "a certificate fingerprint needs a TLS URL (wss:// or tls://)"}
	}
	switch u.Scheme {
	case "ws":
		return dialWebSocket(ctx, url, opt.Token)
	case "tcp":
		if u.Host == "" || u.Port() == "" {
			return nil, &URLError{URL: url, Reason: "want tcp://host:port"}
		}
		return dialLine(ctx, url, "tcp", u.Host)
	case "unix":
		path := u.Path
		if path == "" {
			path = u.Opaque
		}
		if path == "" {
			return nil, &URLError{URL: url, Reason: "want unix:///path/to/socket"}
		}
		return dialLine(ctx, url, "unix", path)
	case "wss", "tls":
		return nil, &URLError{URL: url, Reason: u.Scheme + ":// (TLS) is not supported by this client yet; use ws://, tcp:// or unix://"}
	}
	return nil, &URLError{URL: url, Reason: "unknown scheme; want ws://, tcp:// or unix://"}
}

// dialError turns a failed dial into a sentence for a person.
func dialError(url string, err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, fs.ErrNotExist):
		return &NotListeningError{URL: url, Err: err}
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("no permission to connect to %s (is this user in the gateway group?): %w", url, err)
	}
	return fmt.Errorf("connect to %s: %w", url, err)
}

// lostError says why a connection that was up ended.
func lostError(url string, err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the hub at %s closed the connection", url)
	case websocket.CloseStatus(err) != -1:
		return fmt.Errorf("the hub at %s closed the connection (%v)", url, websocket.CloseStatus(err))
	}
	return fmt.Errorf("connection to %s lost: %w", url, err)
}

// wsTransport is one message per text frame.
type wsTransport struct {
	c      *websocket.Conn
	ctx    context.Context // ends reads at close
	cancel context.CancelFunc
}

func dialWebSocket(ctx context.Context, url, token string) (transport, error) {
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
	if token != "" {
		opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	}
	c, resp, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		if resp != nil {
			return nil, handshakeError(url, resp)
		}
		return nil, dialError(url, err)
	}
	c.SetReadLimit(maxMessage)
	rctx, cancel := context.WithCancel(context.Background())
	return &wsTransport{c: c, ctx: rctx, cancel: cancel}, nil
}

// handshakeError explains an HTTP answer other than an upgrade.
func handshakeError(url string, resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusServiceUnavailable:
		return fmt.Errorf("the hub at %s is full (HTTP %s); try again later", url, resp.Status)
	case http.StatusNotFound:
		return fmt.Errorf("no OpenHAL hub at %s (HTTP %s; the gateway serves it at /hal)", url, resp.Status)
	}
	return fmt.Errorf("no OpenHAL hub at %s (HTTP %s)", url, resp.Status)
}

func (t *wsTransport) read() ([]byte, error) {
	for {
		typ, b, err := t.c.Read(t.ctx)
		if err != nil {
			return nil, err
		}
		if typ == websocket.MessageText {
			return b, nil
		}
		// The protocol has no binary frames; skip one rather than guess.
	}
}

func (t *wsTransport) write(ctx context.Context, msg []byte) error {
	return t.c.Write(ctx, websocket.MessageText, msg)
}

func (t *wsTransport) close() error {
	err := t.c.Close(websocket.StatusNormalClosure, "")
	t.cancel()
	return err
}

func (t *wsTransport) bearer() bool { return true }

// lineTransport is one message per line, for TCP and Unix sockets.
type lineTransport struct {
	c  net.Conn
	lr *jsonrpc.LineReader
}

func dialLine(ctx context.Context, url, network, addr string) (transport, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, dialError(url, err)
	}
	return &lineTransport{c: c, lr: jsonrpc.NewLineReader(c, maxMessage)}, nil
}

func (t *lineTransport) read() ([]byte, error) { return t.lr.Next() }

// write writes msg and its newline in one call. The context's end sets a
// past deadline, so that a Hub that stops reading cannot hold the caller.
func (t *lineTransport) write(ctx context.Context, msg []byte) error {
	if len(msg) == 0 || msg[len(msg)-1] != '\n' {
		msg = append(msg, '\n')
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t.c.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	_, err := t.c.Write(msg)
	if !stop() {
		<-fired
		if err != nil {
			return ctx.Err()
		}
		t.c.SetWriteDeadline(time.Time{}) // written in full just before the end
	}
	return err
}

func (t *lineTransport) close() error { return t.c.Close() }

func (t *lineTransport) bearer() bool { return false }
