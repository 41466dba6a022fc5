package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/openhal/gateway/internal/clock"

	"github.com/openhal/gateway/internal/halhub/token"
)

// benchConfig is the configuration halbench gives the gateway it starts:
// the embedded sim board, with room for the fan-out's watchers and writer
// (the default allows 64 connections and 4 more for admins), all of one
// token (the default lets a token hold 16).
//
// Nothing on the bench changes by itself: the simulated meter and sensors
// publish only once an hour, so that idle means idle (no value to send
// the idle clients and adapters) and the only values during the fan-out
// are the writer's.
const benchConfig = `# halbench: the sim board, still, with room for 250 watchers and a writer.
board: sim
hub:
  limits:
    maxConnections: 512
    maxConnectionsPerToken: 512
sim:
  meterInterval: 1h
  pollInterval: 1h
`

// adapterRunning is the supervisor's log line for an adapter that runs.
var adapterRunning = regexp.MustCompile(`msg="adapter state".* to=running`)

// adaptersTimeout bounds how long the idle adapters may take to start.
const adaptersTimeout = 60 * time.Second

// env is what the measurements run against.
type env struct {
	srv        servers
	pid        int    // the gateway's process; 0: resource figures skipped
	gatewayCmd string // how the gateway was started; "" when it was given
	gateway    *process
	echo       *process
	dir        string // halbench's temporary directory, if it made one
}

func (e *env) close() {
	if e.gateway != nil {
		e.gateway.stop()
	}
	if e.echo != nil {
		e.echo.stop()
	}
	if e.dir != "" {
		os.RemoveAll(e.dir)
	}
}

// setUp starts the echo server and, unless one is given, the gateway.
func setUp(ctx context.Context, s *settings, log *slog.Logger) (_ *env, err error) {
	e := &env{srv: servers{gateway: map[string]string{}, echo: map[string]string{}}}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find halbench's own binary for the echo server: %w", err)
	}
	if e.echo, err = startProcess(ctx, self, []string{"echo", "--ws", "127.0.0.1:0", "--tcp", "127.0.0.1:0"}); err != nil {
		return nil, fmt.Errorf("echo server: %w", err)
	}
	if err := e.echo.urlsInto(e.srv.echo); err != nil {
		return nil, err
	}
	if s.hubWS != "" {
		e.srv.gateway[transportWS], e.srv.gateway[transportTCP] = s.hubWS, s.hubTCP
		e.srv.token, e.pid, e.srv.auditDir = s.token, s.pid, os.TempDir()
		return e, nil
	}
	if err := e.startGateway(ctx, s); err != nil {
		return nil, err
	}
	log.Info("gateway started", "pid", e.pid, "ws", e.srv.gateway[transportWS], "tcp", e.srv.gateway[transportTCP])
	return e, nil
}

// urlsInto copies the WebSocket and TCP URLs the process logged.
func (p *process) urlsInto(m map[string]string) error {
	for transport, logged := range map[string]string{transportWS: "websocket", transportTCP: "tcp"} {
		u, err := p.url(logged)
		if err != nil {
			return err
		}
		m[transport] = u
	}
	return nil
}

// startGateway runs the gateway the measurements run against, without
// adapters, on a fresh state directory under halbench's own.
func (e *env) startGateway(ctx context.Context, s *settings) error {
	dir, err := os.MkdirTemp("", "halbench-")
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	e.dir, e.srv.auditDir = dir, dir
	l, err := launchGateway(ctx, s, filepath.Join(dir, "main"), 0)
	if err != nil {
		return err
	}
	e.gateway, e.gatewayCmd, e.pid = l.proc, l.cmd, l.proc.pid()
	e.srv.gateway, e.srv.token = l.urls, l.token
	return nil
}

// launched is a gateway halbench started.
type launched struct {
	proc  *process
	cmd   string
	urls  map[string]string // by transport
	token string            // the admin token it made
}

// launchGateway runs the gateway binary on a fresh state directory in
// dir, with both transports on free loopback ports and adapters idle
// adapters installed and running, and reads the admin token it creates on
// its first start.
func launchGateway(ctx context.Context, s *settings, dir string, adapters int) (*launched, error) {
	// The adapters' user (nobody, when halbench runs as root) must reach
	// its install folder in the state directory.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			return nil, err
		}
	}
	state := filepath.Join(dir, "state")
	names, err := installIdleAdapters(ctx, s.gateway, state, dir, adapters)
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(cfg, []byte(benchConfig+adaptersConfig(names)), 0o600); err != nil {
		return nil, fmt.Errorf("write the gateway's configuration: %w", err)
	}
	args := []string{"run", "--config", cfg, "--state-dir", state, "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0"}
	running := expectLines(adapterRunning, len(names))
	l := &launched{cmd: s.gateway + " " + strings.Join(args, " "), urls: map[string]string{}}
	if l.proc, err = startProcess(ctx, s.gateway, args, running); err != nil {
		return nil, fmt.Errorf("gateway: %w (make bench builds bin/gateway; --gateway names another)", err)
	}
	err = l.proc.waitLines(ctx, running, adaptersTimeout)
	if err == nil {
		err = l.proc.urlsInto(l.urls)
	}
	if err == nil {
		var tok []byte
		tok, err = os.ReadFile(filepath.Join(state, token.AdminFile))
		l.token = strings.TrimSpace(string(tok))
	}
	if err != nil {
		l.proc.stop()
		return nil, fmt.Errorf("gateway in %s: %w", dir, err)
	}
	return l, nil
}

// adaptersConfig is the configuration's adapters section for the idle
// adapters: they run as nobody when halbench (and the gateway) runs as
// root, as the gateway's own user otherwise.
func adaptersConfig(names []string) string {
	if len(names) == 0 {
		return ""
	}
	out := "adapters:\n  enabled: [" + strings.Join(names, ", ") + "]\n  shipped: \"\"\n"
	if os.Geteuid() == 0 {
		out += "  user: nobody\n"
	}
	return out
}

