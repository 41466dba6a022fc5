package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// readDevice is the device every hal/read reads: an output, whose value
// the Hub answers from its cache, so that the figure is the Hub's own
// cost and not a device's. writeDevice is the low-risk output the write
// cells write.
const (
	readDevice  = "sim.led"
	writeDevice = "sim.led"
)

// Transports, as the table names them.
const (
	transportWS  = "WebSocket"
	transportTCP = "TCP"
)

// requester does one request and waits for its answer. One goroutine
// uses it at a time.
type requester interface {
	do(ctx context.Context) error
	close()
}

// halReader reads readDevice from the gateway through halclient, as any
// Go agent would.
type halReader struct {
	c      *halclient.Conn
	params json.RawMessage
}

func (h *halReader) do(ctx context.Context) error {
	return h.c.Call(ctx, openhal.MethodRead, h.params, nil)
}

func (h *halReader) close() { h.c.Close() }

// dialReader connects to the gateway and checks, once, that a read of
// readDevice is answered with its value.
func dialReader(ctx context.Context, url, token string) (requester, error) {
	c, err := halclient.Dial(ctx, url, halclient.Options{Token: token, ClientName: "halbench"})
	if err != nil {
		return nil, err
	}
	v, err := c.Read(ctx, readDevice, -1)
	if err == nil && v.Device != readDevice {
		err = fmt.Errorf("hal/read %s answered device %q", readDevice, v.Device)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return &halReader{c: c, params: json.RawMessage(`{"device":"` + readDevice + `"}`)}, nil
}

// readRequest is the hal/read every reader sends, and the message its
// echo client sends, so that both servers move messages of the same size.
func readRequest() []byte {
	return request(openhal.MethodRead, openhal.ReadParams{Device: readDevice})
}

// dialAll opens n requesters, closing those already open if one fails.
func dialAll(ctx context.Context, n int, dial func(context.Context) (requester, error)) ([]requester, error) {
	var out []requester
	for i := range n {
		r, err := dial(ctx)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("connection %d of %d: %w", i+1, n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func closeAll(rs []requester) {
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(r.close)
	}
	wg.Wait()
}

// sample is one round of one server.
type sample struct {
	throughput float64 // answered requests a second
	lat        latencies
}

// measure runs every requester in a loop of its own, sequential (send,
// wait for the answer, repeat), for warmup and then d, and returns the
// figures of the requests sent and answered within d.
func measure(ctx context.Context, rs []requester, warmup, d time.Duration) (sample, error) {
	from := time.Now().Add(warmup)
	to := from.Add(d)
	// A server that stops answering fails the round rather than hang it.
	ctx, cancel := context.WithDeadline(ctx, to.Add(10*time.Second))
	defer cancel()
	lats := make([][]time.Duration, len(rs))
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() { lats[i], errs[i] = loop(ctx, r, from, to) })
	}
	wg.Wait()
	var all []time.Duration
	for i, err := range errs {
		if err != nil {
			return sample{}, fmt.Errorf("client %d: %w", i+1, err)
		}
		all = append(all, lats[i]...)
	}
	return sample{throughput: float64(len(all)) / d.Seconds(), lat: summarize(all)}, nil
}

// loop repeats r's request until to, and returns the latencies of those
// sent at or after from and answered by to.
func loop(ctx context.Context, r requester, from, to time.Time) ([]time.Duration, error) {
	out := make([]time.Duration, 0, 4096)
	for {
		t0 := time.Now()
		if !t0.Before(to) {
			return out, nil
		}
		if err := r.do(ctx); err != nil {
			return out, err
		}
		t1 := time.Now()
		if !t0.Before(from) && !t1.After(to) {
			out = append(out, t1.Sub(t0))
		}
	}
}

// cell is one line of the comparison: what the clients do (read, or
// write against the audit log's own appends), a transport and a number of
// concurrent clients.
type cell struct {
	write     bool
	transport string
	clients   int
}

func (c cell) name() string {
	what := "hal/read"
	if c.write {
		what = "hal/write of " + writeDevice + " (audited)"
	}
	return fmt.Sprintf("%s, %s, %d %s", what, c.transport, c.clients, plural(c.clients, "client"))
}

// cellResult holds every round of both servers for one cell.
type cellResult struct {
	cell
	gateway, echo []sample
	shared        []sample // a write cell's appends by as many appenders as clients; nil for others
}

// servers are the URLs of the gateway and the echo server, by transport,
// and the folder where the audit log's own appends are measured: on the
// gateway's disk.
type servers struct {
	gateway, echo map[string]string
	token         string
	auditDir      string
}

// runCell measures one cell: rounds A/B interleaved, the gateway first in
// even rounds and the echo server first in odd ones, so that a drift in
// the machine's load weighs on both alike. Each side keeps its
// connections for all the rounds.
func runCell(ctx context.Context, s *settings, srv servers, c cell, log *slog.Logger) (cellResult, error) {
	d, err := cellDialers(srv, c)
	if err != nil {
		return cellResult{}, err
	}
	defer d.close()
	res := cellResult{cell: c}
	sides := []*side{{name: "gateway", n: c.clients, dial: d.gateway, to: &res.gateway}, {name: "limit", n: d.limitClients, dial: d.limit, to: &res.echo}}
	if d.shared != nil {
		sides = append(sides, &side{name: "shared", n: c.clients, dial: d.shared, to: &res.shared})
	}
	for _, sd := range sides {
		if sd.rs, err = dialAll(ctx, sd.n, sd.dial); err != nil {
			return cellResult{}, fmt.Errorf("%s: the %s's clients: %w", c.name(), sd.name, err)
		}
		defer closeAll(sd.rs)
	}
	for round := range s.rounds {
		for i := range sides {
			sd := sides[(i+round)%len(sides)]
			smp, err := measure(ctx, sd.rs, s.warmup, s.duration)
			if err != nil {
				return res, fmt.Errorf("%s, round %d: %w", c.name(), round+1, err)
			}
			*sd.to = append(*sd.to, smp)
		}
		g, e := res.gateway[round], res.echo[round]
		log.Info("round", "cell", c.name(), "round", round+1,
			"gateway_rps", int(g.throughput), "limit_rps", int(e.throughput),
			"gateway_p99", g.lat.p99, "limit_p99", e.lat.p99)
	}
	return res, nil
}

// side is one of a cell's measured parties: its clients and their rounds.
type side struct {
	name string
	n    int
	dial func(context.Context) (requester, error)
	rs   []requester
	to   *[]sample
}

// dialers are how a cell's clients are made.
type dialers struct {
	gateway      func(context.Context) (requester, error)
	limit        func(context.Context) (requester, error)
	limitClients int
	shared       func(context.Context) (requester, error) // nil: none
	close        func()
}

// cellDialers returns how a cell's gateway clients and their limit's are
// made. A read's limit is the echo server over the same transport, with
// as many clients. An audited write's is the audit log's own synced
// append, one at a time (the disk's sync rate: what an audited write
// costs), in a log of its own on the gateway's disk; with many clients,
// as many appenders sharing its syncs are measured too (shared), which
// no target uses: every write also sends its value to every client, which
// appending alone does not.
func cellDialers(srv servers, c cell) (dialers, error) {
	url := srv.gateway[c.transport]
	if !c.write {
		msg := readRequest()
		return dialers{
			gateway: func(ctx context.Context) (requester, error) { return dialHubReader(ctx, c.transport, url, srv.token) },
			limit: func(ctx context.Context) (requester, error) {
				return dialEcho(ctx, c.transport, srv.echo[c.transport], msg)
			},
			limitClients: c.clients, close: func() {},
		}, nil
	}
	appends, err := openAppends(srv.auditDir)
	if err != nil {
		return dialers{}, err
	}
	appender := func(context.Context) (requester, error) { return appends.appender(), nil }
	d := dialers{
		gateway: func(ctx context.Context) (requester, error) { return dialHubWriter(ctx, c.transport, url, srv.token) },
		limit:   appender, limitClients: 1, close: appends.close,
	}
	if c.clients > 1 {
		d.shared = appender
	}
	return d, nil
}

// summary is the median over rounds of each figure.
type summary struct {
	throughput float64
	p50, p99   time.Duration
}

func summarizeRounds(ss []sample) summary {
	var tp []float64
	var p50, p99 []time.Duration
	for _, s := range ss {
		tp = append(tp, s.throughput)
		p50 = append(p50, s.lat.p50)
		p99 = append(p99, s.lat.p99)
	}
	return summary{throughput: median(tp), p50: medianDuration(p50), p99: medianDuration(p99)}
}
