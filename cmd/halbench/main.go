// Command halbench is the gateway's load tool (DESIGN.md, "Benchmarks").
// It drives a running gateway over its real transports, WebSocket and
// TCP, and prints each figure beside the same figure for a raw echo
// server over the same transport, measured in the same run and
// interleaved with it: on a shared, noisy machine the ratio to what the
// machine itself allows says more than an absolute time.
//
//	halbench [flags]                 start bin/gateway, measure it, stop it
//	halbench --hub-ws URL --hub-tcp URL --token T [--pid N] [flags]
//	halbench echo --ws ADDR --tcp ADDR
//	halbench adapter NAME            an idle adapter (the gateway starts it)
//	halbench writer --url URL ...    the fan-out's writer (halbench starts it)
//
// It prints a markdown table to stdout with each target beside its
// figure, and exits 1 when a target is missed (unless --no-fail). It is a
// binary of its own so that the gateway carries none of this.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes: 1 for a missed target or a failed run, 2 for a usage error.
const (
	exitMissed = 1
	exitUsage  = 2
)

// errUsage is returned after a flag error, which the flag package has
// already printed.
var errUsage = errors.New("usage")

func runMain(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	missed := false
	switch {
	case len(args) > 0 && args[0] == "echo":
		err = cmdEcho(ctx, args[1:], stderr)
	case len(args) > 0 && args[0] == "adapter":
		err = cmdAdapter(ctx, args[1:], stderr)
	case len(args) > 0 && args[0] == "writer":
		err = cmdWriter(ctx, args[1:], stdout, stderr)
	default:
		missed, err = cmdBench(ctx, args, stdout, stderr)
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "halbench: %v\n", err)
		return exitMissed
	case missed:
		return exitMissed
	}
	return 0
}

// settings are what one benchmark run does; flags fill them.
type settings struct {
	gateway string // the gateway binary to start, without --hub-ws
	hubWS   string // an already-running gateway's WebSocket URL
	hubTCP  string // and its TCP URL
	token   string // a token of that gateway (admin, for fan-out writes)
	pid     int    // that gateway's process, for the resource figures

	rounds   int
	duration time.Duration // measured part of one round
	warmup   time.Duration // unmeasured start of each round
	clients  []int         // concurrent readers, one cell each
	writers  []int         // concurrent writers, one cell each

	watchers  int
	writeRate int
	fanout    time.Duration
	window    int // hal/write requests in flight at once

	idle         time.Duration
	idleClients  int
	idleAdapters int
	rssConns     int

	noFail bool
	only   map[string]bool // the sections to run (--only); nil: all
}

// sections are what --only may name, in the order they run.
var sections = []string{"idle", "rss", "reads", "writes", "fanout"}

// runs reports whether section is to be measured.
func (s *settings) runs(section string) bool { return s.only == nil || s.only[section] }

// quickSettings are those --quick changes, for a smoke test.
var quickSettings = map[string]string{
	"rounds":   "2",
	"duration": "500ms",
	"warmup":   "100ms",
	"fanout":   "2s",
	"idle":     "3s",
}

