package cli

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// cmdMCP is `gateway mcp`: an MCP server on standard input and output,
// the way Claude Desktop and its peers start a local server, that is an
// ordinary OpenHAL client of a gateway, local or on the LAN
// (docs/mcp.md). Standard output carries MCP only; the log goes to
// standard error, where MCP clients keep it.
func (a *app) cmdMCP(args []string, stdout, stderr io.Writer) error {
	fs := NewFlagSet("mcp", "[--hub URL|NAME | --state-dir DIR] [--token TOKEN] [--fingerprint SHA256] [--trust-announced] [--insecure]")
	f := clientFlags{env: a.env, fs: fs, hub: defaultHub, stateDir: DefaultStateDir()}
	if h := os.Getenv("GATEWAY_HUB"); h != "" {
		f.hub, f.hubGiven = h, true
	}
	fs.Var(givenFlag{&f.hub, &f.hubGiven}, "hub", "the gateway's `URL` (ws://, wss://, tcp://, tls:// or unix://), or its name on the LAN (gateway discover); default $GATEWAY_HUB, else the gateway running on the state directory, else "+defaultHub)
	fs.Var(givenFlag{&f.stateDir, &f.stateDirGiven}, "state-dir", "the `directory` of a gateway on this machine: the one running there is reached (where it listens), not its admin token")
	addTrustFlag(fs, &f.trustAnnounced)
	addInsecureFlag(fs, &f.insecure)
	fs.StringVar(&f.token, "token", "", "the agent's `token` (default $GATEWAY_TOKEN); never the admin token of the state directory")
	fs.StringVar(&f.fingerprint, "fingerprint", "", "for wss:// and tls://: the SHA-256 `fingerprint` of the gateway's certificate, as `gateway status` shows it on the gateway (default $GATEWAY_FINGERPRINT); a gateway not known yet is then recorded in the known-gateways file")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	tok := f.token
	if tok == "" {
		tok = os.Getenv("GATEWAY_TOKEN")
	}
	if tok == "" {
		// An agent with the operator's admin token would write high-risk
		// devices with no person's approval: it gets a token of its own.
		return Usagef(fs, "an agent's token is required (--token or $GATEWAY_TOKEN): make one with "+
			"`gateway token add --name NAME --kind agent --scope control_low`; the admin token is never used")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := f.pickHub(ctx); err != nil {
		return err
	}
	// Standard input carries MCP: nobody is asked about a gateway met
	// for the first time; --fingerprint or --trust-announced decide it.
	opt := f.options(tok)
	opt.ClientName = "gateway-mcp"
	first, err := halclient.Dial(ctx, f.hub, opt)
	if err != nil {
		if bad := f.badFlag(err); bad != nil {
			return bad
		}
		return clearTextHint(f.worded(err))
	}
	// The bridge's first dial is the connection just checked; the
	// approval line it suggests pins the certificate that one trusted.
	dial := func(ctx context.Context) (*halclient.Conn, error) {
		if c := first; c != nil {
			first = nil
			return c, nil
		}
		return halclient.Dial(ctx, f.hub, opt)
	}
	b, err := a.env.MCP(ctx, MCPOptions{
		Dial:         dial,
		Gateway:      cmp.Or(f.hubName, gatewayName(f.hub)),
		ConsoleURL:   consoleOfHub(f.hub),
		ApproveFlags: f.approveFlags(first.Fingerprint()),
		Version:      a.env.Version,
		Log:          log,
	})
	if err != nil {
		return f.worded(err)
	}
	defer b.Close()
	warnScope(log, b)
	log.Info("mcp: serving on stdio", "hub", f.hub)
	err = b.Serve(ctx)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil // the client closed standard input, or an interrupt
	}
	return err
}

// warnScope logs a token that writes high-risk devices by itself: an
// operator who meant an agent to ask should see it in the client's log.
func warnScope(log *slog.Logger, b MCPBridge) {
	if p := b.Principal(); p.Scope.AtLeast(openhal.ScopeControlHigh) {
		log.Warn("mcp: this token writes high-risk devices with no person's approval; an agent is usually given control_low",
			"principal", p.Name, "scope", p.Scope)
	}
}

// consoleOfHub is the console's address on the gateway a WebSocket URL
// names (the console shares the listener of /hal), "" for other
// transports.
func consoleOfHub(hub string) string {
	u, err := url.Parse(hub)
	if err != nil {
		return ""
	}
	switch u.Scheme {
	case "ws":
		return "http://" + u.Host + "/"
	case "wss":
		return "https://" + u.Host + "/"
	}
	return ""
}

// gatewayName names the gateway in resource URIs: the host of the hub's
// URL, or this machine's name when the gateway is on it (loopback, a Unix
// socket), as the gateway names itself on /mcp.
func gatewayName(hub string) string {
	u, err := url.Parse(hub)
	if err == nil && u.Scheme != "unix" {
		if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return u.Hostname()
		}
	}
	if name, err := os.Hostname(); err == nil {
		return name
	}
	return "localhost"
}
