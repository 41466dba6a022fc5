//go:build !linux

package token

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
)

// Watch needs inotify, so Linux: elsewhere only the client commands run,
// and no gateway serves the tokens. It says so rather than poll.
func (s *Store) Watch(context.Context, *slog.Logger, func(*Table)) error {
	return fmt.Errorf("watch %s: reloading tokens needs Linux (this is %s)", s.dir, runtime.GOOS)
}
