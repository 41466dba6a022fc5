// Command pulsegen drives a gpio-sim line for the QEMU tests of the
// gateway's counters, by writing pull-up and pull-down to the line's
// sysfs pull attribute.
//
// As a pulse train (-n): each rising edge at start + i×period and each
// falling edge high later (an absolute schedule: a late write does not
// shift the ones after it), never two writes closer than gap. With -irq
// NAME (the line's consumer, which names its interrupt) it also waits,
// after each rising edge, until the kernel's interrupt thread for the
// line has run: the kernel stamps and numbers an edge in that thread, and
// edges that come before it has run for the last one are merged into one
// event, unnumbered, as on a real controller. A TCG guest on a loaded
// host stalls a vCPU for hundreds of milliseconds, and that thread with
// it; waiting makes every pulse written an edge the kernel reports, so
// that the test knows the count the counter must reach. It prints:
//
//	pulses N elapsed DURATION late DURATION
//	rising FROM1-TO1 FROM2-TO2 ...
//
// late being the most any write came after its time, and FROM-TO, in
// wall-clock Unix nanoseconds, when each rising edge may have been
// stamped by the kernel: from the start of its write to when the
// interrupt thread was seen to have run (with -irq; else the write's
// return). That is the train as it really was, which the test judges the
// counter's rates by.
//
// With -write WORDS it writes the comma-separated words back to back
// and exits: "pull-up,pull-down,pull-up" is a closing contact that
// rings.
//
// It is test support, built for the guest by the test (e2e/binaries).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type train struct {
	n                 int
	period, high, gap time.Duration
	irq               string // the line's consumer; "" waits for nothing
}

func main() {
	pull := flag.String("pull", "", "the line's sysfs pull attribute (.../sim_gpioN/pull)")
	write := flag.String("write", "", "write these comma-separated words back to back, and exit")
	var tr train
	flag.IntVar(&tr.n, "n", 0, "pulses to make")
	flag.DurationVar(&tr.period, "period", 50*time.Millisecond, "from one rising edge to the next")
	flag.DurationVar(&tr.high, "high", 0, "how long each pulse stays high (default: half the period)")
	flag.DurationVar(&tr.gap, "gap", 0, "the least time between two writes (default: a quarter of the shorter of high and low)")
	flag.StringVar(&tr.irq, "irq", "", "the line's consumer: wait for its interrupt thread after each rising edge")
	flag.Parse()
	if tr.high == 0 {
		tr.high = tr.period / 2
	}
	if tr.gap == 0 {
		tr.gap = min(tr.high, tr.period-tr.high) / 4
	}
	var err error
	if *write != "" {
		err = words(*pull, strings.Split(*write, ","))
	} else {
		err = run(*pull, tr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pulsegen:", err)
		os.Exit(1)
	}
}

func words(path string, ws []string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, w := range ws {
		if _, err := f.WriteAt([]byte(w), 0); err != nil {
			return err
		}
	}
	return nil
}

func run(path string, tr train) error {
	if path == "" || tr.n < 1 || tr.period <= 0 || tr.high <= 0 || tr.high >= tr.period || tr.gap < 0 {
		return errors.New("want -pull PATH, -n > 0, 0 < -high < -period and -gap >= 0")
	}
	handled := func() (int, error) { return 0, nil }
	if tr.irq != "" {
		status, err := irqThread(tr.irq)
		if err != nil {
			return err
		}
		handled = func() (int, error) { return switches(status) }
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var began, last time.Time // the last write's start and end
	var late time.Duration
	// edge writes word at due, or gap after the last write if later.
	edge := func(due time.Time, word string) error {
		at := due
		if next := last.Add(tr.gap); next.After(at) {
			at = next
		}
		time.Sleep(time.Until(at))
		began = time.Now()
		if _, err := f.WriteAt([]byte(word), 0); err != nil { // one store of the attribute
			return err
		}
		last = time.Now()
		late = max(late, last.Sub(due))
		return nil
	}
	rising := make([]string, 0, tr.n)
	start := time.Now()
	for i := range tr.n {
		rise := start.Add(time.Duration(i) * tr.period)
		before, err := handled()
		if err != nil {
			return err
		}
		if err := edge(rise, "pull-up"); err != nil {
			return err
		}
		stamped := last
		if tr.irq != "" {
			if err := waitHandled(handled, before); err != nil {
				return fmt.Errorf("pulse %d: %w", i+1, err)
			}
			stamped = time.Now()
		}
		rising = append(rising, fmt.Sprintf("%d-%d", began.UnixNano(), stamped.UnixNano()))
		if err := edge(rise.Add(tr.high), "pull-down"); err != nil {
			return err
		}
	}
	fmt.Printf("pulses %d elapsed %v late %v\n", tr.n, time.Since(start), late)
	fmt.Printf("rising %s\n", strings.Join(rising, " "))
	return nil
}

// waitHandled waits until the interrupt thread has run since it had run
// before times. It polls /proc: test support, with nothing to wake it.
func waitHandled(handled func() (int, error), before int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := handled()
		if err != nil || n > before {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("the line's interrupt thread did not run within 10s")
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// irqThread finds the status file of the interrupt thread of the line
// whose consumer is name: /proc/interrupts names the interrupt after it
// ("... Edge      bench.flow"), and the thread is "irq/N-<name>" (its comm
// cut to 15 bytes).
func irqThread(name string) (string, error) {
	b, err := os.ReadFile("/proc/interrupts")
	if err != nil {
		return "", err
	}
	irq := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[len(f)-1] == name && strings.HasSuffix(f[0], ":") {
			irq = strings.TrimSuffix(f[0], ":")
		}
	}
	if irq == "" {
		return "", fmt.Errorf("no interrupt named %s in /proc/interrupts", name)
	}
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		comm, err := os.ReadFile(c)
		if err == nil && strings.HasPrefix(string(comm), "irq/"+irq+"-") {
			return filepath.Join(filepath.Dir(c), "status"), nil
		}
	}
	return "", fmt.Errorf("no thread irq/%s-%s", irq, name)
}

// switches reads how many times the thread has gone to sleep of its own
// accord: once each time it has handled its interrupt.
func switches(status string) (int, error) {
	b, err := os.ReadFile(status)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("%s: no voluntary_ctxt_switches", status)
}
