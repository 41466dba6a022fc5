package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// The targets (issue 17's), checked by make bench. Each ratio is the
// gateway's figure over its limit's in the same run: the echo server's
// for reads, the audit log's own synced appends for writes, the writer
// alone for the fan-out's p99.
const (
	oneClientThroughput = 0.50 // hal/read, 1 client: throughput, at least
	oneClientP50        = 2.0  // hal/read, 1 client: p50, at most
	manyClients         = 64   // the many-clients targets hold at this many clients
	manyThroughput      = 0.75 // hal/read, 64 clients: throughput, at least
	manyP99             = 1.5  // hal/read, 64 clients: p99, at most
	writesOfAppends     = 0.70 // hal/write, 64 clients: writes/s of the audit log's appends/s, at least
	watchedWriterP99    = 1.5  // fan-out: the writer's p99 watched over alone, at most
	maxRSSMiB           = 20   // with s.rssConns idle connections
	maxFanoutRSSMiB     = 40   // right after the fan-out
	maxIdleCPUPerCent   = 0.1  // of one core, with s.idleClients clients and s.idleAdapters adapters
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
	unit := "req/s"
	if c.write {
		unit = "writes/s; limit: the audit log's synced appends/s, one at a time"
	}
	tp := row{figure: c.name() + ": throughput (" + unit + ")", gateway: fmt.Sprintf("%.0f", g.throughput),
		echo: fmt.Sprintf("%.0f", e.throughput), ratio: ratio(g.throughput, e.throughput)}
	p50 := row{figure: c.name() + ": latency p50", gateway: micros(g.p50), echo: micros(e.p50),
		ratio: ratio(float64(g.p50), float64(e.p50))}
	p99 := row{figure: c.name() + ": latency p99", gateway: micros(g.p99), echo: micros(e.p99),
		ratio: ratio(float64(g.p99), float64(e.p99))}
	atLeast := func(x *row, got, limit, want float64) {
		x.target = fmt.Sprintf("≥ %.2f", want)
		x.result = verdict(limit > 0 && got/limit >= want)
	}
	atMost := func(x *row, got, limit time.Duration, want float64) {
		x.target = fmt.Sprintf("≤ %.2f", want)
		x.result = verdict(limit > 0 && float64(got)/float64(limit) <= want)
	}
	switch {
	case c.write && c.clients == manyClients:
		atLeast(&tp, g.throughput, e.throughput, writesOfAppends)
	case c.write:
	case c.clients == 1:
		atLeast(&tp, g.throughput, e.throughput, oneClientThroughput)
		atMost(&p50, g.p50, e.p50, oneClientP50)
	case c.clients == manyClients:
		atLeast(&tp, g.throughput, e.throughput, manyThroughput)
		atMost(&p99, g.p99, e.p99, manyP99)
	}
	out := []row{tp, p50, p99}
	if c.shared != nil {
		sh := summarizeRounds(c.shared)
		out = append(out, row{figure: fmt.Sprintf("%s: throughput beside %d appenders sharing the audit log's syncs (no target: each write also sends its value to every client)", c.name(), c.clients),
			gateway: fmt.Sprintf("%.0f", g.throughput), echo: fmt.Sprintf("%.0f", sh.throughput), ratio: ratio(g.throughput, sh.throughput)})
	}
	return out
}

func (r *report) fanoutRows() []row {
	f, s := r.fanout, r.s
	if !s.runs("fanout") {
		return []row{notRun("fan-out")}
	}
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
		{figure: fmt.Sprintf("fan-out: the writer's hal/write p50, %d watchers (beside: the writer alone)", f.watchers),
			gateway: micros(f.writeLat.p50), echo: micros(f.aloneLat.p50), ratio: ratio(float64(f.writeLat.p50), float64(f.aloneLat.p50))},
		writerRow(f),
		overflowRow(f),
	}
	if f.gaps.foreign > 0 {
		out = append(out, row{figure: "fan-out: values of sim.led no write of the writer made, or repeated", gateway: fmt.Sprint(f.gaps.foreign)})
	}
	out = append(out, row{figure: "fan-out: watchers whose connection ended", gateway: fmt.Sprint(f.ended), target: "0", result: verdict(f.ended == 0)})
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

