package gatewayd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/console"
)

// cmdRun runs the gateway until SIGINT or SIGTERM.
func (b build) cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("run", "[--config FILE] [flags]")
	configPath := fs.String("config", "", "configuration `file` (default: the embedded sim board on 127.0.0.1)")
	stateDir := fs.String("state-dir", "", "state `dir`ectory: tokens, audit log (default: the configuration's, else "+cli.DefaultStateDir()+")")
	fs.String("http", "", "HTTP/WebSocket listen `address` (overrides the configuration; \"\" there disables it)")
	fs.String("wss", "", "HTTPS/WebSocket-over-TLS listen `address` (overrides the configuration)")
	fs.String("tcp", "", "TCP listen `address` (overrides the configuration)")
	fs.String("tls", "", "TCP-over-TLS listen `address` (overrides the configuration)")
	fs.String("unix", "", "Unix socket `path` (overrides the configuration)")
	fs.Bool("insecure", false, "let the plain listeners (--http, --tcp) serve addresses off loopback, where tokens cross the network in clear (the configuration's insecure: true)")
	logLevel := fs.String("log-level", "info", "log `level`: debug, info, warn or error")
	fs.Bool("mcp", false, "serve /mcp, the Model Context Protocol for AI agents, on the HTTP and HTTPS listeners (overrides the configuration's hub.mcp.enabled)")
	consoleDir := fs.String("console-dir", "", "serve the console's files from this `dir`ectory (development: internal/console/web), not the embedded ones")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := cli.WantArgs(fs, fs.Args(), 0); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return cli.Usagef(fs, "--log-level %q: want debug, info, warn or error", *logLevel)
	}
	if err := checkListenFlags(fs); err != nil {
		return err
	}
	web, err := console.New(console.Options{Dir: *consoleDir})
	if err != nil {
		return cli.Usagef(fs, "--console-dir: %v", err)
	}
	if err := cli.ServerOnly("run"); err != nil {
		return err
	}
	cfg, err := loadConfig(*configPath, stderr)
	if err != nil {
		return err
	}
	// A flag given on the command line wins over the file, even "" (which
	// disables that listener); a reload applies them again.
	src := configSource{path: *configPath, stateFlag: *stateDir}
	src.adjust = func(cfg *board.Config) { adjustRun(fs, cfg) }
	src.adjust(cfg)
	if err := cfg.Validate(); err != nil {
		return reportConfig(configName(*configPath), err, stderr)
	}
	if noListener(cfg.Hub.Listen) && !socketActivated() {
		return cli.Usagef(fs, "no listener: --http, --wss, --tcp, --tls and --unix (or the configuration's hub.listen) are all empty, so no client could reach the gateway")
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	setMemoryLimit(log)
	logConfigWarnings(log, cfg)
	cfg.StateDir = src.stateDirOf(cfg) // the one in use: the board keeps its counters' totals there (hardware.Build)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return runGateway(ctx, b, cfg, src, web, log)
}

// adjustRun sets over cfg the listeners the command line of `gateway
// run` gives (fs.Visit: only the flags given).
func adjustRun(fs *flag.FlagSet, cfg *board.Config) {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "http":
			cfg.Hub.Listen.HTTP.Addr = f.Value.String()
		case "wss":
			cfg.Hub.Listen.WSS.Addr = f.Value.String()
		case "tcp":
			cfg.Hub.Listen.TCP.Addr = f.Value.String()
		case "tls":
			cfg.Hub.Listen.TLS.Addr = f.Value.String()
		case "insecure":
			on := f.Value.String() == "true"
			cfg.Hub.Listen.HTTP.Insecure, cfg.Hub.Listen.TCP.Insecure = on, on
		case "unix":
			cfg.Hub.Listen.Unix = f.Value.String()
		case "mcp":
			cfg.Hub.MCP.Enabled = f.Value.String() == "true"
		}
	})
}

// checkListenFlags refuses, as a usage error, a listen address given on
// the command line that is no host:port ("" is one: it disables the
// listener). The configuration file's own addresses are the file's
// errors (exit 1), named by their field.
func checkListenFlags(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "http", "wss", "tcp", "tls":
			if addr := f.Value.String(); addr != "" && err == nil {
				if what := board.CheckHostPort(addr); what != "" {
					err = cli.Usagef(fs, "--%s: %s", f.Name, what)
				}
			}
		}
	})
	return err
}

// cmdCheck validates a configuration without touching any hardware.
func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("check", "--config FILE")
	configPath := fs.String("config", "", "configuration `file` to check")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := cli.WantArgs(fs, fs.Args(), 0); err != nil {
		return err
	}
	if *configPath == "" {
		return cli.Usagef(fs, "--config FILE is required")
	}
	cfg, err := loadConfig(*configPath, stderr)
	if err != nil {
		return err
	}
	printConfigWarnings(stderr, cfg)
	if err := checkAdapterUser(*configPath, cfg, stderr); err != nil {
		return err
	}
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
		return nil, reportConfig(path, err, stderr)
	}
	return cfg, nil
}

// reportConfig prints a bad configuration's faults, one a line, each
// naming the file: "gateway: bench.yaml: hub.listen.htp: unknown field".
func reportConfig(file string, err error, stderr io.Writer) error {
	var errs board.Errors
	if !errors.As(err, &errs) {
		return err
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "gateway: %s: %s\n", file, e.Error())
	}
	return cli.ErrReported
}

// configName names the configuration in errors: its file, or the
// embedded sim board's.
func configName(path string) string {
	if path == "" {
		return "the built-in sim configuration"
	}
	return path
}

// noListener reports whether l opens no listener at all: such a gateway
// would run, and report ready, with no way in.
func noListener(l board.ListenConfig) bool {
	return l.HTTP.Addr == "" && l.WSS.Addr == "" && l.TCP.Addr == "" && l.TLS.Addr == "" && l.Unix == ""
}

// socketActivated reports whether systemd passed this process listening
// sockets (sd_listen_fds: LISTEN_PID is this process), which the gateway
// serves even where the configuration disables that listener.
func socketActivated() bool {
	return os.Getenv("LISTEN_FDS") != "" && os.Getenv("LISTEN_PID") == strconv.Itoa(os.Getpid())
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
