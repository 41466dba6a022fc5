package supervisor

import (
	"encoding/json"
	"fmt"
)

// A configuration reload (SIGHUP) enables and disables adapters, and
// changes their settings, while the others run on.

// Enable loads and starts an adapter the configuration now enables, as
// New and Start do for those enabled at start-up: its declared devices
// are registered at once, offline until it runs. An adapter that cannot
// be loaded is kept as failed, visible in status; the error is for a
// name already enabled, or no user to run it as.
func (s *Supervisor) Enable(name string) error {
	s.mu.Lock()
	_, dup := s.adapters[name]
	first := len(s.adapters) == 0 && s.user == ""
	s.mu.Unlock()
	if dup {
		return fmt.Errorf("adapter %s is already enabled", name)
	}
	if first {
		// No adapter ran yet, so nothing reads the credential.
		if err := s.chooseUser(); err != nil {
			return fmt.Errorf("enable adapter %s: %w", name, err)
		}
	}
	a := s.load(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adapters[name] = a
	if s.ctx != nil && s.ctx.Err() == nil {
		s.startLocked(a)
	}
	return nil
}

// Disable stops an adapter the configuration no longer enables, with the
// stop sequence, and unregisters its devices (hal/deviceRemoved).
func (s *Supervisor) Disable(name string) error {
	s.mu.Lock()
	a, ok := s.adapters[name]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("adapter %s is not enabled", name)
	}
	if a.cancel != nil {
		a.cancel()
		<-a.done
	}
	a.unregister()
	a.close()
	s.mu.Lock()
	delete(s.adapters, name)
	s.mu.Unlock()
	return nil
}

// SetSettings replaces every adapter's settings: each run from now on is
// handed its own in initialize. A running adapter keeps those it has
// until it starts again (Reload).
func (s *Supervisor) SetSettings(settings map[string]json.RawMessage) {
	s.settings.Store(&settings)
}
