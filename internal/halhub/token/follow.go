package token

import (
	"context"
	"log/slog"
)

// Follow hands a new Table to onChange whenever changed says the token
// file may have changed (statedir.Watcher.Subscribe(FileName): the
// gateway's one watch of its state directory), until ctx ends. It reads
// the file once first, so that a change made between the caller's Load
// and the subscription is not missed. A file that does not decode is
// logged and skipped: the caller keeps its previous Table.
func (s *Store) Follow(ctx context.Context, changed <-chan struct{}, log *slog.Logger, onChange func(*Table)) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.reload(log, onChange)
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			s.reload(log, onChange)
		}
	}
}

// reload loads the file and hands it on, or logs why it could not.
func (s *Store) reload(log *slog.Logger, onChange func(*Table)) {
	t, err := s.Load()
	if err != nil {
		log.Error("token file rejected, keeping the previous tokens", "path", s.Path(), "err", err)
		return
	}
	log.Debug("tokens loaded", "path", s.Path(), "tokens", t.Len())
	onChange(t)
}
