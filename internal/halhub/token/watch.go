//go:build linux

package token

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/openhal/gateway/internal/statedir"
)

// Watch follows the token file alone, with a watch of the state
// directory of its own (statedir.Watcher), and hands each new Table to
// onChange as Follow does, until ctx ends (it returns nil) or the
// directory is gone from its path, removed or moved away (an error; so is
// a directory it cannot watch). It does not poll: a change is applied as soon as the kernel
// reports it. The gateway, which follows more than its tokens there,
// subscribes Follow to its one Watcher instead.
func (s *Store) Watch(parent context.Context, log *slog.Logger, onChange func(*Table)) error {
	w, err := statedir.NewWatcher(s.dir, log)
	if err != nil {
		return fmt.Errorf("watch tokens: %w", err)
	}
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	file, dir := w.Subscribe(FileName), w.Subscribe("")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			cancel(err)
		}
	}()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-dir:
				if _, err := os.Stat(s.dir); err != nil {
					cancel(fmt.Errorf("watch %s: %w", s.dir, errDirGone))
					return
				}
			}
		}
	}()
	s.Follow(ctx, file, log, onChange) // until ctx ends
	<-done
	if parent.Err() != nil {
		return nil
	}
	return context.Cause(ctx)
}

// errDirGone ends a watch whose directory was removed or moved.
var errDirGone = errors.New("state directory removed or moved")
