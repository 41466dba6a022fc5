package modbusline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbus/modbustest"
)

// waitLong bounds every wait for an event: far beyond what any takes, so
// that it fails a test only when the event never comes.
const waitLong = 10 * time.Second

// reporter records what a device reports, and wakes waiters.
type reporter struct {
	mu     sync.Mutex
	values []any
	states []string // "ok", "fault: ...", "offline: ..."
	seen   int      // states waitState has passed
	wake   chan struct{}
}

func newReporter() *reporter { return &reporter{wake: make(chan struct{}, 1)} }

func (r *reporter) Value(v any, _ time.Time) {
	r.mu.Lock()
	r.values = append(r.values, v)
	r.mu.Unlock()
	r.poke()
}

func (r *reporter) State(s device.State, fault string) {
	r.mu.Lock()
	if fault != "" {
		r.states = append(r.states, string(s)+": "+fault)
	} else {
		r.states = append(r.states, string(s))
	}
	r.mu.Unlock()
	r.poke()
}

func (r *reporter) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// waitFor waits until cond holds of what was reported.
func (r *reporter) waitFor(t *testing.T, what string, cond func(values []any, states []string) bool) {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		r.mu.Lock()
		ok := cond(r.values, r.states)
		values, states := fmt.Sprint(r.values), strings.Join(r.states, " | ")
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.wake:
		case <-deadline:
			t.Fatalf("no %s: values %s, states %s", what, values, states)
		}
	}
}

// waitValue waits for v to be the last value reported.
func (r *reporter) waitValue(t *testing.T, v any) {
	t.Helper()
	r.waitFor(t, fmt.Sprintf("value %v", v), func(values []any, _ []string) bool {
		return len(values) > 0 && device.Equal(values[len(values)-1], v)
	})
}

// waitState waits for a state that starts with prefix, reported after
// the one the last waitState found, and returns it.
func (r *reporter) waitState(t *testing.T, prefix string) string {
	t.Helper()
	var found string
	r.waitFor(t, "state "+prefix, func(_ []any, states []string) bool {
		for i := r.seen; i < len(states); i++ {
			if strings.HasPrefix(states[i], prefix) {
				found, r.seen = states[i], i+1
				return true
			}
		}
		return false
	})
	return found
}

// rig is a line on an in-memory RTU port to a modbustest slave, or on TCP.
type rig struct {
	slave *modbustest.Slave
	line  *Line
	port  *modbustest.Port // the RTU port open now
	opens int
	// refuse, while not nil, is what opening the port fails with.
	refuse error
	mu     sync.Mutex
}

// newRTURig returns a line over an in-memory serial port to s: each open
// is a new port, as replugging an adapter gives.
func newRTURig(t *testing.T, s *modbustest.Slave, cfg Config) *rig {
	return (&rig{slave: s}).rtu(t, cfg)
}

func (r *rig) rtu(t *testing.T, cfg Config) *rig {
	cfg.Open = func(context.Context) (modbus.Transport, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.refuse != nil {
			return nil, r.refuse
		}
		p := r.slave.RTUPort(t)
		r.port, r.opens = p, r.opens+1
		return modbus.NewRTU(p, modbus.RTUConfig{Baud: 115200, CharBits: 10}), nil
	}
	return r.start(t, cfg)
}

// newTCPRig returns a line over TCP to s.
func newTCPRig(t *testing.T, s *modbustest.Slave, cfg Config) *rig {
	addr := s.ListenTCP(t)
	cfg.Open = func(ctx context.Context) (modbus.Transport, error) { return modbus.DialTCP(ctx, addr) }
	return (&rig{slave: s}).start(t, cfg)
}

func (r *rig) start(t *testing.T, cfg Config) *rig {
	if cfg.Name == "" {
		cfg.Name = "modbus.test"
	}
	if cfg.Timeout == 0 {
		// Far beyond an in-memory answer even under load: a request
		// that cannot be sent in time ("timeout: not sent") is a test
		// that fails by the machine's speed.
		cfg.Timeout = 500 * time.Millisecond
	}
	r.line = New(cfg, clock.Real(), nil)
	t.Cleanup(func() { r.line.Close() })
	return r
}

// device makes a device at p and runs it with a reporter. Call run
// after every device is made.
func (r *rig) device(id string, p Point, access device.Access) *Device {
	if p.Interval == 0 {
		p.Interval = 20 * time.Millisecond
	}
	return r.line.Device(device.Descriptor{ID: id, Kind: device.KindModbus, Access: access}, p)
}

// run starts the line and runs each device with its own reporter.
func (r *rig) run(t *testing.T, devs ...*Device) []*reporter {
	r.line.Start()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	reps := make([]*reporter, len(devs))
	for i, d := range devs {
		reps[i] = newReporter()
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx, reps[i]) }()
	}
	return reps
}

// reads counts the slave's read requests of fc at addr for n.
func reads(s *modbustest.Slave, unit, fc byte, addr, n uint16) int {
	c := 0
	for _, q := range s.Requests() {
		if q.Unit == unit && q.Function == fc && q.Addr == addr && q.Count == n {
			c++
		}
	}
	return c
}
