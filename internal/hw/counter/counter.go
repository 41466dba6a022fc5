// Package counter counts pulses — a flow meter's, an anemometer's, a
// kWh meter's S0 output — from the times of their edges, as the kernel
// stamps them on a GPIO line: a total that survives restarts, and a
// rate.
//
// An edge closer than the debounce time to the last one counted is
// bounce, not a pulse (a reed switch's contacts ring for about a
// millisecond). The rate is that of a frequency counter with a gate: the
// pulses counted in the last window, divided by the window, so it is
// known to ±1 pulse per window and falls to 0 one window after the
// pulses stop.
//
// Device is the `counter` device of a board's configuration: a Tally fed
// with the edges of one GPIO line as the kernel reports them
// (internal/hw/gpioevent), publishing {count, rate}, its total kept in
// the state directory.
package counter

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/atomicfile"
)

// DefaultWindow is the rate's window a counter is given unless its
// configuration says otherwise: a gate of one second, so the rate in Hz
// is known to ±1 Hz and falls to 0 a second after the pulses stop.
const DefaultWindow = time.Second

// MaxKept bounds the edges a Tally keeps for its rate: past it, in one
// window, the rate is taken over the time the kept ones span instead.
const MaxKept = 1 << 16

// Tally counts pulses. It is safe for concurrent use.
type Tally struct {
	mu       sync.Mutex
	debounce time.Duration
	window   time.Duration
	total    uint64
	last     time.Time   // the last edge counted
	kept     []time.Time // counted edges, oldest first, from head on: those of the last window, MaxKept at most
	head     int
}

// New returns a Tally that starts at total (a count kept from before),
// ignores edges within debounce of the last counted one and measures the
// rate over window.
func New(total uint64, debounce, window time.Duration) (*Tally, error) {
	if debounce < 0 {
		return nil, fmt.Errorf("counter: debounce %v is negative", debounce)
	}
	if window <= 0 {
		return nil, fmt.Errorf("counter: the rate's window %v is not positive", window)
	}
	return &Tally{total: total, debounce: debounce, window: window}, nil
}

// Edge counts an edge stamped at ts, unless it is bounce or out of order
// (an edge before the last counted one: a timestamp from another clock).
// It reports whether the edge was counted.
func (t *Tally) Edge(ts time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && ts.Sub(t.last) < t.debounce || ts.Before(t.last) {
		return false
	}
	t.total++
	t.last = ts
	t.keep(ts)
	return true
}

// AddUntimed counts n pulses whose times are not known (edges the
// kernel dropped when its buffer was full: their number is known from the
// line's sequence numbers). They are in Total, and missing from Rate.
func (t *Tally) AddUntimed(n uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += n
}

func (t *Tally) keep(ts time.Time) {
	if len(t.kept)-t.head == MaxKept {
		t.head++ // full: the oldest goes
	}
	if t.head > len(t.kept)/2 && t.head > 0 {
		t.kept = append(t.kept[:0], t.kept[t.head:]...)
		t.head = 0
	}
	t.kept = append(t.kept, ts)
}

// Total is the pulses counted, with those New started from.
func (t *Tally) Total() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Rate is the pulses per second in the window that ends at now.
func (t *Tally) Rate(now time.Time) float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	from := now.Add(-t.window)
	for t.head < len(t.kept) && !t.kept[t.head].After(from) {
		t.head++
	}
	n := len(t.kept) - t.head
	if n == MaxKept {
		return float64(n) / now.Sub(t.kept[t.head]).Seconds()
	}
	return float64(n) / t.window.Seconds()
}

// stored is the file a total is kept in.
type stored struct {
	Total uint64 `json:"total"`
}

// Load reads a total kept by Save; a file not there is a count from 0.
func Load(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("counter: read the kept total: %w", err)
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return 0, fmt.Errorf("counter: %s is not a kept total: %w", path, err)
	}
	return s.Total, nil
}

// Save keeps total at path, replacing the file whole and synced, so that
// a power cut leaves the last total or the one before, never a torn one.
func Save(path string, total uint64) error {
	b, _ := json.Marshal(stored{Total: total})
	if err := atomicfile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("counter: keep the total: %w", err)
	}
	return nil
}
