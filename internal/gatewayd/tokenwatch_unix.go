//go:build unix

package gatewayd

import (
	"context"
	"log/slog"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/internal/statedir"
)

// followTokens hands every change of the token file to the Hub until ctx
// ends, as the state directory's one Watcher reports them. A token file
// that disappears (the state directory removed under the gateway)
// revokes nothing: the tokens loaded stay, so that the stop stays within
// reach, and the next file written is taken as usual, in the directory
// made again too (the Watcher watches that one).
func followTokens(ctx context.Context, store *token.Store, hub *halhub.Hub, w *statedir.Watcher, log *slog.Logger) {
	changed := w.Subscribe(token.FileName)
	go store.Follow(ctx, changed, log, func(t *token.Table) {
		if t.Absent() {
			log.Warn("token file missing; keeping the tokens loaded", "path", store.Path())
			return
		}
		hub.SetTokens(t)
	})
}
