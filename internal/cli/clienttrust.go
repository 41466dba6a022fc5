package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openhal/gateway/halclient"
)

// The client commands and `gateway mcp` trust a gateway's certificate the
// way SSH trusts a host key (openhal-0.1 §2, docs/discovery.md): halclient
// checks it in the TLS handshake against the user's known-gateways file,
// and a gateway met for the first time is decided here, by
// --fingerprint, --trust-announced or a person at a terminal, then
// recorded. Plain transports off loopback need --insecure.

// addInsecureFlag adds --insecure to a client command.
func addInsecureFlag(fs *flag.FlagSet, insecure *bool) {
	fs.BoolVar(insecure, "insecure", false, "allow a plain transport (ws://, tcp://) to a host off loopback, or to a gateway found by name that announces no TLS: the token then crosses the network in clear")
}

// trustOptions fills the trust part of a client's options: the
// known-gateways file, what the gateway was found as, and who decides a
// gateway met for the first time (ask, at a terminal; nil: nobody).
func (f *clientFlags) trustOptions(opt *halclient.Options, ask *prompter) {
	if file, err := halclient.KnownGatewaysFile(); err == nil {
		opt.KnownGateways = file
	}
	opt.Name = f.hubName
	opt.Insecure = f.insecure
	opt.FirstUse = func(ctx context.Context, p halclient.Presented) error { return f.firstUse(ctx, p, ask) }
}

// firstUse decides a gateway that the known-gateways file does not know,
// that no --fingerprint pins and no CA vouches for: the announcement's
// word with --trust-announced, else the person's at a terminal.
func (f *clientFlags) firstUse(ctx context.Context, p halclient.Presented, ask *prompter) error {
	switch {
	case f.trustAnnounced && f.announced != "" && p.Fingerprint == f.announced:
		return nil
	case f.trustAnnounced && f.announced != "":
		return fmt.Errorf("the gateway at %s presented a certificate with fingerprint %s, but %q is announced with %s: refused, nothing was sent (something on the LAN answers in its name)",
			p.URL, p.Fingerprint, f.hubName, f.announced)
	case ask != nil && ask.terminal():
		return ask.confirm(ctx, p, f.announced)
	}
	return f.howToTrust(p)
}

// howToTrust is the refusal of a gateway met for the first time with
// nobody to ask: what to compare, and the flags that trust it.
func (f *clientFlags) howToTrust(p halclient.Presented) error {
	id := "its certificate names no gateway id"
	if p.ID != "" {
		id = "id " + p.ID
	}
	how := "--fingerprint " + p.Fingerprint
	if f.hubName != "" && f.announced != "" {
		how += ", or --trust-announced to take the LAN announcement's word"
	}
	return fmt.Errorf("the gateway at %s (%s) is not known yet, and there is no terminal to ask: its certificate's SHA-256 fingerprint is %s. "+
		"Compare it with the one `gateway status` shows on the gateway itself (or its console), then run again with %s, "+
		"or once on a terminal to answer yes; it is then recorded in %s. Nothing was sent",
		p.URL, id, p.Fingerprint, how, p.File)
}

// clearTextHint adds to a refused plain URL the flag that allows it.
func clearTextHint(err error) error {
	var ct *halclient.ClearTextError
	if errors.As(err, &ct) {
		return fmt.Errorf("%w (give --insecure to send it in clear anyway)", err)
	}
	return err
}

// prompter asks a person at a terminal whether to trust a gateway, as
// ssh asks about a host key it does not know.
type prompter struct {
	in  *os.File
	out io.Writer
	// hold stops the command's timeout while the person is asked.
	hold func() (resume func())
}

func (p *prompter) terminal() bool { return isTerminal(p.in) }

// confirm shows the gateway and asks; only "yes" trusts it.
func (p *prompter) confirm(ctx context.Context, g halclient.Presented, announced string) error {
	fmt.Fprintf(p.out, "The gateway at %s is not known yet.\n", g.URL)
	if g.Name != "" {
		fmt.Fprintf(p.out, "  name:        %s\n", g.Name)
	}
	if g.ID != "" {
		fmt.Fprintf(p.out, "  id:          %s\n", g.ID)
	} else {
		fmt.Fprintf(p.out, "  id:          none (a certificate made before gateway ids; filed under %s)\n", g.Addr)
	}
	fmt.Fprintf(p.out, "  fingerprint: SHA-256 %s\n", g.Fingerprint)
	switch {
	case announced == g.Fingerprint:
		fmt.Fprintf(p.out, "  (the same as announced on the LAN, which anyone there could have announced)\n")
	case announced != "":
		fmt.Fprintf(p.out, "  NOT the fingerprint announced on the LAN, %s\n", announced)
	}
	fmt.Fprintf(p.out, "Compare it with the one `gateway status` shows on the gateway itself (or its console).\n")
	fmt.Fprintf(p.out, "Trust it, and record it in %s (yes/no)? ", g.File)
	defer p.hold()()
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(p.in).ReadString('\n')
		answer <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case a := <-answer:
		if a == "yes" {
			return nil
		}
		return fmt.Errorf("the gateway at %s is not trusted (answered %q, not yes): nothing was sent", g.URL, a)
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return fmt.Errorf("no answer: %w", ctx.Err())
	}
}
