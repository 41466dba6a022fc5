package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/openhal/gateway/openhal/gatewayext"
)

// cmdDiscover is `gateway discover`: the gateways that announce
// themselves on the LAN (DNS-SD over multicast DNS), heard for --timeout;
// with --watch, each as it comes and goes, until interrupted.
func (a *app) cmdDiscover(args []string, stdout, _ io.Writer) error {
	fs := NewFlagSet("discover", "[--json] [--timeout DURATION] [--watch]")
	asJSON := fs.Bool("json", false, "machine-readable output: a JSON array of gateways (with --watch: one event a line)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to listen for answers (with --watch: 0, until interrupted)")
	watch := fs.Bool("watch", false, "print gateways as they are heard and withdrawn")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *watch && !flagSet(fs, "timeout") {
		*timeout = 0
	}
	if *timeout < 0 || *timeout == 0 && !*watch {
		return Usagef(fs, "--timeout must be positive, got %s", *timeout)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	if *watch {
		return a.env.LAN.Watch(ctx, func(g gatewayext.Gateway, gone bool) { printEvent(stdout, g, gone, *asJSON) })
	}
	gws, err := a.env.LAN.List(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(gws)
	}
	printGateways(stdout, gws, *timeout)
	return nil
}

// printGateways writes the table of gateways found, or says none
// answered.
func printGateways(w io.Writer, gws []gatewayext.Gateway, waited time.Duration) {
	if len(gws) == 0 {
		fmt.Fprintf(w, "no gateway answered within %s (is its listener on loopback only? see docs/discovery.md)\n", waited)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADDRESSES\tURLS\tCONSOLE\tLEVEL\tFINGERPRINT")
	for _, g := range gws {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", g.Name, strings.Join(g.Addresses, ","), strings.Join(g.URLs, " "), dash(g.ConsoleURL), g.Level, dash(g.Fingerprint))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printEvent writes one --watch line: "+ NAME URLS" for a gateway heard
// (again when what it announces changed), "- NAME" for one withdrawn, or
// the event as JSON.
func printEvent(w io.Writer, g gatewayext.Gateway, gone, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(struct {
			Gone    bool               `json:"gone"`
			Gateway gatewayext.Gateway `json:"gateway"`
		}{gone, g})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	if gone {
		fmt.Fprintf(w, "- %s\n", g.Name)
		return
	}
	fmt.Fprintf(w, "+ %s %s console=%s level=%s fingerprint=%s\n", g.Name, strings.Join(g.URLs, " "), dash(g.ConsoleURL), g.Level, dash(g.Fingerprint))
}
