package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/openhal/gateway/board"
)

// cmdRun runs the gateway until SIGINT or SIGTERM.
func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "configuration `file` (default: the embedded sim board on 127.0.0.1)")
	stateDir := fs.String("state-dir", "", "state `dir`ectory: tokens, audit log (default: the configuration's, else "+defaultStateDir()+")")
	httpAddr := fs.String("http", "", "HTTP/WebSocket listen `address` (overrides the configuration; \"\" there disables it)")
	wssAddr := fs.String("wss", "", "HTTPS/WebSocket-over-TLS listen `address` (overrides the configuration)")
	tcpAddr := fs.String("tcp", "", "TCP listen `address` (overrides the configuration)")
	tlsAddr := fs.String("tls", "", "TCP-over-TLS listen `address` (overrides the configuration)")
	unixPath := fs.String("unix", "", "Unix socket `path` (overrides the configuration)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gateway run: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	cfg, err := loadConfig(*configPath, stderr)
	if err != nil {
		return err
	}
	// A flag given on the command line wins over the file, even "" (which
	// disables that listener).
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "http":
			cfg.Hub.Listen.HTTP = *httpAddr
		case "wss":
			cfg.Hub.Listen.WSS = *wssAddr
		case "tcp":
			cfg.Hub.Listen.TCP = *tcpAddr
		case "tls":
			cfg.Hub.Listen.TLS = *tlsAddr
		case "unix":
			cfg.Hub.Listen.Unix = *unixPath
		}
	})
	if err := cfg.Validate(); err != nil {
		return reportConfig(err, stderr)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	setMemoryLimit(log)
	logConfigWarnings(log, cfg)
	dir := firstNonEmpty(*stateDir, cfg.StateDir, defaultStateDir())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return runGateway(ctx, cfg, dir, log)
}

// cmdCheck validates a configuration without touching any hardware.
func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "configuration `file` to check")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *configPath == "" {
		fmt.Fprintln(stderr, "gateway check: --config FILE is required")
		return errUsage
	}
	cfg, err := loadConfig(*configPath, stderr)
	if err != nil {
		return err
	}
	printConfigWarnings(stderr, cfg)
	fmt.Fprintf(stdout, "%s: ok\n", *configPath)
	return nil
}

// loadConfig reads the file, or the embedded default when path is empty.
// A bad file's errors are printed one per line, as `field.path: what is
// wrong`.
func loadConfig(path string, stderr io.Writer) (*board.Config, error) {
	if path == "" {
		return board.Default(), nil
	}
	cfg, err := board.Load(path)
	if err != nil {
		return nil, reportConfig(err, stderr)
	}
	return cfg, nil
}

func reportConfig(err error, stderr io.Writer) error {
	var errs board.Errors
	if !errors.As(err, &errs) {
		return err
	}
	for _, e := range errs {
		fmt.Fprintln(stderr, e.Error())
	}
	return errReported
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
