package halhub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/openhal"
)

// Limits bound what one client can make the Hub hold (spec §2).
type Limits struct {
	MaxMessageBytes int // largest message; more closes the connection
	MaxInFlight     int // requests in flight per connection; more get BUSY
	MaxConnections  int // connections for any token
	AdminReserve    int // further connections kept for admin tokens
	// MaxConnectionsPerToken bounds the slots (of MaxConnections and
	// AdminReserve together) one token holds, so that one agent's leak or
	// flood cannot keep another principal out.
	MaxConnectionsPerToken int
	InitTimeout            time.Duration // time to complete hal/initialize
	QueueLength            int           // waiting notifications (other than values) per connection
	WriteTimeout           time.Duration // default deadline of a write at the device
	ReadTimeout            time.Duration // deadline of a fresh measurement

	// Connections not yet authenticated hold no slot of MaxConnections:
	// they have a budget of their own (spec §2), per peer (remote address;
	// peer uid on the Unix socket) and in all, on the network listeners
	// together and on the Unix socket apart. More are closed at accept.
	MaxUnauthenticated        int
	MaxUnauthenticatedPerPeer int
	// InitMessageBytes is the largest message before hal/initialize
	// succeeds: an unauthenticated peer does not make the Hub buffer
	// MaxMessageBytes.
	InitMessageBytes int
	// HTTPIdleTimeout closes an HTTP keep-alive connection idle this long.
	HTTPIdleTimeout time.Duration
	// AuthTrackedPeers bounds how many peers the limiter of failed tokens
	// remembers; past it, new peers share one budget of failures.
	AuthTrackedPeers int
	// QueueBytes bounds the bytes one connection's queue holds, answers
	// included until written (spec §8); TotalQueueBytes bounds all
	// connections' together (see queueBudget). 0 means the default.
	QueueBytes      int
	TotalQueueBytes int
}

// DefaultLimits are the spec's limits.
func DefaultLimits() Limits {
	return Limits{
		MaxMessageBytes: 256 << 10,
		MaxInFlight:     32,
		MaxConnections:  64,
		AdminReserve:    4,

		MaxConnectionsPerToken: 16,
		InitTimeout:            10 * time.Second,
		QueueLength:            1024,
		WriteTimeout:           5 * time.Second,
		ReadTimeout:            5 * time.Second,

		MaxUnauthenticated:        64,
		MaxUnauthenticatedPerPeer: 8,
		InitMessageBytes:          16 << 10,
		HTTPIdleTimeout:           60 * time.Second,
		AuthTrackedPeers:          4096,
		QueueBytes:                DefaultQueueBytes,
		TotalQueueBytes:           DefaultTotalQueueBytes,
	}
}

// withDefaults fills the limits a caller left at zero (a Limits built
// before a field existed) with the defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&l.MaxUnauthenticated, d.MaxUnauthenticated)
	fill(&l.MaxUnauthenticatedPerPeer, d.MaxUnauthenticatedPerPeer)
	fill(&l.InitMessageBytes, d.InitMessageBytes)
	fill(&l.AuthTrackedPeers, d.AuthTrackedPeers)
	fill(&l.MaxConnectionsPerToken, d.MaxConnectionsPerToken)
	if l.HTTPIdleTimeout <= 0 {
		l.HTTPIdleTimeout = d.HTTPIdleTimeout
	}
	// The first message must fit under both limits.
	l.InitMessageBytes = min(l.InitMessageBytes, l.MaxMessageBytes)
	return l
}

