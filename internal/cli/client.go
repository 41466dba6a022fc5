package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// The client commands (DESIGN.md, "Command line contract") talk to a
// running gateway as any OpenHAL client would:
//
//	gateway status [flags]             one screen: the stop, devices, confirmations, adapters, clients (status.go)
//	gateway devices [flags]            a table of the devices, their values with units, and labels
//	gateway read ID [-v] [flags]       a device's value
//	gateway write ID VALUE [flags]     set a value; VALUE is JSON if it parses, else a string
//	gateway watch [DEVICE...] [flags]  values and events as they happen, until interrupted
//
// While the emergency stop is engaged, status, devices, watch and confirm
// list print it first (stopBanner), except with --json.
//
// Common flags: --hub URL, --token, --fingerprint, --state-dir, --json,
// and --timeout except for watch.

// defaultHub is the local gateway's WebSocket endpoint.
const defaultHub = "ws://127.0.0.1:7750/hal"

// clientFlags are the flags every client command shares.
type clientFlags struct {
	hub         string
	token       string
	fingerprint string
	stateDir    string
	json        bool
	// hubGiven: --hub or $GATEWAY_HUB named the hub, or chooseHub settled
	// it; stateDirGiven: --state-dir was given.
	hubGiven, stateDirGiven bool
	// hubOfStateDir: chooseHub took the hub from the state directory's
	// record, not from --hub or $GATEWAY_HUB.
	hubOfStateDir bool
	timeout       time.Duration

	// hubName is the --hub NAME resolveHub (hubname.go) found, with
	// trustAnnounced, its --trust-announced, and announced the
	// fingerprint it announced.
	hubName        string
	trustAnnounced bool
	announced      string
	// insecure is --insecure: plain transports off loopback allowed.
	insecure bool
	// ask asks a person at a terminal about a gateway met for the first
	// time (clienttrust.go); nil: nobody is asked (gateway mcp).
	ask *prompter
	// hold stops --timeout while a person is asked, and returns what
	// starts it again; nil without a timeout.
	hold func() (resume func())
	// env finds the gateway of a state directory or of a name.
	env Env
	// fs is the command's flags, whose usage a wrong --hub or
	// --fingerprint prints (flagerr.go).
	fs *flag.FlagSet
}

// newClientFlags returns a command's FlagSet with the common flags, and
// --timeout for a command that ends by itself (not watch). The FlagSet
// prints nothing itself (usage.go).
func (a *app) newClientFlags(name, synopsis string, timed bool, stderr io.Writer) (*flag.FlagSet, *clientFlags) {
	f := &clientFlags{env: a.env}
	f.ask = &prompter{in: os.Stdin, out: stderr, hold: f.holdTimeout}
	fs := NewFlagSet(name, synopsis)
	f.fs = fs
	// Registered empty, so that the usage shows no one default: which hub
	// is chosen when none is given is chooseHub's.
	fs.Var(givenFlag{&f.hub, &f.hubGiven}, "hub", "the hub's `URL` (ws://, wss://, tcp://, tls:// or unix://) or a gateway's name on the LAN (gateway discover); default $GATEWAY_HUB, else the gateway running on the state directory, else "+defaultHub)
	f.hub = defaultHub
	if h := os.Getenv("GATEWAY_HUB"); h != "" {
		f.hub, f.hubGiven = h, true
	}
	addTrustFlag(fs, &f.trustAnnounced)
	addInsecureFlag(fs, &f.insecure)
	fs.StringVar(&f.token, "token", "", "the access `token` (default $GATEWAY_TOKEN, else admin.token in the state directory)")
	fs.StringVar(&f.fingerprint, "fingerprint", "", "for wss:// and tls://: the SHA-256 `fingerprint` of the gateway's certificate, as `gateway status` shows it on the gateway (default $GATEWAY_FINGERPRINT); a gateway not known yet is then recorded in the known-gateways file")
	f.stateDir = DefaultStateDir()
	fs.Var(givenFlag{&f.stateDir, &f.stateDirGiven}, "state-dir", "the gateway's state `directory`, where admin.token is and the running gateway says where it listens")
	fs.BoolVar(&f.json, "json", false, "machine-readable output")
	f.timeout = 10 * time.Second
	if timed {
		fs.Var(positiveDuration{&f.timeout}, "timeout", "how long to wait for the hub")
	}
	return fs, f
}