// resources are the gateway process's figures.
type resources struct {
	rss         int64   // bytes, with s.rssConns connections open
	idleCPU     float64 // % of one core, with s.idleClients idle clients and s.idleAdapters adapters
	adaptersRSS int64   // bytes, with s.rssConns connections open and s.idleAdapters adapters running (the idle CPU's gateway); 0: not measured
	peakRSS     int64   // bytes, VmHWM at the end of the run
	measured    bool
}

// settle lets the gateway finish what connecting set off (goroutines
// starting, the first notifications) before a resource is read.
const settle = 500 * time.Millisecond

// measureIdleWith measures the idle CPU: on a second gateway that halbench
// starts with s.idleAdapters idle adapters (the one the other figures are
// measured on runs none: the RSS target is about connections), whose RSS
// with the idle clients is reported too; on the given gateway otherwise.
func measureIdleWith(ctx context.Context, s *settings, e *env, rep *report, log *slog.Logger) error {
	srv, pid := e.srv, e.pid
	if e.gatewayCmd != "" && s.idleAdapters > 0 {
		log.Info("idle: a gateway with idle adapters", "adapters", s.idleAdapters)
		l, err := launchGateway(ctx, s, filepath.Join(e.dir, "idle"), s.idleAdapters)
		if err != nil {
			return fmt.Errorf("idle CPU: %w", err)
		}
		defer l.proc.stop()
		srv, pid = servers{gateway: l.urls, token: l.token}, l.proc.pid()
	}
	log.Info("idle CPU", "clients", s.idleClients, "adapters", s.idleAdapters, "window", s.idle)
	var err error
	if rep.res.idleCPU, err = measureIdle(ctx, s, srv, pid); err != nil {
		return err
	}
	if pid != e.pid {
		rep.res.adaptersRSS, err = measureRSS(ctx, s, srv, pid)
	}
	return err
}

// measureIdle connects idle clients and measures the gateway's CPU time
// over s.idle, as a share of one core.
func measureIdle(ctx context.Context, s *settings, srv servers, pid int) (float64, error) {
	conns, err := dialIdle(ctx, srv, s.idleClients)
	if err != nil {
		return 0, fmt.Errorf("idle CPU: %w", err)
	}
	defer closeAll(conns)
	if err := clock.SleepReal(ctx, settle); err != nil {
		return 0, err
	}
	t0, err := cpuTime(pid)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := clock.SleepReal(ctx, s.idle); err != nil {
		return 0, err
	}
	t1, err := cpuTime(pid)
	if err != nil {
		return 0, err
	}
	return 100 * float64(t1-t0) / float64(time.Since(start)), nil
}

// cpuPercent is CPU ticks over a wall-clock window, as % of one core.
func cpuPercent(ticks uint64, window time.Duration) float64 {
	return float64(ticks) / userHZ / window.Seconds() * 100
}

// measureRSS opens s.rssConns connections and reads the gateway's
// resident set size.
func measureRSS(ctx context.Context, s *settings, srv servers, pid int) (int64, error) {
	conns, err := dialIdle(ctx, srv, s.rssConns)
	if err != nil {
		return 0, fmt.Errorf("RSS (the gateway must allow %d connections): %w", s.rssConns, err)
	}
	defer closeAll(conns)
	if err := clock.SleepReal(ctx, settle); err != nil {
		return 0, err
	}
	rss, _, err := memory(pid)
	return rss, err
}

// dialIdle opens n initialized connections to the gateway, alternately
// over WebSocket and TCP.
func dialIdle(ctx context.Context, srv servers, n int) ([]requester, error) {
	i := 0
	return dialAll(ctx, n, func(ctx context.Context) (requester, error) {
		url := srv.gateway[[]string{transportWS, transportTCP}[i%2]]
		i++
		return dialReader(ctx, url, srv.token)
	})
}

// measureAll runs the phases in order: the resources of a fresh gateway
// first (idle CPU, then RSS), then hal/read against the echo server,
// then the fan-out, whose load shows in the peak RSS read last.
func measureAll(ctx context.Context, s *settings, e *env, log *slog.Logger) (*report, error) {
	rep := &report{s: s, gatewayCmd: e.gatewayCmd, started: time.Now().UTC()}
	var err error
	if e.pid != 0 {
		if s.runs("idle") {
			if err := measureIdleWith(ctx, s, e, rep, log); err != nil {
				return nil, err
			}
		}
		if s.runs("rss") {
			log.Info("RSS", "connections", s.rssConns)
			if rep.res.rss, err = measureRSS(ctx, s, e.srv, e.pid); err != nil {
				return nil, err
			}
		}
		rep.res.measured = true
	}
	var cells []cell
	for _, transport := range []string{transportWS, transportTCP} {
		for _, n := range s.clients {
			if s.runs("reads") {
				cells = append(cells, cell{transport: transport, clients: n})
			}
		}
	}
	for _, n := range s.writers {
		if s.runs("writes") {
			cells = append(cells, cell{write: true, transport: transportTCP, clients: n})
		}
	}
	for _, c := range cells {
		cr, err := runCell(ctx, s, e.srv, c, log)
		if err != nil {
			return nil, err
		}
		rep.cells = append(rep.cells, cr)
	}
	if s.runs("fanout") {
		if rep.fanout, err = runFanout(ctx, s, e.srv, e.pid, log); err != nil {
			return nil, err
		}
	}
	if e.pid != 0 {
		if _, rep.res.peakRSS, err = memory(e.pid); err != nil {
			return nil, err
		}
	}
	return rep, nil
}