// Options configure a Hub.
type Options struct {
	Level   openhal.Level // conformance level; "" means full
	Limits  Limits
	Version string // the gateway's version, in hubInfo
	// SimInputs lets admins write the inputs of a simulated board (the sim
	// board plays the outside world); on real boards inputs are read-only.
	SimInputs bool
	Logger    *slog.Logger
	// Clock runs the Hub's timers (confirmation expiry, maxOnMs) and
	// stamps its times; nil means the system clock.
	Clock clock.Clock
	// Rules are the devices' safety rules, by device id.
	Rules map[string]device.Rules
	// ConfirmTTL is how long a Confirmation Request waits; 0 means 120 s.
	ConfirmTTL time.Duration
	// StateDir keeps the latched emergency stop and the confirmation
	// numbers across restarts; "" keeps them in memory only (tests).
	StateDir string
	// LatchCopy is a second file for the stop latch, outside StateDir
	// (the service's runtime directory, which systemd keeps across the
	// gateway's restarts): a latch lost with a removed state directory is
	// still found there by the next run, so a watchdog restart after the
	// directory went away comes up stopped. "" keeps no copy.
	LatchCopy string
	// Audit records every write, stop, resume and confirmation; nil
	// records nothing (tests of other parts).
	Audit *audit.Log
	// AuthFailures is how many UNAUTHORIZED answers one remote address
	// gets per AuthWindow before it is rate limited; 0 means 5 a minute.
	AuthFailures int
	AuthWindow   time.Duration
	// StopButtons are the ids of inputs whose true engages the emergency
	// stop (with principal {hub, id}) and holds off hal/resume.
	StopButtons []string
	// Extensions are the gateway's own request methods, by name (under
	// ExtensionPrefix), served beside the protocol's.
	Extensions map[string]Extension
	// OnSessions, when set, is called after a connection opens or
	// closes (see Connections): the gateway's status line follows it. It
	// must not block.
	OnSessions func()
	// AllowedOrigins are host patterns (path.Match, against the Origin's
	// host[:port], or its scheme://host[:port] when the pattern has
	// "://") of web pages from other sites that may open a WebSocket. A
	// browser's upgrade whose Origin names another site than the
	// request's Host and matches none is refused with 403.
	AllowedOrigins []string
}

// Hub serves one registry.
type Hub struct {
	opt    Options
	reg    *device.Registry
	log    *slog.Logger
	clk    clock.Clock
	bootID string

	tokens      atomic.Pointer[token.Table]
	auth        *authLimiter
	order       *writeOrder
	stats       stats
	safety      *safety
	loop        *safetyLoop
	stop        stopState
	confirms    *confirmations
	coalesce    *coalescer // the audit's rate per principal
	queues      *queueBudget
	lineWriters *sync.Pool    // buffers of the line transports' writes (newLineWriters)
	pages       chan struct{} // page builders at work (buildPage)
	fan         *fanout       // writes the notifications of connections with a tryWriter
	corks       *sync.Pool    // *[]byte: WebSocket writers' batches (wsTransport.write)
	cancel      context.CancelFunc

	methods     map[string]method
	methodNames map[string]string // methodNames(methods), for the decoder
	stopButtons map[string]bool

	closing atomic.Bool // Shutdown began: requests are refused

	mu          sync.RWMutex
	sessions    map[*session]struct{}
	subscribers map[*subscriber]struct{} // in-process audiences (Subscribe)
	unsub       func()

	slots      int                           // authenticated connections holding a slot; under mu
	tokenSlots map[string]int                // the slots each token holds, by its entry's name; under mu
	httpSlots  map[*guardedConn]struct{}     // HTTP connections holding a slot (AdmitHTTP); under mu
	netBudget  *peerBudget                   // unauthenticated connections, network listeners
	unixBudget *peerBudget                   // unauthenticated connections, Unix socket
	guards     map[*guardedListener]struct{} // listeners from Guard, for /healthz; under mu
	idleTicks  atomic.Uint64                 // orders HTTP connections by when they went idle (guardedConn.idleTick)
	refusals   *refuser                      // connections refused at accept: answers and log lines
}

