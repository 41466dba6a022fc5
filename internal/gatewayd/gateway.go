//go:build unix

package gatewayd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/hardware"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/board/sim"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/discovery"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/internal/statedir"
	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/internal/supervisor/process"
	"github.com/openhal/gateway/internal/systemd"
	"github.com/openhal/gateway/internal/tlscert"
	"github.com/openhal/gateway/openhal"
)

// shutdownGrace bounds how long open HTTP requests may take once the
// gateway is told to stop.
const shutdownGrace = 2 * time.Second

// drainGrace bounds how long requests in flight on client connections
// (a slow device write) may take to be answered at shutdown.
const drainGrace = 5 * time.Second

// startStep is the time asked of systemd (EXTEND_TIMEOUT_USEC) before each
// start-up step that may be slow: the board (a sensor that takes seconds)
// and the adapters' handshakes.
const startStep = 30 * time.Second

// runGateway wires the gateway together, tells systemd when it is ready,
// serves until stop ends (SIGTERM, SIGINT), and then shuts down cleanly.
// web serves the console on the HTTP and HTTPS listeners (nil: none).
func runGateway(stop context.Context, b build, cfg *board.Config, src configSource, web http.Handler, log *slog.Logger) error {
	stateDir := cfg.StateDir
	hups, stopHUP := listenHUP() // from now on SIGHUP reloads, and never ends the process
	defer stopHUP()
	log.Info("starting", "version", b.version, "board", cfg.Board, "state_dir", stateDir)
	raiseOpenFiles(log)
	notifier := systemd.NewNotifier(log)
	// First: LISTEN_* leave the environment before anything is spawned.
	sockets, err := systemd.ActivatedSockets(log)
	if err != nil {
		return err
	}
	// An adapter's grandchild that left its process group is re-parented
	// to us, not to init, so that stopping the adapter finds it.
	if err := process.SetSubreaper(); err != nil {
		log.Warn("cannot become a child subreaper: an adapter's orphaned grandchildren may outlive it", "err", err)
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	// One gateway per state directory: a second one would lift the
	// first's stop on disk, or write its own over it.
	lock, err := statedir.Take(stateDir)
	if err != nil {
		return err
	}
	defer lock.Close()
	auditLog, err := audit.Open(auditDir(stateDir), audit.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	defer auditLog.Close()
	store := token.Open(stateDir)
	tokens, err := loadTokens(store, auditLog, log)
	if err != nil {
		return err
	}

	reg := device.NewRegistry(nil)
	// The history follows the registry from before the board's first
	// values.
	extendStart(notifier, "history", log) // reading a large history back takes seconds on an SD card
	hist, stopHistory, err := newHistory(cfg.Hub.History, stateDir, log)
	if err != nil {
		return err
	}
	defer stopHistory() // after the board's last values and the safe ones
	defer hist.Subscribe(reg)()
	adapters := &adapterService{} // its supervisor is set once the Hub exists
	// The certificate before any listener, so that gateway status tells
	// its fingerprint from the first connection on.
	id := gatewayID(stateDir, log)
	cert, err := serverCertificate(cfg, stateDir, id, sockets, log)
	if err != nil {
		return err
	}
	// gateway status's service: its Hub and supervisor are set likewise.
	status := newStatusService(cfg, b, id, cert.fingerprint)
	statusKicks, kickStatus := newKicker()
	var stopButtons []string
	if id := cfg.StopButton(); id != "" {
		stopButtons = append(stopButtons, id)
	}
	hub := halhub.New(reg, halhub.Options{
		Level:        cfg.Hub.Conformance,
		Limits:       hubLimits(cfg.Hub.Limits),
		Version:      b.version,
		SimInputs:    cfg.Board == "sim",
		Logger:       log,
		Rules:        cfg.Rules(),
		StateDir:     stateDir,
		LatchCopy:    latchCopyPath(os.Getenv("RUNTIME_DIRECTORY")),
		Audit:        auditLog,
		StopButtons:  stopButtons,
		AuthFailures: cfg.Hub.Limits.AuthFailures,
		AuthWindow:   cfg.Hub.Limits.AuthWindow,
		Extensions:   extensionsOf(adapters.extensions(), status.extensions(), hist.Extensions(registered(reg))),
		OnSessions:   kickStatus,
		// Other sites whose web pages may open the WebSocket.
		AllowedOrigins: cfg.Hub.AllowedOrigins,
	})
	defer hub.Close()
	hub.SetTokens(tokens)
	status.hub = hub

	// The board and the token watch live until the shutdown is done, not
	// until the signal: a write in flight at SIGTERM is still answered,
	// and the safe values still reach the hardware.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watcher, err := watchStateDir(ctx, stateDir, log)
	if err != nil {
		return err
	}
	followTokens(ctx, store, hub, watcher, log)

	// A stop latched by an earlier run is read before the board opens:
	// its outputs then open at their safe values, never at initial ones.
	stopped, err := hub.LatchedStop()
	if err != nil {
		return fmt.Errorf("restore hub state: %w", err)
	}
	extendStart(notifier, "board", log)
	wait, boards, err := startBoard(ctx, openingConfig(cfg, stopped), reg, log)
	if err != nil {
		return err
	}
	defer wait()
	defer cancel() // runs before wait: stops the board's runners
	if err := hub.Restore(); err != nil {
		return fmt.Errorf("restore hub state: %w", err)
	}
	stateProbe := monitorStateDir(ctx, lock, watcher, hub, log)
	installShipped(cfg.Adapters.Shipped, stateDir, cfg.Adapters.Enabled, log)
	sup, err := supervisor.New(supervisor.Options{
		StateDir: stateDir,
		Enabled:  cfg.Adapters.Enabled,
		Settings: cfg.AdapterSettings(),
		Hub:      hub,
		Registry: reg,
		Version:  b.version,
		User:     cfg.Adapters.User,
		Log:      log.With("part", "supervisor"),
		// This very binary, whatever becomes of its file (an upgrade
		// replacing it): each adapter's shim, which kills the adapter's
		// whole tree if the gateway dies.
		Shim: "/proc/self/exe",
	})
	if err != nil {
		return err
	}
	adapters.sup = sup
	status.sup = sup
	// Both may fail on their environment: before anything is started.
	line := statusLine{reg: reg, hub: hub, sup: sup, reload: new(atomic.Pointer[string])}
	watchdog, err := newWatchdog(notifier, hub, sup, auditLog, line, log, systemd.Probe{Name: "state", Check: stateProbe})
	if err != nil {
		return err
	}
	if err := injectHang(stop, hub, sup, auditLog, log); err != nil {
		return err
	}

	httpOpt := halhub.HTTPOptions{
		MetricsPublic: cfg.Hub.MetricsPublic, Metrics: allMetrics(adapters.writeMetrics, hist.WriteMetrics),
		Probes:  map[string]func(context.Context) error{"supervisor": sup.Probe, "state": stateProbe},
		Console: web,
	}
	stopMCP := func() {}
	if cfg.Hub.MCP.Enabled {
		mcpHandler := newMCPHandler(cfg, hub, stateDir, b.version, log)
		defer mcpHandler.Close()
		httpOpt.MCP, stopMCP = mcpHandler, mcpHandler.Close
	}
	opened, err := listen(ctx, cfg, cert, hub, sockets, httpOpt, log)
	if err != nil {
		return err
	}
	// Beside the lock: the client commands given this state directory
	// reach this gateway, and no other (statedir.Record).
	if err := statedir.Record(stateDir, opened.rec.Hubs, opened.rec.Fingerprint); err != nil {
		log.Warn("the client commands will not find this gateway by its state directory", "err", err)
	}
	withdraw := announceHub(cfg, stateDir, opened, httpOpt, log)
	// The announcements first: nobody should find a listener that is
	// closing. Then the MCP sessions: their open streams would hold the
	// HTTP servers' shutdown for its whole grace.
	stopListeners := func() { withdraw(); stopMCP(); opened.stop() }
	sockets.CloseUnused()
	sup.Start()
	extendStart(notifier, "adapters", log)
	waitAdapters(stop, sup, log)

	if err := notifier.Status(line.String()); err != nil { // before READY=1
		log.Warn("systemd: STATUS not sent", "err", err)
	}
	go followStatus(stop, notifier, line, statusKicks, kickStatus, log)
	go watchdog.Run(stop)
	if err := notifier.Ready(); err != nil {
		log.Warn("systemd: READY=1 not sent", "err", err)
	}
	log.Info("ready", "devices", len(reg.List()), "conformance", cfg.Hub.Conformance, "adapters", len(cfg.Adapters.Enabled))
	reloads := &reloader{src: src, started: cfg, running: cfg, boards: boards, hub: hub, sup: sup, store: store, stateDir: stateDir,
		auditLog: auditLog, notifier: notifier, outcome: line.reload, status: line.String, kick: kickStatus, log: log.With("part", "reload")}
	waitReload := reloads.run(stop, hups)
	<-stop.Done()
	waitReload()
	shutdown(cfg, notifier, hub, sup, stopListeners, log)
	if err := statedir.Forget(stateDir); err != nil {
		log.Warn("stopped", "err", err)
	}
	return nil
}

// shutdown is the clean stop (SIGTERM): stop accepting, answer the
// requests in flight and close every connection the clean way, drive the
// outputs to their safe values when configured, and stop the adapters
// within their fixed total. The caller's deferred calls then stop the
// board and sync and close the audit log.
func shutdown(cfg *board.Config, n *systemd.Notifier, hub *halhub.Hub, sup *supervisor.Supervisor, stopListeners func(), log *slog.Logger) {
	if err := n.Stopping(); err != nil {
		log.Warn("systemd: STOPPING=1 not sent", "err", err)
	}
	log.Info("stopping", "connections", hub.Connections())
	if err := n.Status("shutting down"); err != nil {
		log.Warn("systemd: STATUS not sent", "err", err)
	}
	stopListeners()
	log.Info("listeners closed; answering requests in flight")
	ctx, cancel := context.WithTimeout(context.Background(), drainGrace)
	hub.Shutdown(ctx)
	cancel()
	log.Info("connections closed")
	if cfg.Hub.SafeOnShutdown {
		applied, failed := hub.DriveSafeAtShutdown()
		attrs := []any{"applied", strings.Join(applied, ",")}
		for _, f := range failed {
			attrs = append(attrs, "failed_"+f.Device, f.Error.Message)
		}
		log.Info("safe values driven at shutdown", attrs...)
	}
	sup.Stop()
	log.Info("adapters stopped")
}

// extendStart asks systemd for startStep more for a start-up step.
func extendStart(n *systemd.Notifier, step string, log *slog.Logger) {
	if err := n.ExtendTimeout(startStep); err != nil {
		log.Warn("systemd: EXTEND_TIMEOUT_USEC not sent", "step", step, "err", err)
	}
}

// waitAdapters waits until every enabled service adapter has left
// `starting` (running, backoff or failed): the adapters' handshake is
// bounded, so this is too; an adapter that does not come up shows in the
// status, it does not hold readiness back.
func waitAdapters(ctx context.Context, sup *supervisor.Supervisor, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, startStep)
	defer cancel()
	if err := sup.Started(ctx); err != nil {
		log.Warn("not every adapter has started; ready anyway", "err", err)
	}
}

// newWatchdog is systemd's watchdog, on when the unit sets one, over the
// parts whose wedge must restart the gateway: the Hub's event path, the
// supervisor and the audit writer, and the extra probes (the state
// directory). Devices are not probed: a hung driver puts its own device
// in fault, and must not reboot the bench.
func newWatchdog(n *systemd.Notifier, hub *halhub.Hub, sup *supervisor.Supervisor, auditLog *audit.Log, line statusLine, log *slog.Logger, extra ...systemd.Probe) (*systemd.Watchdog, error) {
	return systemd.NewWatchdog(n, systemd.WatchdogOptions{
		Probes: append([]systemd.Probe{
			{Name: "hub", Check: hub.Probe},
			{Name: "supervisor", Check: sup.Probe},
			{Name: "audit", Check: auditLog.Probe},
		}, extra...),
		Summary: line.String,
		Log:     log,
	})
}

// startBoard starts the board's devices in reg: the sim bench, or the
// hardware the configuration declares. The returned function waits for
// their runners to end once ctx is done and releases the hardware.
// On a real board, the boardSet returned is what a reload opens and
// closes devices through (boardset.go); nil on the sim board.
func startBoard(ctx context.Context, cfg *board.Config, reg *device.Registry, log *slog.Logger) (wait func(), _ *boardSet, err error) {
	if cfg.Board == board.BoardSim {
		simBoard := sim.New(cfg.Sim, clock.Real(), cfg.Overrides())
		if err := simBoard.Start(ctx, reg); err != nil {
			return nil, nil, fmt.Errorf("start sim board: %w", err)
		}
		return simBoard.Wait, nil, nil
	}
	prof, err := boardProfile(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	h, err := hardware.NewPeriph(log)
	if err != nil {
		return nil, nil, err
	}
	set := newBoardSet(ctx, prof, h, reg, log)
	if err := set.openAll(cfg); err != nil {
		return nil, nil, err
	}
	return set.wait, set, nil
}

// boardProfile is the profile the configuration names, or on `auto` the
// one the device tree says, with the devices checked against it.
func boardProfile(cfg *board.Config, log *slog.Logger) (*profile.Profile, error) {
	if cfg.Board != board.BoardAuto {
		prof, ok := profile.ByName(cfg.Board)
		if !ok {
			return nil, fmt.Errorf("board %q: no such board profile", cfg.Board)
		}
		return prof, nil
	}
	prof, err := profile.Detect(os.DirFS("/"))
	if err != nil {
		return nil, fmt.Errorf("board auto: %w", err)
	}
	log.Info("board detected", "board", prof.Name, "model", prof.Model, "note", prof.Note)
	if err := cfg.ValidateOn(prof); err != nil {
		return nil, fmt.Errorf("board auto (%s): %w", prof.Name, err)
	}
	return prof, nil
}

// addDevices registers devs, publishes the outputs' initial values and
// starts the runners on ctx; the WaitGroup ends with them.
func addDevices(ctx context.Context, cfg *board.Config, reg *device.Registry, devs []device.Device) (*sync.WaitGroup, error) {
	reps := make([]device.Reporter, len(devs))
	for i, d := range devs {
		rep, err := reg.Add(d)
		if err != nil {
			for _, added := range devs[:i] {
				reg.Remove(added.Descriptor().ID, "board failed to start")
			}
			return nil, fmt.Errorf("register %s: %w", d.Descriptor().ID, err)
		}
		reps[i] = rep
	}
	now := reg.Now()
	for i, d := range devs {
		if v := cfg.Devices[d.Descriptor().ID].InitialValue(); v != nil {
			reps[i].Value(v, now)
		}
	}
	var wg sync.WaitGroup
	for i, d := range devs {
		if r, ok := d.(device.Runner); ok {
			wg.Go(func() { r.Run(ctx, reps[i]) })
		}
	}
	return &wg, nil
}

// loadTokens creates the first admin token when there is none, records
// that in the audit log, and loads the token table.
func loadTokens(store *token.Store, auditLog *audit.Log, log *slog.Logger) (*token.Table, error) {
	path, created, err := store.EnsureAdmin()
	if err != nil {
		return nil, fmt.Errorf("admin token: %w", err)
	}
	if created {
		// The path, never the token: logs are read by more people than
		// the state directory.
		log.Info("created the first admin token", "file", path)
		entry := audit.Entry{
			Principal: openhal.Principal{Kind: openhal.KindHub, Name: "gateway"},
			Action:    "token.add", Outcome: "created",
			Reason: fmt.Sprintf("token %q: operator, scope admin, all devices (first start; in %s)", token.AdminName, path),
		}
		if _, err := auditLog.Append(context.Background(), entry); err != nil {
			return nil, fmt.Errorf("audit the first admin token: %w", err)
		}
	}
	tokens, err := store.Load()
	if err != nil {
		return nil, fmt.Errorf("load tokens: %w", err)
	}
	return tokens, nil
}

// hubLimits carries the configuration's limits over to the Hub, keeping
// the Hub's defaults for what the file does not set.
func hubLimits(l board.Limits) halhub.Limits {
	out := halhub.DefaultLimits()
	out.MaxMessageBytes = l.MaxMessageBytes
	out.MaxInFlight = l.MaxInFlight
	out.MaxConnections = l.MaxConnections
	out.AdminReserve = l.AdminReserve
	out.MaxConnectionsPerToken = l.MaxConnectionsPerToken
	out.InitTimeout = l.InitTimeout
	out.QueueLength = l.QueueLength
	out.MaxUnauthenticated = l.MaxUnauthenticated
	out.MaxUnauthenticatedPerPeer = l.MaxUnauthenticatedPerPeer
	out.InitMessageBytes = l.InitMessageBytes
	out.HTTPIdleTimeout = l.HTTPIdleTimeout
	out.AuthTrackedPeers = l.AuthTrackedPeers
	out.QueueBytes = l.QueueBytes
	out.TotalQueueBytes = l.TotalQueueBytes
	return out
}

// listening is what listen opened.
type listening struct {
	stop        func() // closes every listener
	network     []discovery.Listener
	fingerprint string           // of the TLS listeners' certificate
	rec         statedir.Running // the hubs' URLs and fingerprint, recorded in the state directory
}

// listen opens every configured listener, and closes those already open
// when one fails, so that a port that is taken stops the start with
// nothing half open.
func listen(ctx context.Context, cfg *board.Config, cert serverCert, hub *halhub.Hub, sockets *systemd.Sockets, httpOpt halhub.HTTPOptions, log *slog.Logger) (_ listening, err error) {
	var network []discovery.Listener
	var rec statedir.Running
	var closers []func()
	// Not the named result: a failing return sets that to nil before the
	// deferred call below runs.
	stop := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	l := cfg.Hub.Listen
	fingerprint := cert.fingerprint
	rec.Fingerprint = fingerprint
	for _, t := range []struct {
		name, addr        string // in the configuration
		transport, scheme string // as logged, and of the URL
		secure, web       bool
	}{
		{"http", l.HTTP.Addr, "websocket", "ws", false, true},
		{"wss", l.WSS.Addr, "wss", "wss", true, true},
		{"tcp", l.TCP.Addr, "tcp", "tcp", false, false},
		{"tls", l.TLS.Addr, "tls", "tls", true, false},
	} {
		// A socket systemd passes by this name is used even when the
		// configuration disables the listener: the unit is the
		// operator's choice too.
		if t.addr == "" && !sockets.Has(t.name) {
			continue
		}
		var tc *tls.Config
		if t.secure {
			tc = cert.conf
		}
		ln, activated, err := listenTCP(ctx, sockets, t.name, t.addr, tc, hub)
		if err != nil {
			return listening{}, err
		}
		if activated && !t.secure {
			warnActivatedPlain(log, t.name, ln.Addr())
		}
		if ap, err := netip.ParseAddrPort(ln.Addr().String()); err == nil {
			network = append(network, discovery.Listener{Kind: t.name, Addr: ap})
		}
		if t.web {
			closers = append(closers, serveHTTP(hub.HTTPServer(httpOpt), ln, log))
		} else {
			go serveLines(hub, ln, log)
			closers = append(closers, func() { ln.Close() })
		}
		url := t.scheme + "://" + ln.Addr().String()
		if t.web {
			url += "/hal"
		}
		attrs := []any{"transport", t.transport, "url", url, "addr", ln.Addr().String()}
		if t.secure {
			attrs = append(attrs, "fingerprint", fingerprint)
		}
		if activated {
			attrs = append(attrs, "socket", "systemd")
		}
		log.Info("listening", attrs...)
		rec.Hubs = append(rec.Hubs, localURL(t.scheme, ln.Addr(), t.web))
		if t.web && httpOpt.Console != nil {
			log.Info("console", "url", consoleURL(t.secure, ln.Addr()))
		}
		if t.web && httpOpt.MCP != nil {
			log.Info("mcp", "url", consoleURL(t.secure, ln.Addr())+"mcp")
		}
	}
	if l.Unix != "" {
		ln, group, err := listenUnix(l.Unix, l.UnixGroup, log)
		if err != nil {
			return listening{}, err
		}
		ln = hub.Guard("unix", ln, nil)
		go serveLines(hub, ln, log)
		closers = append(closers, func() { ln.Close() })
		rec.Hubs = append(rec.Hubs, "unix://"+l.Unix)
		log.Info("listening", "transport", "unix", "url", "unix://"+l.Unix, "addr", l.Unix, "group", group)
	}
	return listening{stop: stop, network: network, fingerprint: fingerprint, rec: rec}, nil
}

// listenTCP takes the socket systemd passed as name, or listens at addr,
// guarded by the Hub (admission, an accept that survives errors), with
// TLS over the guard when tc is not nil. name is the listener's name in
// the configuration, and the socket unit's FileDescriptorName.
func listenTCP(ctx context.Context, sockets *systemd.Sockets, name, addr string, tc *tls.Config, hub *halhub.Hub) (_ net.Listener, activated bool, _ error) {
	ln, activated, err := sockets.Listen(ctx, name, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	return hub.Guard(name, ln, tc), activated, nil
}

// serverCert is the TLS listeners' certificate: conf nil and fingerprint
// "" when no TLS listener is configured nor passed by systemd.
type serverCert struct {
	conf        *tls.Config
	fingerprint string
}

// serverCertificate loads the certificate of the TLS listeners when
// there is one: the configuration's files, or the self-signed one kept
// in the state directory, made now (with the gateway id in it) if there
// is none. The key is never logged.
func serverCertificate(cfg *board.Config, stateDir, id string, sockets *systemd.Sockets, log *slog.Logger) (serverCert, error) {
	l := cfg.Hub.Listen
	if l.WSS.Addr == "" && l.TLS.Addr == "" && !sockets.Has("wss") && !sockets.Has("tls") {
		return serverCert{}, nil
	}
	self := tlscert.Identity{GatewayID: id}
	for _, addr := range []string{l.WSS.Addr, l.TLS.Addr} {
		if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
			self.Hosts = append(self.Hosts, host)
		}
	}
	dir := filepath.Join(stateDir, "tls")
	cert, created, err := tlscert.LoadOrCreate(dir, cfg.Hub.TLS.Cert, cfg.Hub.TLS.Key, self)
	if err != nil {
		return serverCert{}, err
	}
	if created {
		log.Info("created a self-signed TLS certificate", "file", filepath.Join(dir, tlscert.CertName),
			"fingerprint", tlscert.Fingerprint(cert), "id", id, "not_after", cert.Leaf.NotAfter.Format(time.DateOnly))
	}
	return serverCert{conf: tlscert.ServerConfig(cert), fingerprint: tlscert.Fingerprint(cert)}, nil
}

// gatewayID is the gateway id kept in the state directory, made on the
// first start; "" when it cannot be read or made (logged): the gateway
// then runs without, its certificate made now carries none and nothing
// is announced.
func gatewayID(stateDir string, log *slog.Logger) string {
	id, err := discovery.GatewayID(stateDir)
	if err != nil {
		log.Error("no gateway id", "err", err)
	}
	return id
}

// warnActivatedPlain logs a plain socket systemd passed on an address off
// loopback: the configuration's insecure does not reach the socket
// units, so the start-up log says what they do (openhal-0.1 §2).
func warnActivatedPlain(log *slog.Logger, name string, addr net.Addr) {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil || board.IsLoopback(ap.Addr().String()) {
		return
	}
	log.Warn("plain socket passed by systemd is off loopback: every token given to it crosses the network in clear; "+
		"make its socket unit listen on 127.0.0.1 and serve the network with the TLS listeners (docs/install.md)",
		"name", name, "addr", addr.String())
}

// defaultUnixGroup is the group the Unix socket is given when the
// configuration names none and the system has it (openhal-0.1 §2).
const defaultUnixGroup = "gateway"

// listenUnix opens a Unix socket that the owner and its group may use
// (mode 0660), replacing a stale socket left by a crash, and returns the
// name of the group it has. A group the configuration names must exist and
// be given; without one, the group "gateway" is tried and the owner's
// group kept when that fails.
func listenUnix(path, group string, log *slog.Logger) (net.Listener, string, error) {
	var gid int
	var gname string
	var err error
	if group != "" {
		if gid, gname, err = lookupGroup(group); err != nil {
			return nil, "", fmt.Errorf("hub.listen.unixGroup: %w", err)
		}
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, "", fmt.Errorf("listen unix %s: %w", path, err)
	}
	fail := func(err error) (net.Listener, string, error) {
		ln.Close()
		return nil, "", err
	}
	if err := os.Chmod(path, 0o660); err != nil {
		return fail(fmt.Errorf("chmod unix socket %s: %w", path, err))
	}
	if group != "" {
		if err := os.Chown(path, -1, gid); err != nil {
			return fail(fmt.Errorf("give unix socket %s to group %s: %w", path, gname, err))
		}
		return ln, gname, nil
	}
	return ln, defaultGroup(path, log), nil
}

// defaultGroup gives the socket at path the group "gateway" if it can, and
// returns the group the socket has.
func defaultGroup(path string, log *slog.Logger) string {
	gid, gname, err := lookupGroup(defaultUnixGroup)
	if err == nil {
		err = os.Chown(path, -1, gid)
		if err == nil {
			return gname
		}
		log.Warn("unix socket keeps the owner's group", "path", path, "err", err)
	} else {
		log.Info("unix socket keeps the owner's group", "path", path, "reason", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	if g, err := user.LookupGroupId(strconv.Itoa(int(st.Gid))); err == nil {
		return g.Name
	}
	return strconv.Itoa(int(st.Gid))
}

// lookupGroup finds a group by name, or by number.
func lookupGroup(name string) (gid int, gname string, err error) {
	g, err := user.LookupGroup(name)
	if _, nerr := strconv.Atoi(name); nerr == nil && errors.As(err, new(user.UnknownGroupError)) {
		g, err = user.LookupGroupId(name)
	}
	switch {
	case errors.As(err, new(user.UnknownGroupError)), errors.As(err, new(user.UnknownGroupIdError)):
		return 0, "", fmt.Errorf("no group %q on this system", name)
	case err != nil:
		return 0, "", fmt.Errorf("look up group %q: %w", name, err)
	}
	gid, err = strconv.Atoi(g.Gid)
	if err != nil {
		return 0, "", fmt.Errorf("group %q has gid %q, not a number", name, g.Gid)
	}
	return gid, g.Name, nil
}

// serveHTTP serves srv (the Hub's HTTPServer) on ln until the returned
// function shuts it down, giving open requests shutdownGrace to end.
func serveHTTP(srv *http.Server, ln net.Listener, log *slog.Logger) (shutdown func()) {
	// A failed TLS handshake (a client without the pin) is the client's
	// business: logged at debug level only.
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http listener failed", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		srv.Shutdown(ctx)
	}
}

func serveLines(hub *halhub.Hub, ln net.Listener, log *slog.Logger) {
	if err := hub.ServeLines(ln); err != nil {
		log.Error("listener failed", "addr", ln.Addr().String(), "err", err)
	}
}

// latchCopyPath is where the stop latch's copy goes: the runtime directory
// systemd made for the service ($RUNTIME_DIRECTORY, the first of a
// colon-separated list), which the unit keeps across restarts
// (RuntimeDirectoryPreserve=yes). Started otherwise, there is no copy.
func latchCopyPath(runtimeDirs string) string {
	dir, _, _ := strings.Cut(runtimeDirs, ":")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "stop.json")
}
