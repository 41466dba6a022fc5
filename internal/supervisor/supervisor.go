// Package supervisor hosts the gateway's adapters (adapter protocol 1): it
// starts each enabled adapter as its own unprivileged user, speaks the
// protocol with it (package conn), restarts it after a crash with a growing
// delay (package restart), stops it with the fixed sequence (package
// process), keeps its standard error in its own log (package stderrlog),
// and bridges it to the HAL Hub: the devices it provides become Hub devices
// "<adapter>.<id>", the Hub's notifications become its events, and its own
// requests are served as the Hub's, under its grant.
//
// Each adapter has one goroutine that owns its runs; everything else (HAL
// requests for its devices, status) reads its state under a lock.
package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/supervisor/conn"
	"github.com/openhal/gateway/internal/supervisor/process"
	"github.com/openhal/gateway/internal/supervisor/restart"
)

// DefaultUser is the system user adapters run as when the configuration
// names none.
const DefaultUser = "gateway-adapter"

// Timing holds every duration of the protocol. Tests shorten them; the
// gateway runs DefaultTiming.
type Timing struct {
	Conn    conn.Timing
	Stop    process.Timing
	Events  time.Duration // queued events written before shutdown, at most
	Restart restart.Policy
	Warm    time.Duration // a tool kept running after its last answer
}

// DefaultTiming returns the protocol's numbers.
func DefaultTiming() Timing {
	return Timing{
		Conn:    conn.DefaultTiming(),
		Stop:    process.DefaultTiming(),
		Events:  time.Second,
		Restart: restart.DefaultPolicy(),
		Warm:    30 * time.Second,
	}
}

// Options configure a Supervisor.
type Options struct {
	// StateDir is the gateway's state directory, where adapters are
	// installed (see package manifest).
	StateDir string
	// Enabled names the installed adapters to run.
	Enabled []string
	Hub     *halhub.Hub
	// Registry is the Hub's registry, where adapters' devices go.
	Registry *device.Registry
	// Version is the gateway's, sent as host.version.
	Version string
	// User is who adapters run as: "" means DefaultUser. When the gateway
	// cannot switch users it runs them as itself, and says so.
	User   string
	Limits adapterproto.Limits
	// Settings are each adapter's settings by name, handed to it in
	// initialize (configuration adapters.settings).
	Settings map[string]json.RawMessage
	Timing   Timing
	Clock    clock.Clock
	Log      *slog.Logger
	// LookupEnv reads the gateway's environment for the manifests'
	// env_pass; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Shim is the executable that starts each adapter and kills its whole
	// tree should the gateway die (process.Spec.Shim): the gateway's own
	// binary. "" starts adapters directly, and a gateway killed with
	// SIGKILL then leaves their children behind.
	Shim string

	// canSwitchUsers replaces the capability check in tests.
	canSwitchUsers func() bool
}

// Supervisor runs the enabled adapters.
type Supervisor struct {
	opt  Options
	log  *slog.Logger
	clk  clock.Clock
	cred *process.Credential // nil: adapters run as the gateway's user
	user string              // who they run as, for status

	mu       sync.Mutex
	adapters map[string]*adapter
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	watchers watchers // Watch: told of every adapter state change
	// settings are each adapter's settings, replaced whole by a reload
	// (SetSettings, enable.go).
	settings atomic.Pointer[map[string]json.RawMessage]
}

// New prepares the enabled adapters: each is loaded from its install
// record and its declared devices are registered (offline until it runs).
// An adapter that cannot be loaded is kept as failed, so that status shows
// why; only an unusable user or state directory is an error.
func New(opt Options) (*Supervisor, error) {
	if opt.Clock == nil {
		opt.Clock = clock.Real()
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	if opt.Timing == (Timing{}) {
		opt.Timing = DefaultTiming()
	}
	if opt.Limits == (adapterproto.Limits{}) {
		opt.Limits = adapterproto.DefaultLimits()
	}
	if opt.LookupEnv == nil {
		opt.LookupEnv = os.LookupEnv
	}
	s := &Supervisor{opt: opt, log: opt.Log, clk: opt.Clock, adapters: map[string]*adapter{}}
	s.settings.Store(&opt.Settings)
	if len(opt.Enabled) > 0 {
		if err := s.chooseUser(); err != nil {
			return nil, err
		}
	}
	for _, name := range opt.Enabled {
		if _, dup := s.adapters[name]; dup {
			return nil, fmt.Errorf("adapter %s is enabled twice", name)
		}
		s.adapters[name] = s.load(name)
	}
	return s, nil
}

// Start starts every adapter's loop: services are spawned at once, tools
// wait for a request. It returns without waiting for any handshake.
func (s *Supervisor) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, a := range s.adapters {
		s.startLocked(a)
	}
}

// startLocked starts a's loop under its own context, so that one adapter
// can be reloaded alone. The caller holds s.mu.
func (s *Supervisor) startLocked(a *adapter) {
	ctx, cancel := context.WithCancel(s.ctx)
	a.cancel, a.done = cancel, make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(a.done)
		a.loop(ctx)
	}()
}

// Reload applies a change of an adapter's install (install, reinstall,
// remove) to the running gateway: its run is stopped with the stop
// sequence, its devices unregistered, its install read again and, if it is
// still installed, it starts afresh, its failure and crash count cleared
// (reinstalling re-records name, version and hash; section 2).
func (s *Supervisor) Reload(name string) error {
	s.mu.Lock()
	a, ok := s.adapters[name]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("adapter %s is not enabled in the configuration", name)
	}
	if a.cancel != nil {
		a.cancel()
		<-a.done
	}
	a.unregister()
	a.close()
	fresh := s.load(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adapters[name] = fresh
	if s.ctx != nil && s.ctx.Err() == nil {
		s.startLocked(fresh)
	}
	return nil
}

// Stop stops every adapter in parallel, each with the fixed stop sequence,
// and returns when all are stopped: within the sequence's total (section 8:
// the gateway's own stop takes no longer than one adapter's).
func (s *Supervisor) Stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
	for _, a := range s.list() {
		a.close()
	}
}

// Status returns every adapter's status, by name.
func (s *Supervisor) Status() []Status {
	var out []Status
	for _, a := range s.list() {
		out = append(out, a.status())
	}
	return out
}

// Reset lets a failed adapter start again (section 3: a failed adapter
// stays failed until an operator resets or reinstalls it). The install
// record is not touched: a tampered adapter fails again until reinstalled.
func (s *Supervisor) Reset(name string) error {
	s.mu.Lock()
	a, ok := s.adapters[name]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("adapter %s is not enabled", name)
	}
	return a.reset()
}

func (s *Supervisor) list() []*adapter {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*adapter, 0, len(s.adapters))
	for _, a := range s.adapters {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
