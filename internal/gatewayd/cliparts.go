package gatewayd

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/discovery"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/internal/mcpbridge"
	"github.com/openhal/gateway/internal/statedir"
	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/internal/supervisor/stderrlog"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// What the command line needs of the gateway's own packages (cli.Env),
// in its terms: the server's packages read and write the state
// directory's files, with their formats and locks, for the commands as
// for the server.

// auditDir is the audit log's directory in the state directory.
func auditDir(stateDir string) string { return filepath.Join(stateDir, "audit") }

// stateDirs are the state directories of cli.StateDir.
type stateDirs struct{}

func (stateDirs) Running(dir string) (hubs []string, fingerprint string, err error) {
	r, err := statedir.Find(dir)
	switch {
	case errors.Is(err, statedir.ErrNotRunning):
		return nil, "", cli.ErrNotRunning
	case err != nil:
		return nil, "", err
	}
	return r.Hubs, r.Fingerprint, nil
}

func (stateDirs) Tokens(dir string) cli.Tokens { return tokenFile{token.Open(dir)} }

// Audit appends the entry with audit.AppendOnce, which takes the log's
// lock as the running gateway's writer does, so that seqs stay in order.
func (stateDirs) Audit(dir string, who openhal.Principal, action, outcome, reason string) error {
	e := audit.Entry{Principal: who, Action: action, Outcome: outcome, Reason: reason}
	_, err := audit.AppendOnce(auditDir(dir), e)
	return err
}

func (stateDirs) Adapters(dir string) cli.Adapters { return installed{dir} }

// tokenFile is cli.Tokens.
type tokenFile struct{ s *token.Store }

func (t tokenFile) Path() string { return t.s.Path() }

func (t tokenFile) Add(name, kind string, scope openhal.Scope, devices []string) (string, error) {
	return t.s.Add(name, kind, scope, devices)
}

func (t tokenFile) List() ([]cli.TokenEntry, error) {
	es, err := t.s.List()
	if err != nil {
		return nil, err
	}
	out := make([]cli.TokenEntry, len(es))
	for i, e := range es {
		out[i] = cli.TokenEntry(e)
	}
	return out, nil
}

func (t tokenFile) Revoke(name string) error { return t.s.Revoke(name) }

func (tokenFile) Check(name, kind string, scope openhal.Scope, devices []string) error {
	return token.Check(name, kind, scope, devices)
}

// installed is cli.Adapters: the adapters installed in a state directory.
type installed struct{ stateDir string }

func (in installed) Install(src string) (cli.AdapterRecord, error) {
	rec, err := manifest.Install(src, in.stateDir)
	var faults manifest.Errors
	switch {
	case errors.As(err, &faults):
		out := make(cli.FieldErrors, len(faults))
		for i, f := range faults {
			out[i] = cli.FieldError(f)
		}
		return cli.AdapterRecord{}, out
	case err != nil:
		return cli.AdapterRecord{}, err
	}
	return cli.AdapterRecord(*rec), nil
}

func (in installed) List() ([]cli.AdapterRecord, error) {
	recs, err := manifest.List(in.stateDir)
	if err != nil {
		return nil, err
	}
	out := make([]cli.AdapterRecord, len(recs))
	for i, r := range recs {
		out[i] = cli.AdapterRecord(r)
	}
	return out, nil
}

func (in installed) Load(name string) (cli.AdapterRecord, error) {
	rec, _, err := manifest.Load(in.stateDir, name)
	if err != nil {
		return cli.AdapterRecord{}, err
	}
	return cli.AdapterRecord(*rec), nil
}

func (in installed) Remove(name string) error { return manifest.Remove(in.stateDir, name) }

func (in installed) Logs(name string, n int) ([]string, error) {
	return stderrlog.ReadTail(in.LogDir(), name, n)
}

func (in installed) LogDir() string { return supervisor.LogDir(in.stateDir) }

// lan is cli.LAN: DNS-SD over multicast DNS.
type lan struct{}

func (lan) Find(ctx context.Context, name string) (gatewayext.Gateway, error) {
	g, err := discovery.Find(ctx, discovery.LookupType, name)
	if errors.Is(err, discovery.ErrNotFound) {
		return g, cli.ErrNotFound
	}
	return g, err
}

func (lan) List(ctx context.Context) ([]gatewayext.Gateway, error) {
	return discovery.List(ctx, discovery.LookupType)
}

func (lan) Watch(ctx context.Context, seen func(g gatewayext.Gateway, gone bool)) error {
	return discovery.Watch(ctx, discovery.LookupType, func(e discovery.Event) { seen(e.Gateway, e.Gone) })
}

// startMCP is cli.Env.MCP: the bridge of `gateway mcp`, which dials again
// after a lost connection.
func startMCP(ctx context.Context, opt cli.MCPOptions) (cli.MCPBridge, error) {
	b, err := mcpbridge.New(ctx, mcpbridge.Options{
		Dial:         opt.Dial,
		Redial:       true,
		Gateway:      opt.Gateway,
		ConsoleURL:   opt.ConsoleURL,
		ApproveFlags: opt.ApproveFlags,
		Version:      opt.Version,
		Logger:       opt.Log,
	})
	if err != nil {
		return nil, err
	}
	return stdioBridge{b}, nil
}

// stdioBridge serves its bridge on standard input and output.
type stdioBridge struct{ *mcpbridge.Bridge }

func (b stdioBridge) Serve(ctx context.Context) error {
	return b.Server().Run(ctx, b.StdioTransport())
}