// parseClientArgs parses flags and positional arguments in any order.
// Negative numbers are values, not flags (`write sim.fan -5` is not a
// flag "-5"), and everything after "--" is positional.
func parseClientArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case a == "-" || !strings.HasPrefix(a, "-") || isNumber(a):
			pos = append(pos, a)
		default:
			flags = append(flags, a)
			if takesValue(fs, a) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	if err := ParseFlags(fs, flags); err != nil {
		return nil, err
	}
	return pos, nil
}

// parseNoArgs parses the flags of a command that takes no positional
// argument: one given is a usage error, as WantArgs says it.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseClientArgs(fs, args)
	if err != nil {
		return err
	}
	return WantArgs(fs, pos, 0)
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// takesValue reports whether a flag argument ("-x", "--x", not "--x=v")
// takes the next argument as its value.
func takesValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	fl := fs.Lookup(name)
	if fl == nil {
		return false
	}
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// resolveToken finds the token: --token, $GATEWAY_TOKEN, or admin.token in
// the state directory when this user may read it. from says where it came
// from, or why none was found.
func (f *clientFlags) resolveToken() (tok, from string) {
	if f.token != "" {
		return f.token, "--token"
	}
	if t := os.Getenv("GATEWAY_TOKEN"); t != "" {
		return t, "$GATEWAY_TOKEN"
	}
	if f.stateDir == "" {
		return "", "no --state-dir to find admin.token in"
	}
	path := filepath.Join(f.stateDir, "admin.token")
	b, err := os.ReadFile(path)
	switch {
	case err == nil && strings.TrimSpace(string(b)) != "":
		return strings.TrimSpace(string(b)), path
	case err == nil:
		return "", path + " is empty"
	case errors.Is(err, fs.ErrNotExist):
		return "", "no admin.token in " + f.stateDir
	case errors.Is(err, fs.ErrPermission):
		return "", "no permission to read " + path
	}
	return "", err.Error()
}

// options are the client's options: the token, the certificate's
// fingerprint and the trust in gateways (clienttrust.go).
// $GATEWAY_FINGERPRINT applies to TLS URLs only, so that it may stay set
// while --hub names another transport; --fingerprint with a URL without
// TLS is refused by halclient.
func (f *clientFlags) options(tok string) halclient.Options {
	opt := halclient.Options{Token: tok, ClientName: "gateway", ClientVersion: f.env.Version, Fingerprint: f.fingerprint}
	if opt.Fingerprint == "" && (strings.HasPrefix(f.hub, "wss://") || strings.HasPrefix(f.hub, "tls://")) {
		opt.Fingerprint = os.Getenv("GATEWAY_FINGERPRINT")
	}
	f.trustOptions(&opt, f.ask)
	return opt
}

// dial connects to the hub and explains a missing or refused token.
func (f *clientFlags) dial(ctx context.Context) (*halclient.Conn, error) {
	if err := f.pickHub(ctx); err != nil {
		return nil, err
	}
	tok, from := f.resolveToken()
	c, err := halclient.Dial(ctx, f.hub, f.options(tok))
	if err == nil {
		return c, nil
	}
	if bad := f.badFlag(err); bad != nil {
		return nil, bad
	}
	err = clearTextHint(f.worded(err))
	var he *halclient.HubError
	switch {
	case errors.As(err, &he) && he.Reason() == "token_missing":
		return nil, fmt.Errorf("%w; give --token or set $GATEWAY_TOKEN (%s)", err, from)
	case errors.As(err, &he) && he.Code() == openhal.CodeUnauthorized && strings.HasSuffix(from, "admin.token"):
		return nil, fmt.Errorf("%w (the token from %s)", err, from)
	}
	return nil, f.explain(err)
}

// worded makes a hub's error answer in err read as a sentence alone,
// without the code's name and reason that repeat it ("confirmation c-3 is
// already approved", not "... (CONFIRMATION_CLOSED): confirmation_closed"),
// unless --json asked for the machine words too. It must run before err
// is wrapped: fmt.Errorf fixes the text.
func (f *clientFlags) worded(err error) error {
	var he *halclient.HubError
	if errors.As(err, &he) {
		he.Plain = !f.json
	}
	return err
}

// explain rewords a timeout: the context's own words name neither the hub
// nor the time waited.
func (f *clientFlags) explain(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer from the hub at %s within %s", f.hub, f.timeout)
	}
	return err
}

