package mcpbridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// HTTPOptions configure the /mcp endpoint.
type HTTPOptions struct {
	// Dial connects to the Hub with token, for a client at peer (the
	// remote host of the HTTP request): inside the gateway, through
	// halhub's Hub.Pipe, so that the bridge is an ordinary client whose
	// failed tokens count against its peer.
	Dial func(ctx context.Context, token, peer string) (*halclient.Conn, error)
	// CheckOrigin is the Hub's Origin rule (halhub Hub.CheckOrigin).
	CheckOrigin func(*http.Request) error
	// Admit, when set, admits the HTTP connection of a request whose
	// token the Hub took, as the token's principal (halhub
	// Hub.AdmitHTTP): it leaves the budget of connections not yet
	// authenticated for a slot of the Hub's, counted against the token,
	// as a WebSocket does after hal/initialize; an error saying which
	// bound refused it when no slot is free for it.
	Admit func(r *http.Request, p openhal.Principal) error
	// IdleTimeout ends an MCP session, and a token's bridge with its Hub
	// connection, after this long without a request; 0 means 30 minutes.
	IdleTimeout time.Duration
	// Gateway and Version as in Options.
	Gateway, Version string
	// StateDirFlag is the gateway's state directory when the CLI on its
	// machine would not find it by default: the --state-dir of the
	// approval line, which finds the gateway and its admin token ("" for
	// the default one).
	StateDirFlag string
	Logger       *slog.Logger
}

// defaultIdle is how long an unused session and bridge are kept.
const defaultIdle = 30 * time.Minute

// retryBusy is the Retry-After of a 503 for want of a slot, in seconds:
// slots come free as other clients close connections, which takes longer
// than a request.
const retryBusy = "10"

// maxBody bounds a request's body: an MCP message to this gateway is a
// tool call with a device id and a value, far below it.
const maxBody = 1 << 20

// Handler serves MCP over Streamable HTTP at /mcp. The bearer token of
// each request is one of the gateway's tokens; each token has one Bridge
// (one Hub connection, one MCP server of its tools), shared by its
// sessions, and a session answers only to the token that opened it.
//
// Two SDK handlers serve it: one with sessions for the revisions up to
// 2025-11-25, and a stateless one for 2026-07-28, which the SDK serves
// only statelessly (that revision has no sessions on HTTP). A request
// goes to the second when it names that revision (Mcp-Protocol-Version)
// or is its first request (server/discover) and has no session.
type Handler struct {
	opt       HTTPOptions
	log       *slog.Logger
	stateful  http.Handler
	stateless http.Handler

	mu      sync.Mutex
	bridges map[string]*tokenBridge // by the token's hash
	closed  bool
}

// tokenBridge is a token's bridge, its idle timer and its sessions.
type tokenBridge struct {
	b        *Bridge
	id       string // the token's hash: the sessions' user
	idle     *time.Timer
	sessions *sessionSet
}

type bridgeKey struct{}

// NewHandler returns the /mcp handler.
func NewHandler(opt HTTPOptions) *Handler {
	if opt.IdleTimeout <= 0 {
		opt.IdleTimeout = defaultIdle
	}
	h := &Handler{opt: opt, log: opt.Logger, bridges: map[string]*tokenBridge{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	server := func(r *http.Request) *mcp.Server {
		tb, _ := r.Context().Value(bridgeKey{}).(*tokenBridge)
		if tb == nil {
			return nil
		}
		return tb.b.Server()
	}
	// The session's user is the token: the SDK refuses a request for a
	// session opened with another token (403), so that a session id
	// alone does not let one agent act as another.
	verify := func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		tb, _ := r.Context().Value(bridgeKey{}).(*tokenBridge)
		if tb == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: tb.id}, nil
	}
	withToken := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	h.stateful = withToken(mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{
		SessionTimeout: opt.IdleTimeout, Logger: opt.Logger, MaxRequestBodyBytes: maxBody,
	}))
	h.stateless = withToken(mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{
		Stateless: true, Logger: opt.Logger, MaxRequestBodyBytes: maxBody,
	}))
	return h
}

// ServeHTTP checks the Origin, the Host and the token, finds or makes the
// token's bridge, and passes the request to the SDK. A web page that may
// not use the gateway is refused before its token is tried.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.opt.CheckOrigin(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	if err := checkHost(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	tok := bearer(r)
	if tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="gateway"`)
		http.Error(w, "a bearer token is required: one of the gateway's tokens (gateway token add)", http.StatusUnauthorized)
		return
	}
	tb, err := h.bridge(r, tok)
	if err != nil {
		h.refuse(w, err)
		return
	}
	if h.opt.Admit != nil {
		if err := h.opt.Admit(r, tb.b.Principal()); err != nil {
			w.Header().Set("Retry-After", retryBusy)
			http.Error(w, "the gateway has no connection slot free for this request: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	r = r.WithContext(context.WithValue(r.Context(), bridgeKey{}, tb))
	if h.statelessRequest(r) {
		h.stateless.ServeHTTP(w, r)
		return
	}
	h.serveSession(w, r, tb)
}

// serveSession passes a request of a revision with sessions to the SDK,
// noting the session's use; one that made a session may close the
// token's least recently used one (maxSessions).
func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request, tb *tokenBridge) {
	id := r.Header.Get("Mcp-Session-Id")
	tb.sessions.touch(id)
	defer tb.sessions.touch(id) // a stream's end is a use too
	h.stateful.ServeHTTP(w, r)
	if made := w.Header().Get("Mcp-Session-Id"); id == "" && made != "" {
		tb.sessions.add(made)
		tb.sessions.bound(tb.b.Server(), maxSessions)
	}
}

// refuse answers a request whose token the Hub did not take, with the
// HTTP status that says the same.
func (h *Handler) refuse(w http.ResponseWriter, err error) {
	var he *halclient.HubError
	switch {
	case errors.As(err, &he) && he.Reason() == "rate_limited":
		w.Header().Set("Retry-After", "60")
		http.Error(w, "too many refused tokens from this address: try again later", http.StatusTooManyRequests)
	case errors.As(err, &he) && he.Code() == openhal.CodeUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="gateway", error="invalid_token"`)
		http.Error(w, "the gateway does not know this token (or it was revoked)", http.StatusUnauthorized)
	case errors.As(err, &he) && he.Code() == openhal.CodeBusy:
		w.Header().Set("Retry-After", retryBusy)
		http.Error(w, "the gateway is busy: "+he.Error(), http.StatusServiceUnavailable)
	case errors.Is(err, errClosed):
		http.Error(w, "the gateway is stopping", http.StatusServiceUnavailable)
	default:
		h.log.Warn("mcp: cannot reach the hub", "err", err)
		http.Error(w, "the gateway cannot serve MCP now: "+err.Error(), http.StatusServiceUnavailable)
	}
}

