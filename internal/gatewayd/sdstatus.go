package gatewayd

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/internal/systemd"
	"github.com/openhal/gateway/openhal"
)

// statusLine computes the one-line summary systemd shows (STATUS=):
//
//	devices 7, faults 1, clients 2, adapters 1/2 running (mute backoff), emergency stop off
//
// Adapters that are neither running nor idle tools are named with their
// state; "emergency stop ENGAGED" when it is.
type statusLine struct {
	reg *device.Registry
	hub *halhub.Hub
	sup *supervisor.Supervisor
	// reload is the last reload's outcome (reload.go), nil before any.
	reload *atomic.Pointer[string]
}

func (s statusLine) String() string {
	devs := s.reg.List()
	faults := 0
	for _, d := range devs {
		if d.State == device.StateFault {
			faults++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "devices %d, faults %d, clients %d", len(devs), faults, s.hub.Connections())
	all := s.sup.Status()
	running := 0
	var others []string
	for _, st := range all {
		switch {
		case st.State == restart.Running:
			running++
		case st.Kind == adapterproto.KindTool && st.State == restart.Stopped:
			// an idle tool: started on demand
		default:
			others = append(others, st.Name+" "+st.State.String())
		}
	}
	fmt.Fprintf(&b, ", adapters %d/%d running", running, len(all))
	if len(others) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(others, ", "))
	}
	if s.hub.Stopped() {
		b.WriteString(", emergency stop ENGAGED")
	} else {
		b.WriteString(", emergency stop off")
	}
	if s.reload != nil {
		if r := s.reload.Load(); r != nil {
			b.WriteString(", " + *r)
		}
	}
	return b.String()
}

// followStatus keeps STATUS= current until ctx ends: it recomputes the
// line when something it shows may have changed — a device added,
// removed or changing state, a connection opening or closing (kick, given
// to the Hub as its OnSessions hook), the emergency stop, an adapter's
// state — and sends it when it differs. Kicks coalesce; nothing polls.
func followStatus(ctx context.Context, n *systemd.Notifier, line statusLine, kicks <-chan struct{}, kick func(), log *slog.Logger) {
	unsub := line.reg.Subscribe(func(e device.Event) {
		if e.Kind != device.EventValue { // values change nothing shown
			kick()
		}
	})
	defer unsub()
	// The Hub tells in-process subscribers of hal/stopped and
	// hal/resumed; a device pattern that matches no id spares it encoding
	// every value for this subscriber.
	entry := token.Entry{Name: "systemd-status", Kind: openhal.KindHub, Scope: openhal.ScopeAdmin, Devices: []string{"\x00"}}
	stopWatch := line.hub.Subscribe(entry,
		func(method, _ string, _ json.RawMessage) {
			if method != openhal.NotifyValue {
				kick()
			}
		})
	defer stopWatch()
	line.sup.Watch(ctx, kick)
	for {
		if err := n.Status(line.String()); err != nil {
			log.Warn("systemd status", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-kicks:
		}
	}
}

// newKicker returns a channel with room for one token and a function that
// puts one there without ever blocking: safe under the registry's and the
// Hub's locks.
func newKicker() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	return c, func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}