// context ends on an interrupt, and after --timeout when timed. The
// timeout stands still while a person is asked whether to trust a
// gateway (holdTimeout): a person may take longer than a hub.
func (f *clientFlags) context(timed bool) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if !timed {
		return ctx, stop
	}
	tctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(f.timeout, func() { cancel(context.DeadlineExceeded) })
	f.hold = func() func() {
		if !t.Stop() {
			return func() {}
		}
		return func() { t.Reset(f.timeout) }
	}
	return timeoutContext{tctx}, func() { t.Stop(); cancel(nil); stop() }
}

// holdTimeout stops --timeout until resume is called.
func (f *clientFlags) holdTimeout() (resume func()) {
	if f.hold == nil {
		return func() {}
	}
	return f.hold()
}

// timeoutContext ends with context.DeadlineExceeded when its timer
// cancelled it (its cause), as context.WithTimeout's would.
type timeoutContext struct{ context.Context }

func (c timeoutContext) Err() error {
	err := c.Context.Err()
	if err != nil && errors.Is(context.Cause(c.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

// call makes one request and returns the raw result, with an error answer
// turned into a sentence.
func (f *clientFlags) call(ctx context.Context, c *halclient.Conn, method string, params any, dev string) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.Call(ctx, method, params, &raw); err != nil {
		return nil, f.explain(f.worded(halclient.Describe(err, method, dev)))
	}
	return raw, nil
}

// callOnce dials the hub, makes one request within --timeout, and hangs
// up: what every one-shot client command does.
func (f *clientFlags) callOnce(method string, params any, dev string) (json.RawMessage, error) {
	return f.callOnceThen(method, params, dev, nil)
}

// callOnceThen is callOnce, and after an answer calls then (when not
// nil) on the same connection, within the same --timeout: what the
// answer's printing needs besides (a device's units).
func (f *clientFlags) callOnceThen(method string, params any, dev string, then func(context.Context, *halclient.Conn)) (json.RawMessage, error) {
	ctx, stop := f.context(true)
	defer stop()
	c, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	raw, err := f.call(ctx, c, method, params, dev)
	if err == nil && then != nil {
		then(ctx, c)
	}
	return raw, err
}

// printJSON prints a raw result on one line.
func printJSON(w io.Writer, raw json.RawMessage) error {
	_, err := fmt.Fprintf(w, "%s\n", raw)
	return err
}

// cmdDevices lists the devices: a table, or the hub's answer with --json.
func (a *app) cmdDevices(args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("devices", "[flags]", true, stderr)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	ctx, stop := f.context(true)
	defer stop()
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close() // the table asks for the last known values on it too
	raw, err := f.call(ctx, c, openhal.MethodDevicesList, nil, "")
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(stdout, raw)
	}
	var res openhal.DevicesListResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("decode the device list: %w", err)
	}
	values := knownValues(ctx, c, res.Devices)
	printStopBanner(stdout, c.Init().Stopped)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tACCESS\tRISK\tSTATE\tVALUE\tLABEL")
	for i, d := range res.Devices {
		state := string(d.State)
		if d.Fault != "" {
			state += " (" + d.Fault + ")"
		}
		state += noSafeMark(d)
		label := oneLine(d.Label)
		if label == "" {
			label = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.Kind, d.Access, d.Risk, state, values[i], label)
	}
	return tw.Flush()
}

// formatValue writes a value as JSON, so that the string "true" and the
// boolean true look different, as they do to `gateway write`.
func formatValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// rawValue is a hal/read or hal/write answer with the value kept as sent.
type rawValue struct {
	Status       string                  `json:"status"`
	Device       string                  `json:"device"`
	Value        json.RawMessage         `json:"value"`
	TS           time.Time               `json:"ts"`
	Seq          uint64                  `json:"seq"`
	DevSeq       uint64                  `json:"devSeq"`
	Reply        json.RawMessage         `json:"reply"`
	Confirmation *halclient.Confirmation `json:"confirmation"`
}

// cmdRead prints a device's value; -v adds its ts and seq, --json prints
// the hub's answer.
func (a *app) cmdRead(args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("read", "ID [-v] [flags]", true, stderr)
	verbose := fs.Bool("v", false, "also print the value's timestamp and seq")
	pos, err := parseClientArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, pos, 1, "device id"); err != nil {
		return err
	}
	id := pos[0]
	var schema device.Schema
	raw, err := f.callOnceThen(openhal.MethodRead, openhal.ReadParams{Device: id}, id, func(ctx context.Context, c *halclient.Conn) {
		if !f.json {
			schema = deviceSchema(ctx, c, id)
		}
	})
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(stdout, raw)
	}
	var v rawValue
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("decode the value of %s: %w", id, err)
	}
	text := rawWithUnit(schema, v.Value)
	if *verbose {
		_, err = fmt.Fprintf(stdout, "%s (ts %s, %s)\n", text, v.TS.Format(openhal.TimeFormat), seqNote(v.Seq, v.DevSeq))
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", text)
	return err
}

