package pwm

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/device"
)

// MaxSoftwareHz is the highest frequency a Software PWM accepts. The Go
// runtime's timers wake up to about a millisecond late (see the package
// documentation for the figures): at 100 Hz that is a tenth of a period,
// above it single pulses stop resembling the duty cycle asked for and
// whole periods start to be skipped.
const MaxSoftwareHz = 100

// Software is a pwm device on a plain GPIO line, for lines with no PWM
// block behind them: a goroutine drives the line high and low on a
// schedule of deadlines. periph's PinOut.PWM is no help there: gpioioctl
// (host v3.8.5) answers "PWM() not implemented".
//
// Each edge waits on a time.Timer for its deadline, computed from the
// waveform's start (rise k at start + k·period, its fall at rise k + high
// time), so late edges do not add up: the frequency is exact on average
// and only each edge jitters. When the goroutine falls a whole period
// behind (the machine was busy), it skips the missed periods rather than
// catch up with a burst of short pulses.
//
// 0 % and 100 % are steady levels with no goroutine. A new duty cycle
// between them takes effect at the next period's rise, without
// restarting the waveform.
type Software struct {
	desc   device.Descriptor
	pin    gpio.PinOut
	period time.Duration
	log    *slog.Logger

	high atomic.Int64 // the running waveform's high time, in ns

	mu     sync.Mutex
	stop   chan struct{} // closed to end the goroutine; nil when steady
	done   chan struct{} // closed by the goroutine when it ends
	closed bool
}

var _ device.Writer = (*Software)(nil)

// NewSoftware returns a Software PWM on pin at freqHz (above 0, at most
// MaxSoftwareHz) and drives it to initial % at once.
func NewSoftware(desc device.Descriptor, pin gpio.PinOut, freqHz, initial float64) (*Software, error) {
	return newSoftware(desc, pin, freqHz, initial, MaxSoftwareHz)
}

// newSoftware is NewSoftware with another bound, so that the jitter test
// can show what happens above MaxSoftwareHz.
func newSoftware(desc device.Descriptor, pin gpio.PinOut, freqHz, initial, maxHz float64) (*Software, error) {
	desc = describe(desc)
	if pin == nil {
		return nil, fmt.Errorf("software pwm %s: no pin", desc.ID)
	}
	s := &Software{desc: desc, pin: pin, log: slog.Default().With("device", desc.ID, "pin", pin.Name())}
	if freqHz > maxHz {
		return nil, s.errorf("frequency %v Hz is above the software PWM's %v Hz (use a hardware PWM channel)", freqHz, maxHz)
	}
	var err error
	if s.period, err = periodOf(freqHz); err != nil {
		return nil, s.errorf("%w", err)
	}
	if _, err := dutyValue(initial); err != nil {
		return nil, s.errorf("initial value: %w", err)
	}
	if err := s.apply(initial); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Software) errorf(format string, args ...any) error {
	return fmt.Errorf("software pwm %s on %s: %w", s.desc.ID, s.pin.Name(), fmt.Errorf(format, args...))
}

// Descriptor implements device.Device.
func (s *Software) Descriptor() device.Descriptor { return s.desc }

// Period is the waveform's period: 1/frequency, rounded to the nanosecond.
func (s *Software) Period() time.Duration { return s.period }

// Write sets the duty cycle to req.Value, a number from 0 to 100 (%).
// Setting the line does not block, so ctx is only checked before.
func (s *Software) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return device.WriteResult{}, err
	}
	v, err := dutyValue(req.Value)
	if err != nil {
		return device.WriteResult{}, s.errorf("%w", err)
	}
	return device.WriteResult{}, s.apply(v)
}

// apply drives the line to a duty cycle of v %.
func (s *Software) apply(v float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.errorf("closed")
	}
	h := highTime(s.period, v)
	if h == 0 || h == s.period {
		s.halt()
		return s.out(gpio.Level(h == s.period))
	}
	s.high.Store(int64(h))
	if s.running() {
		return nil
	}
	// The first rise is made here, so that a line that cannot be set
	// fails the write rather than a goroutine nobody waits for.
	start := time.Now()
	if err := s.out(gpio.High); err != nil {
		return err
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.run(start, s.stop, s.done)
	return nil
}

// running reports whether the goroutine is toggling the line. It is not
// after it failed to set the line; the next write starts it again.
func (s *Software) running() bool {
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// halt ends the goroutine, if any, and waits for it: once halt returns
// the goroutine will not touch the line again.
func (s *Software) halt() {
	if s.stop == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.stop, s.done = nil, nil
}

func (s *Software) out(l gpio.Level) error {
	if err := s.pin.Out(l); err != nil {
		return s.errorf("set %s: %w", l, err)
	}
	return nil
}

// run toggles the line from start, where the first rise was made, until
// stop is closed or setting the line fails.
func (s *Software) run(start time.Time, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	rise := start
	for {
		if !sleepUntil(t, rise.Add(time.Duration(s.high.Load())), stop) || !s.edge(gpio.Low) {
			return
		}
		rise = rise.Add(s.period)
		if late := time.Since(rise); late >= s.period {
			rise = rise.Add((late/s.period + 1) * s.period)
		}
		if !sleepUntil(t, rise, stop) || !s.edge(gpio.High) {
			return
		}
	}
}

// edge sets the line from the goroutine; a failure ends the waveform, is
// logged, and shows again at the next write, which sets the line itself.
func (s *Software) edge(l gpio.Level) bool {
	if err := s.out(l); err != nil {
		s.log.Error("software pwm stopped", "err", err)
		return false
	}
	return true
}

// sleepUntil waits on t until at, and reports false if stop was closed
// first. With Go 1.23's timers, Reset needs no draining of t.C.
func sleepUntil(t *time.Timer, at time.Time, stop <-chan struct{}) bool {
	d := time.Until(at)
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	t.Reset(d)
	select {
	case <-t.C:
		return true
	case <-stop:
		t.Stop()
		return false
	}
}

// Close ends the waveform and leaves the line low, as a disabled hardware
// channel does. A second Close does nothing.
func (s *Software) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.halt()
	return s.out(gpio.Low)
}
