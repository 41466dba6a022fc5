package discovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"

	"github.com/brutella/dnssd"
	dnssdlog "github.com/brutella/dnssd/log"
)

// builtin answers multicast DNS itself (github.com/brutella/dnssd), for
// a board without avahi-daemon. Its socket shares port 5353 (SO_REUSEADDR)
// but is never chosen while avahi runs: two responders on one host answer
// for each other badly.
type builtin struct {
	log    *slog.Logger
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewBuiltin returns the built-in responder. It opens nothing until
// Publish is given services.
func NewBuiltin(log *slog.Logger) Publisher {
	Quiet()
	return &builtin{log: log}
}

// Quiet keeps the dnssd library's own log lines, written to standard
// output by default, out of the gateway's output (`gateway discover
// --json` must print JSON only).
func Quiet() {
	dnssdlog.Info.SetOutput(io.Discard)
	dnssdlog.Debug.SetOutput(io.Discard)
}

func (b *builtin) Name() string { return "builtin" }

// Publish withdraws what was announced and starts a responder for svcs.
// Probing for the names (RFC 6762 §8) and the first announcements happen
// in the background; a failure there is logged.
func (b *builtin) Publish(_ context.Context, svcs []Service) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stop()
	if len(svcs) == 0 {
		return nil
	}
	r, err := dnssd.NewResponder()
	if err != nil {
		return fmt.Errorf("start mDNS responder: %w", err)
	}
	for _, s := range svcs {
		ds, err := dnssd.NewService(dnssd.Config{Name: s.Name, Type: s.Type, Port: s.Port, Text: s.Text, Ifaces: interfacesOf(s.Addr)})
		if err != nil {
			return fmt.Errorf("announce %s: %w", s.Type, err)
		}
		if _, err := r.Add(ds); err != nil {
			return fmt.Errorf("announce %s: %w", s.Type, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.cancel, b.done = cancel, done
	go func() {
		defer close(done)
		// Respond sends the goodbye packets when ctx ends.
		if err := r.Respond(ctx); err != nil && !errors.Is(err, context.Canceled) {
			b.log.Warn("announce: mDNS responder stopped", "err", err)
		}
	}()
	return nil
}

// stop withdraws the services (goodbye packets) and waits for it.
func (b *builtin) stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	<-b.done
	b.cancel, b.done = nil, nil
}

// Close withdraws every service.
func (b *builtin) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stop()
	return nil
}

// interfacesOf names the interface that holds addr, so that a listener
// bound to one address is announced there only; none (every interface)
// for an unspecified address or one no interface holds.
func interfacesOf(addr netip.Addr) []string {
	if !addr.IsValid() || addr.IsUnspecified() {
		return nil
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	for _, ifc := range ifaces {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == addr {
				return []string{ifc.Name}
			}
		}
	}
	return nil
}
