package gateway_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
)

// Spec §8 on the real binary: `gateway watch` with a token limited to
// sim.temperature prints no "missed" while hidden devices change (an
// admin toggles sim.led hundreds of times), and does print the loss when
// its values truly coalesce (the watch is stopped with SIGSTOP while
// sim.temperature measures tens of thousands of times): every devSeq
// between the value before the stop and the last one is either printed
// or counted in a "missed" line, and some are counted.
func TestBinaryWatchGapsOfLimitedToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, dir)
	tok := g.addToken(t, "temp-watch", "read", "--devices", "sim.temperature")
	admin, err := dial(t, g.tcp, readAdminToken(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	w := startChild(t, "watch", "--hub", g.tcp, "--token", tok)
	w.out.waitFor(t, 0, watchTS+`sim\.temperature = .* \(devSeq \d+, current\)$`, waitLong)

	// Hidden changes, then one value the watch sees.
	parallel(t, 8, 400, func(ctx context.Context, i int) error {
		_, err := admin.Write(ctx, "sim.led", i%2 == 0, "")
		return err
	})
	first := measure(t, admin)
	at, _ := w.out.waitFor(t, 0, fmt.Sprintf(watchTS+`sim\.temperature = .* \(devSeq %d\)$`, first), waitLong)
	if text := w.out.text(); strings.Contains(text, "missed") {
		t.Fatalf("watch printed missed values while only hidden devices changed:\n%s", text)
	}

	// Real loss: the watch stops reading while its device changes.
	mark := at + 1
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	parallel(t, 16, 40_000, func(ctx context.Context, _ int) error {
		_, err := admin.Read(ctx, "sim.temperature", -1)
		return err
	})
	if err := w.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	end, last := caughtUp(t, w, admin, mark)

	printed, missed, dropped := countSince(t, w.out.text(), mark, end, first)
	t.Logf("devSeq %d to %d: %d printed, %d reported missed (%d of them dropped by the watch itself)", first, last, printed, missed, dropped)
	if printed+missed != last-first {
		t.Errorf("printed %d + missed %d values of sim.temperature, want the %d that came after devSeq %d", printed, missed, last-first, first)
	}
	if missed <= dropped {
		t.Errorf("%d values reported missed, %d of them dropped by the watch: the Hub coalesced none while the watch was stopped", missed, dropped)
	}
}

// caughtUp measures sim.temperature until the watch prints the value it
// measured, and returns the index of that line and its devSeq. While the
// watch catches up after SIGCONT it may drop a value (and say so), so a
// measurement it does not print within a second is taken again.
func caughtUp(t *testing.T, w *child, admin *halclient.Conn, from int) (int, uint64) {
	t.Helper()
	deadline := time.Now().Add(4 * waitLong)
	for time.Now().Before(deadline) {
		d := measure(t, admin)
		if i, ok := w.out.find(from, fmt.Sprintf(watchTS+`sim\.temperature = .* \(devSeq %d\)$`, d), time.Second); ok {
			return i, d
		}
	}
	t.Fatalf("the watch never printed a fresh measurement:\n%s", w.out.text())
	return 0, 0
}

// find is waitFor that reports false rather than failing.
func (s *stream) find(from int, pattern string, within time.Duration) (int, bool) {
	re := regexp.MustCompile(pattern)
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for i := from; i < len(s.lines); i++ {
			if re.MatchString(s.lines[i]) {
				s.mu.Unlock()
				return i, true
			}
		}
		from = max(from, len(s.lines))
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return 0, false
		}
	}
}

// measure takes a fresh reading of sim.temperature and returns its devSeq.
func measure(t *testing.T, c *halclient.Conn) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	v, err := c.Read(ctx, "sim.temperature", -1)
	if err != nil || v.DevSeq == 0 {
		t.Fatalf("read sim.temperature: %+v, %v", v, err)
	}
	return v.DevSeq
}

// parallel runs call n times on workers goroutines and fails the test on
// the first error.
func parallel(t *testing.T, workers, n int, call func(ctx context.Context, i int) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitLong)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := call(ctx, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < n && len(errs) == 0; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

var (
	tempLine    = regexp.MustCompile(watchTS + `sim\.temperature = .* \(devSeq (\d+)\)$`)
	missedLine  = regexp.MustCompile(watchTS + `missed (\d+) values? of sim\.temperature$`)
	droppedLine = regexp.MustCompile(watchTS + `dropped (\d+) notifications?: this watch fell behind$`)
)

// countSince counts, in the watch's output from line from to line end,
// the values of sim.temperature printed after devSeq first, the values
// reported missed, and the notifications the watch said it dropped
// itself; any other line there fails the test.
func countSince(t *testing.T, text string, from, end int, first uint64) (printed, missed, dropped uint64) {
	t.Helper()
	lines := strings.Split(text, "\n")
	for _, line := range lines[from : end+1] {
		if m := tempLine.FindStringSubmatch(line); m != nil {
			if n, _ := strconv.ParseUint(m[1], 10, 64); n > first {
				printed++
			}
		} else if m := missedLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseUint(m[1], 10, 64)
			missed += n
		} else if m := droppedLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseUint(m[1], 10, 64)
			dropped += n
		} else {
			t.Errorf("unexpected watch line %q", line)
		}
	}
	return printed, missed, dropped
}
