// Command pulsegen drives a gpio-sim line with a pulse train, for the
// QEMU tests of the gateway's counters: it writes pull-up and pull-down to
// the line's sysfs pull attribute, each rising edge at start + i×period
// and each falling edge high later (an absolute schedule: a late write
// does not shift the ones after it), but never two writes closer than
// gap. gpio-sim raises one interrupt for edges written faster than the
// kernel handles them, as a real GPIO controller does for edges faster
// than its interrupt: the gap keeps every edge an edge when the guest
// stalls and the train catches up. With -bounce each rising edge rings
// first: up, down, up, written back to back, as a reed switch's contacts
// do (those are meant to merge or be debounced).
//
// It prints two lines when done:
//
//	pulses N elapsed DURATION late DURATION
//	rising T1 T2 ...
//
// late being the most any write came after its time, and T the wall
// clock (Unix nanoseconds) when each rising edge's write returned: the
// train as it really was, which the test judges the counter's rates by.
//
// It is test support, built for the guest by the test (e2e/binaries).
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

type train struct {
	period, high, gap time.Duration
	bounce            bool
}

func main() {
	pull := flag.String("pull", "", "the line's sysfs pull attribute (.../sim_gpioN/pull)")
	n := flag.Int("n", 0, "pulses to make")
	var tr train
	flag.DurationVar(&tr.period, "period", 50*time.Millisecond, "from one rising edge to the next")
	flag.DurationVar(&tr.high, "high", 0, "how long each pulse stays high (default: half the period)")
	flag.DurationVar(&tr.gap, "gap", 0, "the least time between two writes (default: a quarter of the shorter of high and low)")
	flag.BoolVar(&tr.bounce, "bounce", false, "ring at each rising edge: up, down, up")
	flag.Parse()
	if tr.high == 0 {
		tr.high = tr.period / 2
	}
	if tr.gap == 0 {
		tr.gap = min(tr.high, tr.period-tr.high) / 4
	}
	if err := run(*pull, *n, tr); err != nil {
		fmt.Fprintln(os.Stderr, "pulsegen:", err)
		os.Exit(1)
	}
}

func run(path string, n int, tr train) error {
	if path == "" || n < 1 || tr.period <= 0 || tr.high <= 0 || tr.high >= tr.period || tr.gap < 0 {
		return fmt.Errorf("want -pull PATH, -n > 0, 0 < -high < -period and -gap >= 0")
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var last time.Time // the last write
	var late time.Duration
	// edge writes words at due, or gap after the last write if later.
	edge := func(due time.Time, words ...string) error {
		at := due
		if next := last.Add(tr.gap); next.After(at) {
			at = next
		}
		time.Sleep(time.Until(at))
		for _, w := range words {
			if _, err := f.WriteAt([]byte(w), 0); err != nil { // one store of the attribute each
				return err
			}
		}
		last = time.Now()
		late = max(late, last.Sub(due))
		return nil
	}
	up := []string{"pull-up"}
	if tr.bounce {
		up = []string{"pull-up", "pull-down", "pull-up"}
	}
	rising := make([]string, 0, n)
	start := time.Now()
	for i := range n {
		rise := start.Add(time.Duration(i) * tr.period)
		if err := edge(rise, up...); err != nil {
			return err
		}
		rising = append(rising, strconv.FormatInt(last.UnixNano(), 10))
		if err := edge(rise.Add(tr.high), "pull-down"); err != nil {
			return err
		}
	}
	fmt.Printf("pulses %d elapsed %v late %v\n", n, time.Since(start), late)
	fmt.Printf("rising %s\n", strings.Join(rising, " "))
	return nil
}
