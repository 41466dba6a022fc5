package supervisor

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Started returns once every enabled service has left `starting` at least
// once — it is running, in backoff or failed — or with an error naming
// those still starting when ctx ends. Tools start on demand and are not
// waited for. The gateway tells systemd it is ready only after this: an
// adapter that fails does not hold readiness back, it shows in the status.
func (s *Supervisor) Started(ctx context.Context) error {
	for _, a := range s.list() {
		if a.isTool() {
			continue
		}
		if err := a.waitStarted(ctx); err != nil {
			return err
		}
	}
	return nil
}

// waitStarted waits for a to have left starting once: running, in backoff
// or failed. It asks whether it ever did, not whether it does now: a
// service that fails its start goes back to starting after a backoff of
// a few milliseconds, and a waiter woken a moment late must not miss it.
func (a *adapter) waitStarted(ctx context.Context) error {
	for {
		a.mu.Lock()
		settled, st, changed := a.settled || settles(a.state), a.state, a.changed
		a.mu.Unlock()
		if settled {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("adapter %s still %s: %w", a.name, st, ctx.Err())
		}
	}
}

// Probe shows that the supervisor is not wedged: its lock and each
// adapter's lock can be taken before ctx ends. The error names the
// adapters whose lock could not be taken. An adapter that is slow to
// answer its own requests is not wedged: that is the adapter's business
// (its strikes and ping), not the supervisor's.
func (s *Supervisor) Probe(ctx context.Context) error {
	if err := lockWithin(ctx, s.mu.Lock, s.mu.Unlock); err != nil {
		return fmt.Errorf("supervisor lock: %w", err)
	}
	s.mu.Lock()
	all := make([]*adapter, 0, len(s.adapters))
	for _, a := range s.adapters {
		all = append(all, a)
	}
	s.mu.Unlock()
	errs := make(chan string, len(all))
	for _, a := range all {
		go func() {
			if lockWithin(ctx, a.mu.Lock, a.mu.Unlock) != nil {
				errs <- a.name
				return
			}
			errs <- ""
		}()
	}
	var stuck []string
	for range all {
		if name := <-errs; name != "" {
			stuck = append(stuck, name)
		}
	}
	if len(stuck) > 0 {
		return fmt.Errorf("adapter %s: lock held: %w", strings.Join(stuck, ", "), ctx.Err())
	}
	return nil
}

// lockWithin takes and releases a lock on a goroutine of its own, so
// that a lock held for good costs the caller no more than ctx. A
// goroutine left waiting on such a lock ends when the lock is released.
func lockWithin(ctx context.Context, lock, unlock func()) error {
	done := make(chan struct{})
	go func() {
		lock()
		unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Watch calls fn after every change of an adapter's state, until ctx
// ends: a cheap hook for the gateway's status line, with no polling. fn
// runs under the adapter's lock, so it must only note or queue (a
// non-blocking channel send), never call back into the Supervisor.
func (s *Supervisor) Watch(ctx context.Context, fn func()) {
	s.watchers.mu.Lock()
	s.watchers.next++
	id := s.watchers.next
	if s.watchers.fns == nil {
		s.watchers.fns = map[int]func(){}
	}
	s.watchers.fns[id] = fn
	s.watchers.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.watchers.mu.Lock()
		delete(s.watchers.fns, id)
		s.watchers.mu.Unlock()
	})
}

// watchers are the functions Watch registered.
type watchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func()
}

// notify calls every watcher; setStateLocked calls it on a change.
func (w *watchers) notify() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, fn := range w.fns {
		fn()
	}
}
