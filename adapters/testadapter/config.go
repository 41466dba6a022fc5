//go:build unix

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"
)

// config is the behaviour the supervisor's tests script through the
// manifest's args. The zero value (no flag) is a correct adapter.
type config struct {
	name, version   string // answered instead of echoing initialize's adapter.name / version
	protocol        *int   // answered instead of the negotiated protocol
	unsupported     bool   // answer initialize with the reference -32022 frame
	handshakeError  bool   // answer initialize with -32000 "boom"
	handshakeDelay  time.Duration
	beforeHandshake []string // raw lines written on initialize, before its answer

	silent          bool
	noPong          bool
	pongDelay       time.Duration
	readDelay       time.Duration // device.read and device.write
	writeError      bool
	obeyCancel      bool
	noShutdownReply bool
	ignoreSIGTERM   bool
	exitAtStart     *int
	fork            []string // forkChild, forkSetsid or forkGrandchild, in order
	chaos           time.Duration
	chaosMode       string // chaosCrash, chaosHang or chaosAny
	probe           string
	script          []step
	values          map[string]json.RawMessage

	// Internal modes of the processes --fork starts.
	sleeper       bool
	sleeperParent bool
}

// Values of --fork.
const (
	forkChild      = "child"
	forkSetsid     = "setsid"
	forkGrandchild = "grandchild-setsid"
)

// parseFlags reads args (without the program name). Errors name the flag,
// so that a test with a typo in its manifest fails with a readable log.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{values: map[string]json.RawMessage{}, chaosMode: chaosAny}
	fs := flag.NewFlagSet("testadapter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.name, "name", "", "answer initialize with this name instead of echoing adapter.name")
	fs.StringVar(&c.version, "version", "", "answer initialize with this version instead of echoing adapter.version")
	fs.Func("protocol", "answer initialize with this protocol number, offered or not", intPtr(&c.protocol))
	fs.BoolVar(&c.unsupported, "unsupported", false, "answer initialize with the reference initialize_unsupported frame")
	fs.BoolVar(&c.handshakeError, "handshake-error", false, `answer initialize with error {-32000,"boom"}`)
	fs.DurationVar(&c.handshakeDelay, "handshake-delay", 0, "wait this long before answering initialize")
	fs.Func("before-handshake", "raw line written when initialize arrives, before its answer (repeatable)", func(s string) error {
		c.beforeHandshake = append(c.beforeHandshake, s)
		return nil
	})
	fs.BoolVar(&c.silent, "silent", false, "never write anything on stdout")
	fs.BoolVar(&c.noPong, "no-pong", false, "never answer ping")
	fs.DurationVar(&c.pongDelay, "pong-delay", 0, "answer ping after this long")
	fs.DurationVar(&c.readDelay, "read-delay", 0, "answer device.read and device.write after this long")
	fs.BoolVar(&c.writeError, "write-error", false, `answer device.write with error {-32010,"relay stuck",{"relay":1}}`)
	fs.BoolVar(&c.obeyCancel, "obey-cancel", false, "answer a cancelled, still unanswered request with -32024 at once")
	fs.BoolVar(&c.noShutdownReply, "no-shutdown-reply", false, "do not answer shutdown, and do not exit on it")
	fs.BoolVar(&c.ignoreSIGTERM, "ignore-sigterm", false, "ignore SIGTERM and never exit by itself (shutdown, stdin EOF)")
	fs.Func("exit-at-start", "exit with this code right after writing start.json", intPtr(&c.exitAtStart))
	fs.Func("fork", "after initialized, leave a sleeping process: child, setsid or grandchild-setsid (repeatable)", func(s string) error {
		switch s {
		case forkChild, forkSetsid, forkGrandchild:
			c.fork = append(c.fork, s)
			return nil
		}
		return fmt.Errorf("want %s, %s or %s", forkChild, forkSetsid, forkGrandchild)
	})
	fs.DurationVar(&c.chaos, "chaos", 0, "crash or hang once, at a random moment within this long after initialized")
	fs.Func("chaos-mode", "what --chaos does: crash, hang or any (default any)", func(s string) error {
		switch s {
		case chaosCrash, chaosHang, chaosAny:
			c.chaosMode = s
			return nil
		}
		return fmt.Errorf("want %s, %s or %s", chaosCrash, chaosHang, chaosAny)
	})
	fs.StringVar(&c.probe, "probe", "", "try to read this file and say in start.json whether it could")
	fs.Func("script", "JSON array of steps run after initialized", func(s string) error {
		steps, err := parseScript([]byte(s))
		c.script = steps
		return err
	})
	fs.Func("values", `JSON object of initial device values, e.g. {"temp":21.5}`, func(s string) error {
		return json.Unmarshal([]byte(s), &c.values)
	})
	fs.BoolVar(&c.sleeper, "sleeper", false, "internal: be a process --fork leaves behind")
	fs.BoolVar(&c.sleeperParent, "sleeper-parent", false, "internal: start a setsid sleeper, print its pid, exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.values == nil { // --values null
		c.values = map[string]json.RawMessage{}
	}
	return c, nil
}

// intPtr is a flag.Func setter for an int whose absence matters.
func intPtr(p **int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		*p = &n
		return nil
	}
}
