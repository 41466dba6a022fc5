package main

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

	"github.com/openhal/gateway/discover"
)

// cmdDiscover is `gateway discover`: the gateways that announce
// themselves on the LAN (DNS-SD over multicast DNS), heard for --timeout.
func cmdDiscover(args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("discover", "[--json] [--timeout DURATION]")
	asJSON := fs.Bool("json", false, "machine-readable output: a JSON array of gateways")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to listen for answers")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return usagef(fs, "--timeout must be positive, got %s", *timeout)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	gws, err := discover.List(ctx, discover.LookupType)
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
func printGateways(w io.Writer, gws []discover.Gateway, waited time.Duration) {
	if len(gws) == 0 {
		fmt.Fprintf(w, "no gateway answered within %s (is its listener on loopback only? see docs/discovery.md)\n", waited)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADDRESSES\tURLS\tLEVEL\tFINGERPRINT")
	for _, g := range gws {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", g.Name, strings.Join(g.Addresses, ","), strings.Join(g.URLs, " "), g.Level, dash(g.Fingerprint))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
