package mcpbridge

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// updateGap is the least time between two rounds of resource updates. An
// update carries only the resource's URI, so that many changes of one
// resource within a gap say no more than one: a value at 1 kHz becomes at
// most 10 notifications a second to each subscriber, not a thousand.
const updateGap = 100 * time.Millisecond

// updates sends notifications/resources/updated for the URIs that
// changed, from one goroutine of its own: a subscriber that reads slowly
// holds up that goroutine, never the bridge's reading of the Hub.
type updates struct {
	server *mcp.Server
	mu     sync.Mutex
	dirty  map[string]struct{}
	kick   chan struct{}
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func newUpdates(s *mcp.Server) *updates {
	u := &updates{server: s, dirty: map[string]struct{}{}, kick: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{})}
	go u.run()
	return u
}

// changed marks uris as changed; their update goes out in the next round.
func (u *updates) changed(uris ...string) {
	u.mu.Lock()
	for _, uri := range uris {
		u.dirty[uri] = struct{}{}
	}
	u.mu.Unlock()
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// run sends a round for each kick, at most one round per updateGap. The
// SDK sends each update only to the sessions subscribed to its URI.
func (u *updates) run() {
	defer close(u.done)
	for {
		select {
		case <-u.quit:
			return
		case <-u.kick:
		}
		u.mu.Lock()
		round := u.dirty
		u.dirty = map[string]struct{}{}
		u.mu.Unlock()
		for uri := range round {
			u.server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		select {
		case <-u.quit:
			return
		case <-time.After(updateGap):
		}
	}
}

// stop ends the goroutine.
func (u *updates) stop() {
	u.once.Do(func() { close(u.quit) })
	<-u.done
}