// parseValue reads VALUE as JSON when it parses (true, 42, {"a":1},
// "quoted") and as a string otherwise (on, MEAS?).
func parseValue(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(strings.TrimSpace(s))
	}
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

// cmdWrite sets a device's value and prints what the hub did.
func (a *app) cmdWrite(args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("write", "ID VALUE [--reason TEXT] [flags]", true, stderr)
	reason := fs.String("reason", "", "why, for the audit log and whoever approves a confirmation")
	reply := fs.Bool("reply", false, "serial devices: wait for the instrument's answer line and print it; no answer is an error")
	within := fs.Duration("reply-within", defaultReplyWithin, "serial devices: wait this long at most for the instrument's answer, and print it if one came (0: do not wait)")
	pos, err := parseClientArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, pos, 2, "device id", "value"); err != nil {
		return err
	}
	if *within < 0 || *within > 5*time.Second {
		return Usagef(fs, "--reply-within %s: want 0 to 5s", *within)
	}
	id, value := pos[0], parseValue(pos[1])
	params := openhal.WriteParams{Device: id, Value: value, Reason: *reason, Reply: *reply}
	if ms := within.Milliseconds(); ms > 0 && !*reply {
		params.ReplyWithinMs = &ms
	}
	var schema device.Schema
	units := func(ctx context.Context, c *halclient.Conn) {
		if !f.json {
			schema = deviceSchema(ctx, c, id)
		}
	}
	raw, err := f.callOnceThen(openhal.MethodWrite, params, id, units)
	if params.ReplyWithinMs != nil && unknownParam(err, "replyWithinMs") {
		// A gateway from before replyWithinMs refuses the param before
		// anything reaches the device: send the write as it knows it.
		params.ReplyWithinMs = nil
		raw, err = f.callOnceThen(openhal.MethodWrite, params, id, units)
	}
	if err != nil {
		return withStringHint(err, pos[1], value)
	}
	if f.json {
		return printJSON(stdout, raw)
	}
	var r rawValue
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("decode the answer to the write of %s: %w", id, err)
	}
	return printWrite(stdout, id, value, schema, r, time.Now(), f.approveFlags(""))
}

// printWrite says what became of a write: the value applied with its
// unit, or the request it became, until when (local time) it waits, and
// the line that approves it (approve: its flags, approveFlags).
func printWrite(w io.Writer, id string, value json.RawMessage, schema device.Schema, r rawValue, now time.Time, approve string) error {
	switch {
	case r.Status == openhal.StatusPending && r.Confirmation != nil:
		cf := r.Confirmation
		_, err := fmt.Fprintf(w, "%s = %s is pending: confirmation %s waits for an admin until %s (%s)\n",
			id, rawWithUnit(schema, value), cf.ID, untilWords(cf.ExpiresAt, now), strings.TrimSpace("gateway confirm approve "+cf.ID+" "+approve))
		return err
	case r.Status != openhal.StatusApplied:
		_, err := fmt.Fprintf(w, "%s = %s: %s\n", id, rawWithUnit(schema, value), r.Status)
		return err
	}
	if _, err := fmt.Fprintf(w, "%s = %s (%s)\n", id, rawWithUnit(schema, r.Value), seqNote(r.Seq, r.DevSeq)); err != nil {
		return err
	}
	if len(r.Reply) > 0 && string(r.Reply) != "null" {
		_, err := fmt.Fprintf(w, "%s answered %s\n", id, r.Reply)
		return err
	}
	return nil
}

// defaultReplyWithin is how long `write` waits for a line instrument's
// answer unless told: long enough for an instrument's quick answer
// ("ERR unknown command"), short enough not to be noticed after a
// command that gets none.
const defaultReplyWithin = 500 * time.Millisecond

// unknownParam reports whether err is the hub's refusal of a param it
// does not know.
func unknownParam(err error, param string) bool {
	var he *halclient.HubError
	return errors.As(err, &he) && he.Code() == openhal.CodeInvalidParams && he.Reason() == "unknown_param" && he.Param() == param
}

