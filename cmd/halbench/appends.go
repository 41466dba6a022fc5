package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// appends is an audit log of halbench's own, on the gateway's disk: the
// limit of an audited write is the rate at which the audit log can append
// an entry and sync it, which its own Append measures with the gateway's
// code, entries of the same shape and as many concurrent appenders (they
// share each sync, as the gateway's writes do).
type appends struct {
	dir string
	log *audit.Log
}

// openAppends opens a fresh audit log in a new folder under parent.
func openAppends(parent string) (*appends, error) {
	dir, err := os.MkdirTemp(parent, "halbench-audit-")
	if err != nil {
		return nil, fmt.Errorf("the audit log's own appends: %w", err)
	}
	l, err := audit.Open(dir, audit.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("the audit log's own appends: %w", err)
	}
	return &appends{dir: dir, log: l}, nil
}

func (a *appends) close() {
	a.log.Close()
	os.RemoveAll(a.dir)
}

// appender is one client of the log, appending the entry of an applied
// write of writeDevice.
func (a *appends) appender() requester { return &appender{log: a.log} }

type appender struct {
	log *audit.Log
	n   int
}

func (p *appender) do(ctx context.Context) error {
	p.n++
	e := audit.Entry{Principal: openhal.Principal{Kind: "token", Name: "halbench", Scope: openhal.ScopeAdmin},
		Action: "write", Device: writeDevice, Value: p.n%2 == 0, Outcome: "applied"}
	if _, err := p.log.Append(ctx, e); err != nil {
		return fmt.Errorf("audit append: %w", err)
	}
	return nil
}

func (p *appender) close() {}