// New returns a Hub over reg. Call SetTokens and Restore before serving,
// and Close when done.
func New(reg *device.Registry, opt Options) *Hub {
	if opt.Level == "" {
		opt.Level = openhal.LevelFull
	}
	if opt.Limits == (Limits{}) {
		opt.Limits = DefaultLimits()
	}
	opt.Limits = opt.Limits.withDefaults()
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Clock == nil {
		opt.Clock = clock.Real()
	}
	if opt.Limits.QueueBytes <= 0 {
		opt.Limits.QueueBytes = DefaultQueueBytes
	}
	if opt.Limits.TotalQueueBytes <= 0 {
		opt.Limits.TotalQueueBytes = DefaultTotalQueueBytes
	}
	if opt.AuthFailures <= 0 || opt.AuthWindow <= 0 {
		opt.AuthFailures, opt.AuthWindow = 5, time.Minute
	}
	h := &Hub{
		opt:         opt,
		reg:         reg,
		log:         opt.Logger,
		clk:         opt.Clock,
		bootID:      newBootID(),
		order:       newWriteOrder(),
		sessions:    map[*session]struct{}{},
		methods:     methods(),
		safety:      newSafety(opt.Clock, opt.Rules),
		loop:        newSafetyLoop(),
		confirms:    newConfirmations(),
		queues:      newQueueBudget(opt.Limits.TotalQueueBytes),
		lineWriters: newLineWriters(),
		pages:       make(chan struct{}, pageBuilders),
		fan:         newFanout(),
		corks:       &sync.Pool{New: func() any { return new([]byte) }},
	}
	h.coalesce = newCoalescer(opt.Clock, coalesceRates, h.recordCount)
	h.auth = newAuthLimiter(authLimits{
		failures: opt.AuthFailures, window: opt.AuthWindow, peers: opt.Limits.AuthTrackedPeers,
	}, opt.Clock)
	lim := opt.Limits
	h.netBudget = newPeerBudget(lim.MaxUnauthenticatedPerPeer, lim.MaxUnauthenticated)
	h.unixBudget = newPeerBudget(lim.MaxUnauthenticatedPerPeer, lim.MaxUnauthenticated)
	h.guards = map[*guardedListener]struct{}{}
	h.tokenSlots = map[string]int{}
	h.httpSlots = map[*guardedConn]struct{}{}
	h.refusals = newRefuser()
	addExtensions(h.methods, opt.Extensions)
	addExtensions(h.methods, valuesExtension(reg))
	h.methodNames = methodNames(h.methods)
	h.stopButtons = map[string]bool{}
	for _, id := range opt.StopButtons {
		h.stopButtons[id] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.runSafety(ctx)
	go h.trimQueues(ctx)
	go h.fan.run(ctx)
	h.unsub = reg.Subscribe(h.onEvent)
	return h
}

// Restore reads what an earlier run left in the state directory — the
// last confirmation number, and an emergency stop still latched — once the
// board's devices are registered. A latched stop engages at once and the
// devices are driven to their safe values again: a crash must never lift
// a stop.
func (h *Hub) Restore() error {
	if err := h.loadCounter(); err != nil {
		return err
	}
	if err := h.loadLatch(); err != nil {
		return err
	}
	h.stop.mu.Lock()
	rec, engaged, gen := h.stop.latch, h.stop.engaged, h.stop.gen
	h.stop.mu.Unlock()
	if !engaged {
		return nil
	}
	h.log.Warn("the emergency stop is still engaged from an earlier run; only an admin's hal/resume lifts it",
		"principal", rec.Principal.Name, "reason", rec.Reason, "since", rec.TS)
	applied, failed, auditErr := h.driveAllSafe(openhal.Principal{Kind: openhal.KindHub, Name: "latched_stop"}, "emergency stop latched at start", h.order.enterAhead)
	h.stop.setOutcome(gen, stopOutcome{failed: failed, left: h.leftAsIs()})
	h.log.Info("safe values driven at start", "applied", len(applied), "failed", len(failed), "audited", auditErr == nil)
	return nil
}

// BootID is this run's random id, sent in every hal/initialize answer so
// that a client tells a restart from a gap in seq.
func (h *Hub) BootID() string { return h.bootID }

// SetTokens replaces the token table and closes the connections whose
// token is no longer in it (revoked).
func (h *Hub) SetTokens(t *token.Table) {
	h.tokens.Store(t)
	h.mu.RLock()
	var revoked []*session
	for s := range h.sessions {
		if tok, ok := s.tokenInUse(); ok {
			if _, still := t.Lookup(tok); !still {
				revoked = append(revoked, s)
			}
		}
	}
	h.mu.RUnlock()
	for _, s := range revoked {
		h.log.Info("closing connection of a revoked token", "remote", s.tr.remote(), "principal", s.principalName())
		s.close("token revoked")
	}
}

// Close ends every connection, stops listening to the registry and
// writes the audit's count entries still open (see coalescer), the
// rate-limited answers not yet recorded among them.
func (h *Hub) Close() {
	h.unsub()
	h.cancel()
	h.mu.RLock()
	all := make([]*session, 0, len(h.sessions))
	for s := range h.sessions {
		all = append(all, s)
	}
	h.mu.RUnlock()
	for _, s := range all {
		s.close("hub closing")
	}
	h.coalesce.close() // the counts still open are written before the log closes
}

// Connections returns the number of open connections.
func (h *Hub) Connections() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.sessions)
}

func newBootID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on Linux ≥ 3.17
	}
	return hex.EncodeToString(b[:])
}
