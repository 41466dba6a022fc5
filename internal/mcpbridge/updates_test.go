package mcpbridge

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gate holds each notifications/resources/updated the server sends until
// the test lets it go: the test so knows when a round of updates is sent,
// and what changed before it.
type gate struct {
	sending chan string   // the URI of an update about to be sent
	proceed chan struct{} // lets it go
}

func newGate(s *mcp.Server) *gate {
	g := &gate{sending: make(chan string), proceed: make(chan struct{})}
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams); ok && method == "notifications/resources/updated" {
				g.sending <- p.URI
				<-g.proceed
			}
			return next(ctx, method, req)
		}
	})
	return g
}

// burst gives sim.temperature n values, 1 to n, as fast as the Hub takes
// them.
func burst(set func(id string, v any), n int) {
	for i := 1; i <= n; i++ {
		set("sim.temperature", map[string]any{"temperature": float64(i)})
	}
}

// handledAll returns once the bridge has handled every value the Hub
// sent before this call: it sets sim.door, which the bridge handles after
// them, and waits for a wait on it (started before) to see the change.
func handledAll(t *testing.T, set func(string, any), waiting <-chan *mcp.CallToolResult) {
	t.Helper()
	set("sim.door", true)
	if r := within(t, waiting, "the wait on sim.door"); r == nil || r.IsError {
		t.Fatalf("the wait on sim.door: %+v", r)
	}
}

// TestUpdatesCoalesced: a thousand values of one device in a burst make
// two updates for its subscriber, not a thousand: one at once, and one
// at least updateGap later for all the others — sent after the last
// change, so that the last value is never left untold.
func TestUpdatesCoalesced(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, false)
	g := newGate(b.Server())
	c := connect(t, b, clientOptions{version: proto0618})
	temp := b.deviceURI("sim.temperature")
	subscribe(t, c, temp)
	watcher := hubWatcher(t, url, bench.Admin)
	waiting := startWait(c, map[string]any{"device": "sim.door", "op": "changes", "timeoutSeconds": 55})
	waitStarted(t, watcher)

	bench.Set("sim.temperature", map[string]any{"temperature": 0.0})
	if uri := within(t, g.sending, "the first round"); uri != temp {
		t.Fatalf("first update of %s, want %s", uri, temp)
	}
	burst(bench.Set, 1000) // while the first round is held
	handledAll(t, bench.Set, waiting)
	released := time.Now()
	g.proceed <- struct{}{}
	if uri := within(t, g.sending, "the round of the burst"); uri != temp {
		t.Fatalf("second update of %s, want %s", uri, temp)
	}
	if gap := time.Since(released); gap < updateGap {
		t.Errorf("second round %v after the first, want at least %v", gap, updateGap)
	}
	g.proceed <- struct{}{}
	select {
	case uri := <-g.sending:
		t.Fatalf("a third update (%s): every change was in the second round", uri)
	case <-time.After(quiet):
	}
	for range 2 {
		awaitUpdate(t, c, temp)
	}
	if n := len(c.updated); n != 0 {
		t.Fatalf("%d more updates reached the client, want 2 in all", n)
	}
}

// TestUpdatesBurstUnheld: the same burst with nothing held makes at least
// one update and no more than one per updateGap.
func TestUpdatesBurstUnheld(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, false)
	c := connect(t, b, clientOptions{version: proto0618})
	temp := b.deviceURI("sim.temperature")
	subscribe(t, c, temp)
	watcher := hubWatcher(t, url, bench.Admin)
	waiting := startWait(c, map[string]any{"device": "sim.door", "op": "changes", "timeoutSeconds": 55})
	waitStarted(t, watcher)

	start := time.Now()
	burst(bench.Set, 1000)
	handledAll(t, bench.Set, waiting)
	n := 0
	for quietFor := false; !quietFor; {
		select {
		case uri := <-c.updated:
			if uri == temp {
				n++
			}
		case <-time.After(quiet):
			quietFor = true
		}
	}
	most := int(time.Since(start)/updateGap) + 1
	if n < 1 || n > most {
		t.Fatalf("%d updates for 1000 values in %v, want 1 to %d", n, time.Since(start), most)
	}
}
