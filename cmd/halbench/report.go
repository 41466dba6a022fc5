package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// The targets (the issue's), checked by make bench.
const (
	targetClients     = 64   // the hal/read targets hold at this many clients
	minThroughput     = 0.50 // of the echo server's
	maxP99            = 3.0  // times the echo server's
	maxRSSMiB         = 30   // with s.rssConns connections open
	maxIdleCPUPerCent = 0.5  // of one core, with s.idleClients idle clients
)

// report is every figure of one run.
type report struct {
	s          *settings
	command    string
	gatewayCmd string
	started    time.Time
	cells      []cellResult
	fanout     fanoutResult
	res        resources
}

// row is one line of the table.
type row struct {
	figure, gateway, echo, ratio, target, result string
}

// verdict fills a row's result column.
func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// rows builds the table: the hal/read cells, then the fan-out, then the
// resources.
func (r *report) rows() []row {
	var out []row
	for _, c := range r.cells {
		out = append(out, cellRows(c)...)
	}
	out = append(out, r.fanoutRows()...)
	return append(out, r.resourceRows()...)
}

func cellRows(c cellResult) []row {
	g, e := summarizeRounds(c.gateway), summarizeRounds(c.echo)
	name := fmt.Sprintf("hal/read, %s, %d %s", c.transport, c.clients, plural(c.clients, "client"))
	tp := row{figure: name + ": throughput (req/s)", gateway: fmt.Sprintf("%.0f", g.throughput),
		echo: fmt.Sprintf("%.0f", e.throughput), ratio: ratio(g.throughput, e.throughput)}
	p50 := row{figure: name + ": latency p50", gateway: micros(g.p50), echo: micros(e.p50),
		ratio: ratio(float64(g.p50), float64(e.p50))}
	p99 := row{figure: name + ": latency p99", gateway: micros(g.p99), echo: micros(e.p99),
		ratio: ratio(float64(g.p99), float64(e.p99))}
	if c.clients == targetClients {
		tp.target = fmt.Sprintf("≥ %.2f", minThroughput)
		tp.result = verdict(e.throughput > 0 && g.throughput/e.throughput >= minThroughput)
		p99.target = fmt.Sprintf("≤ %.2f", maxP99)
		p99.result = verdict(e.p99 > 0 && float64(g.p99)/float64(e.p99) <= maxP99)
	}
	return []row{tp, p50, p99}
}

func (r *report) fanoutRows() []row {
	f, s := r.fanout, r.s
	rate := 0.0
	if f.elapsed > 0 {
		rate = float64(f.writes) / f.elapsed.Seconds()
	}
	writes := fmt.Sprintf("%.0f/s (%d in %.1f s)", rate, f.writes, f.elapsed.Seconds())
	if f.writeErrors > 0 {
		writes += fmt.Sprintf(", %d failed", f.writeErrors)
	}
	want := f.writes * f.watchers
	gaps := fmt.Sprintf("%d (%d values missed)", f.gaps.gaps, f.gaps.missed)
	out := []row{
		{figure: "fan-out: writes of sim.led, achieved rate", gateway: writes, target: fmt.Sprintf("asked %d/s", s.writeRate)},
		{figure: fmt.Sprintf("fan-out: values received by %d watchers", f.watchers), gateway: fmt.Sprintf("%d of %d", f.received-f.gaps.foreign, want)},
		{figure: "fan-out: seq gaps", gateway: gaps, target: "0", result: verdict(f.gaps.gaps == 0)},
		{figure: "fan-out: delivery latency p50 (receipt − ts)", gateway: micros(f.lat.p50)},
		{figure: "fan-out: delivery latency p99 (receipt − ts)", gateway: micros(f.lat.p99)},
		overflowRow(f),
	}
	if f.gaps.foreign > 0 {
		out = append(out, row{figure: "fan-out: values of sim.led no write of the writer made, or repeated", gateway: fmt.Sprint(f.gaps.foreign)})
	}
	if f.dropped > 0 {
		out = append(out, row{figure: "fan-out: notifications halbench itself dropped (its fault, not the gateway's)", gateway: fmt.Sprint(f.dropped)})
	}
	if f.elapsed > 0 {
		if r.res.measured {
			out = append(out, row{figure: "fan-out: gateway CPU during the writes (% of one core)", gateway: fmt.Sprintf("%.1f", cpuPercent(f.cpuTicks, f.elapsed))})
		}
		// The watchers run on the same cores as the gateway: what they
		// take, the gateway cannot have.
		out = append(out, row{figure: "fan-out: halbench's own CPU meanwhile (% of one core)", gateway: fmt.Sprintf("%.1f", cpuPercent(f.selfTicks, f.elapsed))})
	}
	return out
}

