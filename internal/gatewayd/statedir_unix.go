//go:build unix

package gatewayd

import (
	"context"
	"log/slog"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/statedir"
)

// watchStateDir follows the locked state directory until ctx ends and
// returns its probe, named "state" in /healthz and the watchdog: a
// directory removed, moved, replaced or unwritable fails it. When the
// directory is usable again (made again by the operator), the Hub writes
// the stop's latch there again, and back is sent on (the token file's
// watch starts again); a latch write that failed is retried at each
// probe.
func watchStateDir(ctx context.Context, lock *statedir.Lock, hub *halhub.Hub, back chan<- struct{}, log *slog.Logger) (func(context.Context) error, error) {
	mon := statedir.NewMonitor(lock, statedir.MonitorOptions{
		Restore: func() error {
			kick(back)
			return hub.Relatch()
		},
		Pending: hub.LatchFailed,
		Log:     log.With("part", "state"),
	})
	loop, err := mon.Watch(ctx)
	if err != nil {
		return nil, err
	}
	go func() {
		if err := loop(); err != nil {
			log.Error("state directory watch ended; it is checked at each probe only", "err", err)
		}
	}()
	return mon.Check, nil
}