func parseFlags(args []string, stderr io.Writer) (*settings, error) {
	s := &settings{}
	fs := flag.NewFlagSet("halbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.gateway, "gateway", "bin/gateway", "the gateway `binary` to start (without --hub-ws/--hub-tcp)")
	fs.StringVar(&s.hubWS, "hub-ws", "", "WebSocket `URL` of an already-running gateway (ws://host:port/hal); its hub.limits must allow --watchers + 1 connections, "+
		"and the fan-out writes sim.led thousands of times, each one in its audit log")
	fs.StringVar(&s.hubTCP, "hub-tcp", "", "TCP `URL` of an already-running gateway (tcp://host:port)")
	fs.StringVar(&s.token, "token", "", "admin `token` of the running gateway")
	fs.IntVar(&s.pid, "pid", 0, "process id of the running gateway, for RSS and CPU (none: those are skipped)")
	fs.IntVar(&s.rounds, "rounds", 5, "rounds per figure; the median is reported")
	fs.DurationVar(&s.duration, "duration", 2*time.Second, "measured `duration` of one round")
	fs.DurationVar(&s.warmup, "warmup", 500*time.Millisecond, "unmeasured warm-up before each round")
	clients := fs.String("clients", "1,64", "concurrent hal/read clients, comma-separated `list`")
	writers := fs.String("writers", "1,64", "concurrent hal/write clients (TCP), comma-separated `list`")
	fs.IntVar(&s.watchers, "watchers", 250, "fan-out: watching clients")
	fs.IntVar(&s.writeRate, "write-rate", 1000, "fan-out: writes of sim.led a second")
	fs.DurationVar(&s.fanout, "fanout", 10*time.Second, "fan-out: how long the writer writes")
	fs.IntVar(&s.window, "write-window", 8, "fan-out: hal/write requests in flight at most")
	fs.DurationVar(&s.idle, "idle", 10*time.Second, "idle CPU: measuring window")
	fs.IntVar(&s.idleClients, "idle-clients", 100, "idle CPU: connected idle clients")
	fs.IntVar(&s.idleAdapters, "idle-adapters", 20, "idle CPU: idle adapters the gateway supervises (only for a gateway halbench starts)")
	fs.IntVar(&s.rssConns, "rss-conns", 100, "RSS: connections open while it is read")
	quick := fs.Bool("quick", false, "smoke test: 2 rounds of 0.5s, fan-out 2s, idle 3s (flags given win)")
	fs.BoolVar(&s.noFail, "no-fail", false, "exit 0 even when a target is missed")
	only := fs.String("only", "", "measure only these sections, comma-separated `list` of "+strings.Join(sections, ", ")+
		" (the others are reported skipped); none: all")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: halbench [flags]             start the gateway (--gateway) and measure it
       halbench --hub-ws URL --hub-tcp URL --token T [--pid N] [flags]
       halbench echo [--ws ADDR] [--tcp ADDR]   the echo server (halbench starts it itself)

It prints a markdown table of the figures, each beside the echo server's and its target,
and exits 1 when a target is missed.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "halbench: unexpected argument %q\n", fs.Arg(0))
		return nil, errUsage
	}
	if *quick {
		if err := applyQuick(fs); err != nil {
			return nil, err
		}
	}
	var err error
	if s.clients, err = parseInts(*clients); err != nil {
		fmt.Fprintf(stderr, "halbench: --clients: %v\n", err)
		return nil, errUsage
	}
	if s.writers, err = parseInts(*writers); err != nil {
		fmt.Fprintf(stderr, "halbench: --writers: %v\n", err)
		return nil, errUsage
	}
	if s.only, err = parseSections(*only); err != nil {
		fmt.Fprintf(stderr, "halbench: --only: %v\n", err)
		return nil, errUsage
	}
	if msg := s.check(); msg != "" {
		fmt.Fprintf(stderr, "halbench: %s\n", msg)
		return nil, errUsage
	}
	return s, nil
}

// applyQuick sets the quick values of the flags the command line did not
// give.
func applyQuick(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, v := range quickSettings {
		if given[name] {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return fmt.Errorf("--quick: set %s: %w", name, err)
		}
	}
	return nil
}

// parseSections parses --only: nil for none given (all run).
func parseSections(list string) (map[string]bool, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	only := map[string]bool{}
	for f := range strings.SplitSeq(list, ",") {
		name := strings.TrimSpace(f)
		if !slices.Contains(sections, name) {
			return nil, fmt.Errorf("%q is not a section (%s)", name, strings.Join(sections, ", "))
		}
		only[name] = true
	}
	return only, nil
}

func parseInts(list string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// check returns what is wrong with s, or "".
func (s *settings) check() string {
	switch {
	case (s.hubWS == "") != (s.hubTCP == ""):
		return "--hub-ws and --hub-tcp go together"
	case s.hubWS != "" && s.token == "":
		return "--hub-ws needs --token (an admin token: the fan-out writes sim.led)"
	case s.hubWS == "" && s.pid != 0:
		return "--pid is for a gateway given by --hub-ws/--hub-tcp"
	case s.rounds < 1, s.duration <= 0, s.warmup < 0:
		return "--rounds and --duration must be positive"
	case s.watchers < 1, s.writeRate < 1, s.fanout <= 0, s.window < 1:
		return "--watchers, --write-rate, --fanout and --write-window must be positive"
	case s.idle <= 0, s.idleClients < 0, s.idleAdapters < 0, s.rssConns < 1:
		return "--idle and --rss-conns must be positive"
	case s.hubWS != "" && s.idleAdapters > 0:
		return "--idle-adapters needs a gateway halbench starts (give --idle-adapters 0 with --hub-ws)"
	}
	return ""
}

// cmdBench runs every measurement and prints the report. missed reports
// a target that was missed.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) (missed bool, err error) {
	s, err := parseFlags(args, stderr)
	if err != nil {
		return false, err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	env, err := setUp(ctx, s, log)
	if err != nil {
		return false, err
	}
	defer env.close()
	rep, err := measureAll(ctx, s, env, log)
	if err != nil {
		return false, err
	}
	rep.command = "halbench " + strings.Join(args, " ")
	if len(os.Args) > 0 {
		rep.command = strings.Join(append([]string{os.Args[0]}, args...), " ")
	}
	rep.write(stdout)
	failed := rep.failed()
	for _, f := range failed {
		log.Warn("target missed", "figure", f)
	}
	return len(failed) > 0 && !s.noFail, nil
}
