package halclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/internal/tlscert"
	"github.com/openhal/gateway/jsonrpc"
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

// OptionError is an Options field this client cannot use, such as a
// fingerprint that is not one. Retrying it is pointless.
type OptionError struct {
	Option string // the field's name
	Err    error
}

func (e *OptionError) Error() string { return e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

// NotListeningError is a dial that found no one at the address.
type NotListeningError struct {
	URL string
	Err error
}

func (e *NotListeningError) Error() string {
	return fmt.Sprintf("nothing listening at %s (is the gateway running?)", e.URL)
}

func (e *NotListeningError) Unwrap() error { return e.Err }

// dialTransport opens the transport that url's scheme names, and returns
// the fingerprint of the certificate a TLS Hub presented ("" for plain).
func dialTransport(ctx context.Context, url string, opt Options) (transport, string, error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return nil, "", &URLError{URL: url, Reason: "not a URL"}
	}
	secure := u.Scheme == "wss" || u.Scheme == "tls"
	if opt.Fingerprint != "" && !secure {
		return nil, "", &URLError{URL: url, Reason: "a certificate fingerprint needs a TLS URL (wss:// or tls://)"}
	}
	if (u.Scheme == "ws" || u.Scheme == "tcp") && u.Hostname() != "" && !isLoopback(u.Hostname()) && !opt.Insecure {
		return nil, "", &ClearTextError{URL: url}
	}
	var v *verifier
	if secure {
		if v, err = newVerifier(url, u, opt); err != nil {
			return nil, "", err
		}
	}
	var tr transport
	switch u.Scheme {
	case "ws", "wss":
		if u.Host == "" {
			return nil, "", &URLError{URL: url, Reason: "want " + u.Scheme + "://host:port/hal"}
		}
		tr, err = dialWebSocket(ctx, url, opt.Token, v)
	case "tcp", "tls":
		if u.Host == "" || u.Port() == "" {
			return nil, "", &URLError{URL: url, Reason: "want " + u.Scheme + "://host:port"}
		}
		tr, err = dialLine(ctx, url, "tcp", u.Host, v)
	case "unix":
		path := u.Path
		if path == "" {
			path = u.Opaque
		}
		if path == "" {
			return nil, "", &URLError{URL: url, Reason: "want unix:///path/to/socket"}
		}
		tr, err = dialLine(ctx, url, "unix", path, nil)
	default:
		return nil, "", &URLError{URL: url, Reason: "unknown scheme; want ws://, wss://, tcp://, tls:// or unix://"}
	}
	if err != nil || v == nil {
		return tr, "", err
	}
	return tr, v.seen, nil
}

// newVerifier checks a TLS dial's certificate against the pin, the
// known-gateways file and the system's CAs (trust.go).
func newVerifier(url string, u *neturl.URL, opt Options) (*verifier, error) {
	v := &verifier{host: u.Hostname(), p: Presented{URL: url, Addr: hostPort(u), Name: opt.Name, File: opt.KnownGateways}}
	if opt.Fingerprint != "" {
		pin, err := tlscert.ParsePin(opt.Fingerprint)
		if err != nil {
			return nil, &OptionError{Option: "Fingerprint", Err: err}
		}
		v.pin = pin
	}
	return v, nil
}

// hostPort is the URL's host:port, lowercase, with the scheme's default
// port when it has none (443 for wss://).
func hostPort(u *neturl.URL) string {
	port := u.Port()
	if port == "" && u.Scheme == "wss" {
		port = "443"
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// CertificateError is a TLS Hub whose certificate this client does not
// trust: with a pin, one whose fingerprint is another; without one, one
// that the system's CAs do not vouch for (a gateway's self-signed
// certificate). Retrying it is pointless.
type CertificateError struct {
	URL string
	Pin string // the pinned fingerprint; "" without a pin
	Got string // the fingerprint of the certificate the Hub presented, with a pin
	Err error  // why the system's verification refused it, without a pin
}

func (e *CertificateError) Error() string {
	if e.Pin != "" {
		got := e.Got
		if got == "" {
			got = "none"
		}
		return fmt.Sprintf("the hub at %s presented a certificate with fingerprint %s, not the pinned %s; refused (the gateway has a new certificate, or something in between is not the gateway)", e.URL, got, e.Pin)
	}
	// The presented fingerprint is not shown: copying it from here would
	// trust whatever answered. The gateway's own log is the place to read it.
	return fmt.Sprintf("the hub at %s presented a certificate this system does not trust (%v); to trust the gateway's self-signed certificate, pass --fingerprint with the fingerprint the gateway logs at start (its \"msg=listening transport=wss\" or \"transport=tls\" line)", e.URL, e.Err)
}

func (e *CertificateError) Unwrap() error { return e.Err }

// dialError turns a failed dial into a sentence for a person.
func dialError(url string, err error) error {
	var ce *CertificateError
	var ve *tls.CertificateVerificationError
	var ue *UnknownGatewayError
	var cg *ChangedGatewayError
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.As(err, &ue):
		return ue
	case errors.As(err, &cg):
		return cg
	case errors.As(err, &ve):
		return &CertificateError{URL: url, Err: ve.Err}
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

func dialWebSocket(ctx context.Context, url, token string, v *verifier) (transport, error) {
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
	if token != "" {
		opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	}
	if v != nil {
		tc := v.config()
		// A transport of its own carries the TLS settings; HTTP/1.1 only,
		// since the upgrade to a WebSocket is an HTTP/1.1 exchange.
		ht := http.DefaultTransport.(*http.Transport).Clone()
		ht.TLSClientConfig = tc
		ht.Protocols = new(http.Protocols)
		ht.Protocols.SetHTTP1(true)
		defer ht.CloseIdleConnections() // a refused upgrade leaves its connection idle
		opts.HTTPClient = &http.Client{Transport: ht}
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

// lineTransport is one message per line, for TCP (with or without TLS)
// and Unix sockets.
type lineTransport struct {
	c  net.Conn
	lr *jsonrpc.LineReader
}

func dialLine(ctx context.Context, url, network, addr string, v *verifier) (transport, error) {
	var c net.Conn
	var err error
	if v != nil {
		d := tls.Dialer{Config: v.config()}
		c, err = d.DialContext(ctx, network, addr) // the handshake included
	} else {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
	}
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
