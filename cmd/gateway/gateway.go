package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"gateway/board"
	"gateway/board/sim"
	"gateway/clock"
	"gateway/device"
	"gateway/halhub"
	"gateway/halhub/audit"
	"gateway/halhub/token"
)

// shutdownGrace bounds how long open HTTP requests may take once the
// gateway is told to stop.
const shutdownGrace = 2 * time.Second

// runGateway wires the gateway together and serves until ctx ends.
func runGateway(ctx context.Context, cfg *board.Config, stateDir string, log *slog.Logger) error {
	log.Info("starting", "version", version, "board", cfg.Board, "state_dir", stateDir)
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	store := token.Open(stateDir)
	path, created, err := store.EnsureAdmin()
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	if created {
		// The path, never the token: logs are read by more people than
		// the state directory.
		log.Info("created the first admin token", "file", path)
	}
	tokens, err := store.Load()
	if err != nil {
		return fmt.Errorf("load tokens: %w", err)
	}

	auditLog, err := audit.Open(filepath.Join(stateDir, "audit"), audit.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	defer auditLog.Close()

	reg := device.NewRegistry(nil)
	var stopButtons []string
	if id := cfg.StopButton(); id != "" {
		stopButtons = append(stopButtons, id)
	}
	hub := halhub.New(reg, halhub.Options{
		Level:       cfg.Hub.Conformance,
		Limits:      hubLimits(cfg.Hub.Limits),
		Version:     version,
		SimInputs:   cfg.Board == "sim",
		Logger:      log,
		Rules:       cfg.Rules(),
		StateDir:    stateDir,
		Audit:       auditLog,
		StopButtons: stopButtons,
	})
	defer hub.Close()
	hub.SetTokens(tokens)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if err := store.Watch(ctx, log, hub.SetTokens); err != nil {
			log.Error("token file watch ended; token changes need a restart", "err", err)
		}
	}()

	simBoard := sim.New(cfg.Sim, clock.Real(), cfg.Overrides())
	if err := simBoard.Start(ctx, reg); err != nil {
		return fmt.Errorf("start sim board: %w", err)
	}
	defer simBoard.Wait()
	defer cancel() // runs before Wait: stops the board's runners
	if err := hub.Restore(); err != nil {
		return fmt.Errorf("restore hub state: %w", err)
	}
	if hub.Stopped() {
		log.Warn("started with the emergency stop engaged; an admin's resume lifts it")
	}

	stopListeners, err := listen(cfg, hub, log)
	if err != nil {
		return err
	}
	log.Info("ready", "devices", len(reg.List()), "conformance", cfg.Hub.Conformance)
	<-ctx.Done()
	log.Info("stopping")
	stopListeners()
	return nil
}

// hubLimits carries the configuration's limits over to the Hub, keeping
// the Hub's defaults for what the file does not set.
func hubLimits(l board.Limits) halhub.Limits {
	out := halhub.DefaultLimits()
	out.MaxMessageBytes = l.MaxMessageBytes
	out.MaxInFlight = l.MaxInFlight
	out.MaxConnections = l.MaxConnections
	out.AdminReserve = l.AdminReserve
	out.InitTimeout = l.InitTimeout
	out.QueueLength = l.QueueLength
	return out
}

// listen opens every configured listener before serving any, so that a
// port that is taken stops the start with nothing half open. It returns a
// function that closes them all.
func listen(cfg *board.Config, hub *halhub.Hub, log *slog.Logger) (stop func(), err error) {
	var closers []func()
	stop = func() {
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
	if l.HTTP != "" {
		ln, err := net.Listen("tcp", l.HTTP)
		if err != nil {
			return nil, fmt.Errorf("listen http %s: %w", l.HTTP, err)
		}
		srv := &http.Server{Handler: hub.Handler(halhub.HTTPOptions{MetricsPublic: cfg.Hub.MetricsPublic}), ReadHeaderTimeout: 10 * time.Second}
		go serveHTTP(srv, ln, log)
		closers = append(closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			defer cancel()
			srv.Shutdown(ctx)
		})
		log.Info("listening", "transport", "websocket", "url", "ws://"+ln.Addr().String()+"/hal", "addr", ln.Addr().String())
	}
	if l.TCP != "" {
		ln, err := net.Listen("tcp", l.TCP)
		if err != nil {
			return nil, fmt.Errorf("listen tcp %s: %w", l.TCP, err)
		}
		go serveLines(hub, ln, log)
		closers = append(closers, func() { ln.Close() })
		log.Info("listening", "transport", "tcp", "url", "tcp://"+ln.Addr().String(), "addr", ln.Addr().String())
	}
	if l.Unix != "" {
		ln, err := listenUnix(l.Unix)
		if err != nil {
			return nil, err
		}
		go serveLines(hub, ln, log)
		closers = append(closers, func() { ln.Close() })
		log.Info("listening", "transport", "unix", "url", "unix://"+l.Unix, "addr", l.Unix)
	}
	return stop, nil
}

// listenUnix opens a Unix socket that the owner and its group may use
// (mode 0660), replacing a stale socket left by a crash.
func listenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen unix %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod unix socket %s: %w", path, err)
	}
	return ln, nil
}

func serveHTTP(srv *http.Server, ln net.Listener, log *slog.Logger) {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("http listener failed", "err", err)
	}
}

func serveLines(hub *halhub.Hub, ln net.Listener, log *slog.Logger) {
	if err := hub.ServeLines(ln); err != nil {
		log.Error("listener failed", "addr", ln.Addr().String(), "err", err)
	}
}
