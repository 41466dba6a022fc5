package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// catchUp bounds how long the watchers get, after the last write, to
// receive its value.
const catchUp = 5 * time.Second

// watcher records the hal/value notifications of readDevice that one
// connection receives. It reads them as the read cells' clients read
// their answers — raw messages, the few fields it needs found by their
// bytes — so that 250 watchers at 1 kHz leave the cores to the gateway
// (a client library decoding every value into structs would take one).
type watcher struct {
	c    msgConn
	seqs []uint64        // in the order received
	lat  []time.Duration // receipt − ts
	last atomic.Uint64   // the highest seq received
	err  error           // why the connection ended before it was closed
	done chan struct{}
}

// valuePrefix starts every hal/value of readDevice, as the Hub encodes it.
var valuePrefix = []byte(`{"jsonrpc":"2.0","method":"hal/value","params":{"device":"` + readDevice + `",`)

func (w *watcher) run(ctx context.Context) {
	defer close(w.done)
	for {
		b, err := w.c.recv(ctx)
		at := time.Now()
		if err != nil {
			w.err = err
			return
		}
		if !bytes.HasPrefix(b, valuePrefix) {
			continue
		}
		seq, ts, ok := seqAndTS(b[len(valuePrefix):])
		if !ok {
			w.err = fmt.Errorf("hal/value without seq or ts: %.200s", b)
			return
		}
		w.seqs = append(w.seqs, seq)
		w.lat = append(w.lat, at.Sub(ts))
		if seq > w.last.Load() {
			w.last.Store(seq)
		}
	}
}

