//go:build unix

package gatewayd

import (
	"context"
	"log/slog"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/token"
)

// followTokens hands every change of the token file to the Hub until ctx
// ends. A token file that disappears (the state directory removed under
// the gateway) revokes nothing: the tokens loaded stay, so that the stop
// stays within reach, and the next file written is taken as usual. A
// watch that ends because the directory went away starts again when the
// Monitor finds the directory back and sends on back.
func followTokens(ctx context.Context, store *token.Store, hub *halhub.Hub, back <-chan struct{}, log *slog.Logger) {
	set := func(t *token.Table) {
		if t.Absent() {
			log.Warn("token file missing; keeping the tokens loaded", "path", store.Path())
			return
		}
		hub.SetTokens(t)
	}
	for {
		err := store.Watch(ctx, log, set)
		if ctx.Err() != nil {
			return
		}
		log.Error("token file watch ended; it starts again when the state directory is back", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-back:
		}
	}
}

// kick sends on c without ever waiting: one token is enough.
func kick(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
