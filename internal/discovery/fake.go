package discovery

import (
	"context"
	"slices"
	"sync"
)

// Fake is a Publisher that keeps what it was given, for tests of what is
// announced without a network.
type Fake struct {
	mu        sync.Mutex
	published [][]Service
	closed    bool
}

// Publish records svcs.
func (f *Fake) Publish(_ context.Context, svcs []Service) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = append(f.published, slices.Clone(svcs))
	return nil
}

// Close records the withdrawal.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// Name is "fake".
func (f *Fake) Name() string { return "fake" }

// Published returns every set of services published, in order.
func (f *Fake) Published() [][]Service {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.published)
}

// Closed reports whether Close was called.
func (f *Fake) Closed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}
