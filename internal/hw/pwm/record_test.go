package pwm

import (
	"errors"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
)

// edge is one Out call on a recordPin.
type edge struct {
	at time.Time
	l  gpio.Level
}

// recordPin is a gpio.PinOut that records the time and level of every Out
// and can be made to fail them. It embeds gpiotest.Pin for the rest of
// gpio.PinOut, whose PWM it never uses.
type recordPin struct {
	*gpiotest.Pin

	mu      sync.Mutex
	edges   []edge
	failOut error
	changed chan struct{} // closed and replaced at every Out
}

func newRecordPin() *recordPin {
	return &recordPin{Pin: &gpiotest.Pin{N: "GPIO22", Num: 22}, edges: make([]edge, 0, 1<<14), changed: make(chan struct{})}
}

func (p *recordPin) Out(l gpio.Level) error {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failOut != nil {
		return p.failOut
	}
	p.edges = append(p.edges, edge{now, l})
	close(p.changed)
	p.changed = make(chan struct{})
	return nil
}

func (p *recordPin) fail(err error) {
	p.mu.Lock()
	p.failOut = err
	p.mu.Unlock()
}

// snapshot returns the edges so far and a channel closed at the next Out.
func (p *recordPin) snapshot() ([]edge, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]edge(nil), p.edges...), p.changed
}

// waitEdges waits until at least n edges are recorded, or the deadline.
func (p *recordPin) waitEdges(n int, d time.Duration) ([]edge, error) {
	deadline := time.After(d)
	for {
		e, changed := p.snapshot()
		if len(e) >= n {
			return e, nil
		}
		select {
		case <-changed:
		case <-deadline:
			return e, errors.New("timed out")
		}
	}
}