// writerRow is the writer's p99 with the watchers beside its p99 alone:
// the watchers must not slow a client that acts.
func writerRow(f fanoutResult) row {
	return row{figure: fmt.Sprintf("fan-out: the writer's hal/write p99, %d watchers (limit: the writer alone)", f.watchers),
		gateway: micros(f.writeLat.p99), echo: micros(f.aloneLat.p99), ratio: ratio(float64(f.writeLat.p99), float64(f.aloneLat.p99)),
		target: fmt.Sprintf("≤ %.2f", watchedWriterP99),
		result: verdict(f.aloneLat.p99 > 0 && float64(f.writeLat.p99)/float64(f.aloneLat.p99) <= watchedWriterP99)}
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
	rss := row{figure: fmt.Sprintf("RSS with %d idle connections (MiB)", s.rssConns), target: fmt.Sprintf("≤ %d", maxRSSMiB)}
	after := row{figure: fmt.Sprintf("RSS right after the fan-out, %d watchers connected (MiB)", s.watchers), target: fmt.Sprintf("≤ %d", maxFanoutRSSMiB)}
	idle := row{figure: fmt.Sprintf("idle CPU, %d clients, %d adapters, %s (%% of one core)", s.idleClients, s.idleAdapters, s.idle),
		target: fmt.Sprintf("≤ %.2f", maxIdleCPUPerCent)}
	peak := row{figure: "peak RSS, VmHWM at the end (MiB)"}
	withAdapters := row{figure: fmt.Sprintf("RSS with %d idle connections and %d idle adapters, the idle CPU's gateway (MiB)", s.rssConns, s.idleAdapters)}
	if !r.res.measured {
		for _, x := range []*row{&rss, &after, &idle, &peak} {
			x.gateway, x.result = "n/a (no --pid)", "skipped"
		}
		peak.result = ""
		return []row{rss, after, idle, peak}
	}
	rss.gateway, rss.result = mib(r.res.rss), verdict(r.res.rss <= maxRSSMiB<<20)
	after.gateway, after.result = mib(r.fanout.rss), verdict(r.fanout.rss <= maxFanoutRSSMiB<<20)
	idle.gateway = fmt.Sprintf("%.3f", r.res.idleCPU)
	idle.result = verdict(r.res.idleCPU <= maxIdleCPUPerCent)
	for x, section := range map[*row]string{&rss: "rss", &after: "fanout", &idle: "idle"} {
		if !s.runs(section) {
			x.gateway, x.result = "n/a (not in --only)", "skipped"
		}
	}
	peak.gateway = mib(r.res.peakRSS)
	if r.res.adaptersRSS == 0 {
		return []row{rss, after, idle, peak}
	}
	withAdapters.gateway = mib(r.res.adaptersRSS)
	return []row{rss, after, idle, withAdapters, peak}
}

// notRun is the row of a section --only left out.
func notRun(section string) row {
	return row{figure: section, gateway: "n/a (not in --only)", result: "skipped"}
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
	fmt.Fprintf(w, "hal/read of %s and hal/write of %s: median of %d %s of %s (after %s of warm-up each), gateway and its limit interleaved; "+
		"each client sends a request encoded once, waits for the answer, checks it, repeats. The limit of a read is a raw echo server over the same transport "+
		"(the same clients); of an audited write, the audit log's own synced appends by as many appenders on the same disk. "+
		"Fan-out: %d watchers, one writer at %d/s for %s (at most %d writes in flight), first alone, then watched.\n\n",
		readDevice, writeDevice, s.rounds, plural(s.rounds, "round"), s.duration, s.warmup, s.watchers, s.writeRate, s.fanout, s.window)
	fmt.Fprintln(w, "| figure | gateway | limit | gateway/limit | target | |")
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