// withStringHint adds to a refusal of a value that parsed as JSON (42,
// true) by a device that wants a string how to send it as one.
func withStringHint(err error, arg string, value json.RawMessage) error {
	var he *halclient.HubError
	if !errors.As(err, &he) || he.Reason() != "wrong_type" || !strings.Contains(err.Error(), "want a string") ||
		strings.HasPrefix(string(value), `"`) {
		return err
	}
	quoted, _ := json.Marshal(arg)
	return fmt.Errorf("%w; to send it as a string, quote it: '%s'", err, quoted)
}

// cmdWatch prints one line per event until interrupted, each starting
// with its time, values with their units. With --json it prints the hub's
// notifications as received, one JSON object per line, and the values
// read on each (re)connection as hal/value objects too, so that a script
// reading only standard output knows every current value; connection
// events, the stop banner and gaps go to standard error. DEVICE... keeps
// to those devices (and to the events of no device: the stop, gaps).
func (a *app) cmdWatch(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return a.runWatch(ctx, args, stdout, stderr)
}

// runWatch is cmdWatch until ctx ends.
func (a *app) runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("watch", "[DEVICE...] [flags]", false, stderr)
	pos, err := parseClientArgs(fs, args)
	if err != nil {
		return err
	}
	only, err := watchFilter(fs, pos, stderr)
	if err != nil {
		return err
	}
	if err := f.pickHub(ctx); err != nil {
		return err
	}
	tok, from := f.resolveToken()
	opt := f.options(tok)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &watchPrinter{url: f.hub, json: f.json, out: stdout, status: stdout, only: only, now: time.Now, cancel: cancel}
	if f.json {
		p.status = stderr
	}
	err = halclient.Watch(ctx, f.hub, opt, p.event)
	if bad := f.badFlag(err); bad != nil {
		return bad
	}
	err = clearTextHint(f.worded(err))
	var he *halclient.HubError
	switch {
	case p.err != nil:
		return p.err // set before cancel, read after Watch returned
	case ctx.Err() != nil:
		return nil // interrupted: the normal end
	case errors.As(err, &he) && he.Reason() == "token_missing":
		return fmt.Errorf("%w; give --token or set $GATEWAY_TOKEN (%s)", err, from)
	}
	return err
}

// watchPrinter turns watch events into lines.
type watchPrinter struct {
	url    string
	json   bool
	out    io.Writer // values and notifications
	status io.Writer // connection events
	now    func() time.Time

	only    map[string]bool              // DEVICE...: nil for every device
	devs    map[string]device.Descriptor // the devices listed, for their units
	listed  bool                         // the first device list was checked against only
	stopped *openhal.StopInfo            // the stop in force, as last heard
	held    []heldLine                   // lines before the first device list (hold)
	err     error                        // why the watch ends (an unknown DEVICE)
	cancel  func()                       // ends the watch after err is set
}

func (p *watchPrinter) event(e halclient.WatchEvent) {
	if p.err != nil || !p.wanted(&e) {
		return
	}
	defer p.track(e)
	if p.json {
		if n := e.Notification; n != nil {
			if b, err := jsonrpc.AppendNotification(nil, n.Method, n.Params); err == nil {
				fmt.Fprintf(p.out, "%s\n", b)
			}
			return
		}
		if e.Kind == halclient.EventValue && e.Value != nil {
			// Read in a resync: printed in the shape of hal/value, so
			// that the stream alone tells every current value.
			if b, err := jsonrpc.AppendNotification(nil, openhal.NotifyValue, e.Value); err == nil {
				fmt.Fprintf(p.out, "%s\n", b)
			}
			return
		}
	}
	if line := p.line(e); line != "" {
		w := p.status
		if e.Kind == halclient.EventValue || e.Kind == halclient.EventNotification {
			w = p.out
		}
		p.println(w, watchStamp(p.stamp(e))+" "+line)
	}
	if e.Kind == halclient.EventConnected || e.Kind == halclient.EventRestarted {
		p.connectedStop(e.Init.Stopped)
	}
}

