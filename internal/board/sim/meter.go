package sim

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/clock"
)

// Identity is what sim.meter answers to *IDN?.
const Identity = "OpenHAL,SIM-METER,0,0.1"

// meter is the instrument behind sim.meter: it sits on one end of a pipe
// whose other end is an ordinary serial.LineDevice, so that the sim goes
// through the same line-device code as a real instrument on a real port.
// It answers *IDN? and MEAS? (case-insensitive, as SCPI), ignores empty
// lines, answers anything else with "ERR unknown command", and sends a
// reading line of its own every interval.
type meter struct {
	port     io.ReadWriteCloser
	clk      clock.Clock
	interval time.Duration // 0: no periodic readings
	temp     func() float64

	mu    sync.Mutex // one line at a time on the port; guards timer
	timer clock.Timer
	done  bool
}

// run serves the port until it closes or ctx is done.
func (m *meter) run(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { m.port.Close() })
	defer stop()
	defer m.stop()
	m.arm()
	sc := bufio.NewScanner(m.port)
	for sc.Scan() {
		if answer, ok := m.answer(sc.Text()); ok {
			if m.send(answer) != nil {
				return
			}
		}
	}
}

func (m *meter) answer(cmd string) (string, bool) {
	switch strings.ToUpper(strings.TrimSpace(cmd)) {
	case "":
		return "", false
	case "*IDN?":
		return Identity, true
	case "MEAS?":
		return m.reading(), true
	}
	return "ERR unknown command", true
}

func (m *meter) reading() string { return fmt.Sprintf("%.3f", m.temp()) }

func (m *meter) send(line string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := io.WriteString(m.port, line+"\n")
	return err
}

// arm schedules the next periodic reading.
func (m *meter) arm() {
	if m.interval <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		m.timer = m.clk.AfterFunc(m.interval, m.tick)
	}
}

func (m *meter) tick() {
	if m.send(m.reading()) != nil {
		return // port closed: run is ending
	}
	m.arm()
}

func (m *meter) stop() {
	m.port.Close() // first: it ends a tick blocked on the port
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = true
	if m.timer != nil {
		m.timer.Stop()
	}
}