// seqAndTS finds the "ts" and "seq" members of a hal/value's params.
func seqAndTS(b []byte) (seq uint64, ts time.Time, ok bool) {
	_, after, found := bytes.Cut(b, []byte(`"ts":"`))
	if !found {
		return 0, time.Time{}, false
	}
	tsText, after, found := bytes.Cut(after, []byte(`"`))
	if !found {
		return 0, time.Time{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(tsText))
	if err != nil {
		return 0, time.Time{}, false
	}
	_, after, found = bytes.Cut(after, []byte(`"seq":`))
	if !found {
		return 0, time.Time{}, false
	}
	end := bytes.IndexAny(after, ",}")
	if end < 0 {
		return 0, time.Time{}, false
	}
	seq, err = strconv.ParseUint(string(after[:end]), 10, 64)
	return seq, ts, err == nil
}

// fanoutResult is what the fan-out measured.
type fanoutResult struct {
	writes      int           // applied writes
	writeErrors int           // writes answered with an error
	elapsed     time.Duration // from the first write to the last answer
	watchers    int
	received    int // values of readDevice received, all watchers
	gaps        gapStats
	ended       int // watchers whose connection ended before halbench closed it
	lat         latencies
	writeLat    latencies // the writer's hal/write round trips, watched
	aloneLat    latencies // the same writer's before the watchers connected
	rss         int64     // the gateway's, right after the writes, watchers connected; 0 without a pid
	cpuTicks    uint64    // the gateway's CPU during the writes; 0 without a pid
	selfTicks   uint64    // halbench's own, watchers and writer: on one machine they share the cores
	// overflows is how many connections the gateway closed for a full
	// queue during the fan-out; overflowErr why it could not be read.
	overflows   uint64
	overflowErr error
}

// runFanout connects the watchers, then one writer that toggles
// readDevice at s.writeRate for s.fanout, and checks that every watcher
// saw every write's value.
func runFanout(ctx context.Context, s *settings, srv servers, pid int, log *slog.Logger) (fanoutResult, error) {
	// The writer alone first: its p99 with the watchers is compared with
	// this one, taken in the same run.
	log.Info("fan-out: the writer alone", "rate", s.writeRate, "duration", s.fanout)
	alone := runWriter(ctx, s, srv)
	if alone.err != nil {
		return fanoutResult{}, alone.err
	}
	ws, err := dialWatchers(ctx, s, srv)
	if err != nil {
		return fanoutResult{}, err
	}
	defer closeWatchers(ws)

	// The gateway's CPU and halbench's own: on one machine they share
	// the cores.
	pids := []int{pid, os.Getpid()}
	before, err := cpuTicksOf(pids)
	if err != nil {
		return fanoutResult{}, err
	}
	log.Info("fan-out", "watchers", s.watchers, "rate", s.writeRate, "duration", s.fanout)
	overflowsBefore, overflowErr := queueOverflows(ctx, srv)
	wr := runWriter(ctx, s, srv)
	if wr.err != nil {
		return fanoutResult{}, wr.err
	}
	after, err := cpuTicksOf(pids)
	if err != nil {
		return fanoutResult{}, err
	}
	res := fanoutResult{writes: len(wr.seqs), writeErrors: wr.errors, elapsed: wr.elapsed, watchers: s.watchers,
		cpuTicks: after[0] - before[0], selfTicks: after[1] - before[1], writeLat: summarize(wr.lat), aloneLat: summarize(alone.lat)}
	if pid != 0 {
		if res.rss, _, err = memory(pid); err != nil {
			return fanoutResult{}, err
		}
	}
	if len(wr.seqs) > 0 {
		waitCaughtUp(ctx, ws, wr.seqs[len(wr.seqs)-1])
	}
	res.overflowErr = overflowErr
	if overflowErr == nil {
		var after uint64
		after, res.overflowErr = queueOverflows(ctx, srv)
		res.overflows = after - overflowsBefore
	}
	for _, w := range ws {
		select {
		case <-w.done: // ended by the gateway, or by a bad message
			res.ended++
			log.Warn("fan-out: a watcher's connection ended", "err", w.err)
		default:
		}
	}
	closeWatchers(ws) // their notifications end: what they saw is final
	var all []time.Duration
	for _, w := range ws {
		res.received += len(w.seqs)
		res.gaps = res.gaps.add(countGaps(wr.seqs, w.seqs))
		all = append(all, w.lat...)
	}
	res.lat = summarize(all)
	return res, nil
}

// dialWatchers connects s.watchers watchers, alternately over WebSocket
// and TCP, each reading its notifications at once.
func dialWatchers(ctx context.Context, s *settings, srv servers) ([]*watcher, error) {
	ws := make([]*watcher, 0, s.watchers)
	for i := range s.watchers {
		transport := []string{transportWS, transportTCP}[i%2]
		c, err := dialHub(ctx, transport, srv.gateway[transport], srv.token)
		if err != nil {
			closeWatchers(ws)
			return nil, fmt.Errorf("fan-out: watcher %d of %d (the gateway must allow %d connections): %w", i+1, s.watchers, s.watchers+1, err)
		}
		w := &watcher{c: c, done: make(chan struct{})}
		go w.run(context.Background())
		ws = append(ws, w)
	}
	return ws, nil
}

// closeWatchers closes the watchers and waits until each has read its
// last notification. Closing twice is harmless.
func closeWatchers(ws []*watcher) {
	for _, w := range ws {
		w.c.close()
	}
	for _, w := range ws {
		<-w.done
	}
}

// cpuTicksOf reads the CPU time of each process; a pid of 0 reads as 0.
func cpuTicksOf(pids []int) ([]uint64, error) {
	out := make([]uint64, len(pids))
	for i, pid := range pids {
		if pid == 0 {
			continue
		}
		t, err := cpuTicks(pid)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// waitCaughtUp waits until every watcher has received seq, or catchUp
// has passed.
func waitCaughtUp(ctx context.Context, ws []*watcher, seq uint64) {
	deadline := time.Now().Add(catchUp)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		behind := false
		for _, w := range ws {
			if w.last.Load() < seq {
				behind = true
				break
			}
		}
		if !behind {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// writeResult is what the writer did.
type writeResult struct {
	seqs    []uint64        // of the applied writes, ascending
	lat     []time.Duration // of every write, applied or not
	errors  int
	elapsed time.Duration
	err     error // the connection failed
}

// write toggles readDevice on a deadline schedule: write i is due at
// start + i/rate, and goes as soon as it is due and fewer than s.window
// writes are in flight; a writer that falls behind catches up as fast as
// the window allows rather than skip writes. No write is sent after
// s.fanout, so that a gateway slower than the rate shows as a lower
// achieved rate, not as a longer run.
func write(ctx context.Context, c *halclient.Conn, s *settings) writeResult {
	period := time.Second / time.Duration(s.writeRate)
	values := []json.RawMessage{json.RawMessage("true"), json.RawMessage("false")}
	slots := make(chan struct{}, s.window)
	var (
		mu  sync.Mutex
		res writeResult
		wg  sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(s.fanout)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * period)
		if !due.Before(end) || c.Err() != nil || ctx.Err() != nil {
			break
		}
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			<-timer.C
		}
		slots <- struct{}{}
		if !time.Now().Before(end) {
			<-slots
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			t0 := time.Now()
			r, err := c.Write(ctx, readDevice, values[i%2], "")
			lat := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			res.lat = append(res.lat, lat)
			if err != nil || r.Status != openhal.StatusApplied {
				res.errors++
				return
			}
			res.seqs = append(res.seqs, r.Seq)
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.seqs)
	if err := c.Err(); err != nil {
		res.err = fmt.Errorf("fan-out: writer: %w", err)
	}
	if err := ctx.Err(); err != nil {
		res.err = err
	}
	return res
}

// gapStats counts what one or more watchers missed of the writes' values.
type gapStats struct {
	gaps    int // breaks in the sequence: one for each run of missed values
	missed  int // values missed in all
	foreign int // values of the device that no write of the writer made, or that came again or out of order
}

func (g gapStats) add(o gapStats) gapStats {
	return gapStats{gaps: g.gaps + o.gaps, missed: g.missed + o.missed, foreign: g.foreign + o.foreign}
}

// countGaps compares the seqs a watcher received, in order, with the
// seqs of the applied writes, ascending. seq counts value events
// Hub-wide, so a jump in the numbers alone proves nothing: a gap is a
// value whose seq is not the next one of the writes, or writes missing
// at the end.
func countGaps(written, got []uint64) gapStats {
	var g gapStats
	next := 0 // index in written of the value expected next
	for _, seq := range got {
		i, ok := slices.BinarySearch(written, seq)
		if !ok || i < next {
			g.foreign++
			continue
		}
		if i > next {
			g.gaps++
			g.missed += i - next
		}
		next = i + 1
	}
	if next < len(written) {
		g.gaps++
		g.missed += len(written) - next
	}
	return g
}