func (p *watchPrinter) line(e halclient.WatchEvent) string {
	switch e.Kind {
	case halclient.EventConnected:
		in := e.Init
		if e.Reconnected {
			return fmt.Sprintf("reconnected to %s (same hub run %s)", p.url, in.BootID)
		}
		return fmt.Sprintf("connected to %s: %s %s (run %s) as %s %s, scope %s",
			p.url, in.HubInfo.Name, in.HubInfo.Version, in.BootID, in.Principal.Kind, in.Principal.Name, in.Principal.Scope)
	case halclient.EventRestarted:
		return fmt.Sprintf("hub restarted (new run %s); values read again", e.Init.BootID)
	case halclient.EventDevices:
		return fmt.Sprintf("%d %s", len(e.Devices), plural(uint64(len(e.Devices)), "device", "devices"))
	case halclient.EventValue:
		if e.Resync {
			return fmt.Sprintf("%s = %s (%s, current)", e.Device, p.valueText(e.Device, e.Value.Value), seqNote(e.Value.Seq, e.Value.DevSeq))
		}
		return fmt.Sprintf("%s = %s (%s)", e.Device, p.valueText(e.Device, e.Value.Value), seqNote(e.Value.Seq, e.Value.DevSeq))
	case halclient.EventReadFailed:
		return fmt.Sprintf("%s: cannot read: %v", e.Device, e.Err)
	case halclient.EventMissed:
		s := fmt.Sprintf("missed %d %s", e.Missed, plural(e.Missed, "value", "values"))
		if e.Device != "" {
			s += " of " + e.Device
		}
		if e.Reconnected {
			s += " while disconnected"
		}
		return s
	case halclient.EventDropped:
		return fmt.Sprintf("dropped %d %s: this watch fell behind", e.Dropped, plural(e.Dropped, "notification", "notifications"))
	case halclient.EventNotification:
		if e.Notification.Method == openhal.NotifyStopped {
			return stoppedLine(e.Notification.Params, p.stopped != nil)
		}
		return notificationLine(*e.Notification)
	case halclient.EventDisconnected:
		return fmt.Sprintf("disconnected: %v; retrying in %s", e.Err, e.Retry.Round(time.Millisecond))
	}
	return ""
}

func plural(n uint64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// notificationLine says what a notification other than hal/value means.
// One it does not know, or cannot decode, is printed as received.
func notificationLine(n halclient.Notification) string {
	var p struct {
		Device       json.RawMessage         `json:"device"`
		State        string                  `json:"state"`
		Fault        string                  `json:"fault"`
		Value        json.RawMessage         `json:"value"`
		Principal    openhal.Principal       `json:"principal"`
		Rule         string                  `json:"rule"`
		Reason       string                  `json:"reason"`
		Confirmation *halclient.Confirmation `json:"confirmation"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil {
		return fmt.Sprintf("%s %s", n.Method, n.Params)
	}
	var id string
	var desc device.Descriptor
	if json.Unmarshal(p.Device, &id) != nil && json.Unmarshal(p.Device, &desc) == nil {
		id = desc.ID
	}
	who := strings.TrimSpace(p.Principal.Kind + " " + p.Principal.Name)
	switch {
	case n.Method == openhal.NotifyDeviceState:
		s := fmt.Sprintf("%s: state %s", id, p.State)
		if p.Fault != "" {
			s += " (" + p.Fault + ")"
		}
		return s
	case n.Method == openhal.NotifyDeviceAdded:
		return fmt.Sprintf("device added: %s (%s, %s)", id, desc.Kind, desc.Access)
	case n.Method == openhal.NotifyDeviceRemoved:
		return fmt.Sprintf("device removed: %s (%s)", id, p.Reason)
	case n.Method == openhal.NotifyBlocked:
		return fmt.Sprintf("blocked: %s = %s from %s by rule %s: %s", id, p.Value, who, p.Rule, p.Reason)
	case n.Method == openhal.NotifyStopped:
		return stoppedLine(n.Params, false)
	case n.Method == openhal.NotifyResumed:
		return fmt.Sprintf("emergency stop lifted by %s: writes are accepted again", who)
	case p.Confirmation != nil && (n.Method == openhal.NotifyConfirmationRequested || n.Method == openhal.NotifyConfirmationResolved):
		cf := p.Confirmation
		s := fmt.Sprintf("confirmation %s %s: %s = %s by %s %s", cf.ID, cf.Status, cf.Device, formatValue(cf.Value), cf.RequestedBy.Kind, cf.RequestedBy.Name)
		if cf.SupersededBy != nil {
			s += ", superseded by " + supersededText(*cf.SupersededBy)
		}
		return s
	}
	return fmt.Sprintf("%s %s", n.Method, n.Params)
}