var errClosed = errors.New("mcp: the handler is closed")

// bridge returns the token's bridge, made on its first request: a Hub
// connection with the token (hal/initialize checks it), and its tools.
// Each request resets its idle timer.
func (h *Handler) bridge(r *http.Request, tok string) (*tokenBridge, error) {
	sum := sha256.Sum256([]byte(tok))
	id := hex.EncodeToString(sum[:])
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errClosed
	}
	if tb := h.bridges[id]; tb != nil {
		tb.idle.Reset(h.opt.IdleTimeout)
		h.mu.Unlock()
		return tb, nil
	}
	h.mu.Unlock()

	peer := hostOf(r.RemoteAddr)
	b, err := New(r.Context(), Options{
		Dial:         func(ctx context.Context) (*halclient.Conn, error) { return h.opt.Dial(ctx, tok, peer) },
		Gateway:      h.opt.Gateway,
		ConsoleURL:   consoleOf(r),
		ApproveFlags: approveFlagsOf(r, h.opt.StateDirFlag),
		Version:      h.opt.Version,
		Logger:       h.log,
	})
	if err != nil {
		return nil, err
	}
	return h.keep(id, b), nil
}

// keep files b as the bridge of the token id, unless another request of
// the same token made one meanwhile: then b is closed and that one kept.
func (h *Handler) keep(id string, b *Bridge) *tokenBridge {
	h.mu.Lock()
	if tb := h.bridges[id]; tb != nil || h.closed {
		h.mu.Unlock()
		b.Close()
		if tb == nil {
			return &tokenBridge{b: b, id: id, idle: time.NewTimer(0), sessions: newSessionSet()} // closed: its calls say so
		}
		return tb
	}
	tb := &tokenBridge{b: b, id: id, sessions: newSessionSet()}
	tb.idle = time.AfterFunc(h.opt.IdleTimeout, func() { h.drop(tb) })
	h.bridges[id] = tb
	h.mu.Unlock()
	go func() {
		<-b.Done() // the token revoked, or the Hub stopping
		h.drop(tb)
	}()
	return tb
}

// drop forgets and closes a bridge: idle, or its connection lost. Its
// sessions end with it: their next request is answered 404, and a new
// session gets a new bridge (or a 401 for a revoked token).
func (h *Handler) drop(tb *tokenBridge) {
	h.mu.Lock()
	if h.bridges[tb.id] == tb {
		delete(h.bridges, tb.id)
	}
	h.mu.Unlock()
	tb.idle.Stop()
	go func() {
		tb.b.Close()
		tb.sessions.closeAll(tb.b.Server())
	}()
}

// Close ends every bridge and its sessions: the gateway is stopping. The
// sessions' event streams and waiting calls are HTTP requests still open:
// ended here, they do not hold up the HTTP servers' shutdown. Later
// requests are answered 503.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	all := h.bridges
	h.bridges = map[string]*tokenBridge{}
	h.mu.Unlock()
	for _, tb := range all {
		tb.idle.Stop()
		tb.b.Close()
		tb.sessions.closeAll(tb.b.Server())
	}
}

// statelessRequest tells a request of revision 2026-07-28 or later, which
// only the stateless handler serves: one that says so in its header, or
// a first request without a session that is its server/discover.
func (h *Handler) statelessRequest(r *http.Request) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v >= "2026-07-28"
	}
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == "server/discover"
}

// bearer is the request's bearer token, "" without one.
func bearer(r *http.Request) string {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return ""
	}
	return f[1]
}

// hostOf is the host of a host:port.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// consoleOf is the console on the listener that served r.
func consoleOf(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host + "/"
	}
	return "http://" + r.Host + "/"
}

// approveFlagsOf are the flags of `gateway confirm approve` that reach
// the gateway that served r: its state directory when that is not the
// CLI's default (it names the gateway running there and holds its admin
// token, wherever it listens), else the listener's URL unless it is the
// default one.
func approveFlagsOf(r *http.Request, stateDir string) string {
	if stateDir != "" {
		return "--state-dir " + shellWord(stateDir)
	}
	if hub := hubOf(r); hub != "" {
		return "--hub " + hub
	}
	return ""
}

// shellWord quotes s for a POSIX shell when it holds more than letters,
// digits and -._/:
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._/:", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hubOf is the --hub of the CLI for the listener that served r, "" for
// the default one.
func hubOf(r *http.Request) string {
	u := "ws://" + r.Host + "/hal"
	if r.TLS != nil {
		u = "wss://" + r.Host + "/hal"
	}
	if u == "ws://127.0.0.1:7750/hal" {
		return ""
	}
	return u
}
