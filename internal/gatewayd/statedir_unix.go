//go:build unix

package gatewayd

import (
	"context"
	"log/slog"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/statedir"
)

// watchStateDir starts the state directory's one Watcher, which the
// token file's follower (followTokens) and the Monitor subscribe to, and
// reads the kernel's events until ctx ends.
func watchStateDir(ctx context.Context, dir string, log *slog.Logger) (*statedir.Watcher, error) {
	w, err := statedir.NewWatcher(dir, log.With("part", "state"))
	if err != nil {
		return nil, err
	}
	go func() {
		if err := w.Run(ctx); err != nil {
			log.Error("state directory watch ended; it is checked at each probe only", "err", err)
		}
	}()
	return w, nil
}

// monitorStateDir follows the locked state directory until ctx ends and
// returns its probe, named "state" in /healthz and the watchdog: a
// directory removed, moved, replaced or unwritable fails it. When the
// directory is usable again (made again by the operator), the Hub writes
// the stop's latch there again; a latch write that failed is retried at
// each probe.
func monitorStateDir(ctx context.Context, lock *statedir.Lock, w *statedir.Watcher, hub *halhub.Hub, log *slog.Logger) func(context.Context) error {
	mon := statedir.NewMonitor(lock, statedir.MonitorOptions{
		Restore: hub.Relatch,
		Pending: hub.LatchFailed,
		Log:     log.With("part", "state"),
	})
	mon.Follow(ctx, w)
	return mon.Check
}