// overflowRow is the connections the gateway closed for a full queue
// during the fan-out: its watchers read, so none may be.
func overflowRow(f fanoutResult) row {
	r := row{figure: "fan-out: connections closed for a full queue", target: "0"}
	if f.overflowErr != nil {
		r.gateway, r.result = "n/a ("+f.overflowErr.Error()+")", "skipped"
		return r
	}
	r.gateway, r.result = fmt.Sprint(f.overflows), verdict(f.overflows == 0)
	return r
}

func (r *report) resourceRows() []row {
	s := r.s
	rss := row{figure: fmt.Sprintf("RSS with %d connections (MiB)", s.rssConns), target: fmt.Sprintf("< %d", maxRSSMiB)}
	idle := row{figure: fmt.Sprintf("idle CPU, %d clients, %s (%% of one core)", s.idleClients, s.idle), target: fmt.Sprintf("< %.1f", maxIdleCPUPerCent)}
	peak := row{figure: "peak RSS, VmHWM at the end (MiB)"}
	if !r.res.measured {
		for _, x := range []*row{&rss, &idle, &peak} {
			x.gateway, x.result = "n/a (no --pid)", "skipped"
		}
		peak.result = ""
		return []row{rss, idle, peak}
	}
	rss.gateway = mib(r.res.rss)
	rss.result = verdict(r.res.rss < maxRSSMiB<<20)
	idle.gateway = fmt.Sprintf("%.2f", r.res.idleCPU)
	idle.result = verdict(r.res.idleCPU < maxIdleCPUPerCent)
	peak.gateway = mib(r.res.peakRSS)
	return []row{rss, idle, peak}
}

// failed lists the figures whose target was missed.
func (r *report) failed() []string {
	var out []string
	for _, x := range r.rows() {
		if x.result == "FAIL" {
			out = append(out, x.figure)
		}
	}
	return out
}

// write prints the report as markdown: how it was made, then the table.
func (r *report) write(w io.Writer) {
	s := r.s
	fmt.Fprintf(w, "Command: `%s`\n\n", r.command)
	if r.gatewayCmd != "" {
		fmt.Fprintf(w, "Gateway (started by halbench): `%s`\n\n", r.gatewayCmd)
	} else {
		fmt.Fprintf(w, "Gateway: already running at %s and %s\n\n", s.hubWS, s.hubTCP)
	}
	fmt.Fprintf(w, "Machine: %s/%s, %d CPUs, %s; %s\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(),
		runtime.Version(), r.started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "hal/read of %s: median of %d %s of %s (after %s of warm-up each), gateway and echo server interleaved; "+
		"each client sends, waits for the answer, repeats. Ratio = gateway / echo. Fan-out: %d watchers, one writer at %d/s for %s (at most %d writes in flight).\n\n",
		readDevice, s.rounds, plural(s.rounds, "round"), s.duration, s.warmup, s.watchers, s.writeRate, s.fanout, s.window)
	fmt.Fprintln(w, "| figure | gateway | echo | gateway/echo | target | |")
	fmt.Fprintln(w, "|---|--:|--:|--:|---|---|")
	for _, x := range r.rows() {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", x.figure, x.gateway, x.echo, x.ratio, x.target, x.result)
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func micros(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
