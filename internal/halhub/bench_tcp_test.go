package halhub

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/halhub/audit"
)

// BenchmarkTCPRead is hal/read of an output over loopback TCP, the whole
// request path of the Hub (socket read, decode, checks, cache, encode,
// queue, socket write), by 1 and by 64 clients that each wait for their
// answer before sending the next request, as halbench's clients do. It is
// the benchmark that docs/performance.md profiles:
//
//	go test -run '^$' -bench 'TCPRead/clients=1$' -cpuprofile cpu.out ./halhub
func BenchmarkTCPRead(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) { benchTCPRead(b, n) })
	}
}

// BenchmarkTCPEcho is BenchmarkTCPRead's clients against an echo server
// in the same process (one goroutine per connection: read a line, write
// it back): the wire's own cost, beside which the Hub's is read.
func BenchmarkTCPEcho(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) { benchTCPEcho(b, n) })
	}
}

func benchTCPRead(b *testing.B, clients int) {
	h, _, tok := benchHub(b)
	runLineClients(b, dialHubClients(b, serveTCP(b, h), tok, clients), benchRequest)
}

// serveTCP serves h on a loopback TCP listener and returns its address.
func serveTCP(b *testing.B, h *Hub) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go h.ServeLines(ln)
	b.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// dialHubClients opens n initialized clients of the Hub at addr, closed
// when the benchmark ends.
func dialHubClients(b *testing.B, addr, tok string, n int) []*lineClient {
	conns := make([]*lineClient, n)
	for i := range conns {
		c, err := dialLineClient(addr, tok)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		b.Cleanup(c.close)
	}
	return conns
}

func benchTCPEcho(b *testing.B, clients int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadSlice('\n')
					if err != nil {
						return
					}
					if _, err := c.Write(line); err != nil {
						return
					}
				}
			}()
		}
	}()
	conns := make([]*lineClient, clients)
	for i := range conns {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = &lineClient{c: c, r: bufio.NewReader(c), want: []byte(`"params"`)}
		b.Cleanup(conns[i].close)
	}
	runLineClients(b, conns, benchRequest)
}

// benchRequest is the hal/read every reader sends; its "params" stand in
// for a result in the echo's answer.
var benchRequest = []byte(`{"jsonrpc":"2.0","id":10000,"method":"hal/read","params":{"device":"sim.led"}}` + "\n")

// runLineClients runs b.N round trips over conns, each client sending its
// next request (reqs in turn) once its answer is back, and reports the
// process's CPU time per request besides the wall-clock time.
func runLineClients(b *testing.B, conns []*lineClient, reqs ...[]byte) {
	clients := len(conns)
	var left atomic.Int64
	left.Store(int64(b.N))
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for _, c := range conns {
		wg.Go(func() {
			for i := 0; left.Add(-1) >= 0; i++ {
				if err := c.roundTrip(reqs[i%len(reqs)]); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	// The process's CPU time (hub and clients) per request: on a loaded
	// machine it moves far less than the wall-clock ns/op, which counts
	// the time spent waiting for a core.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// lineClient is a bare HAL client over a line transport: a line out, a
// line back.
type lineClient struct {
	c    net.Conn
	r    *bufio.Reader
	want []byte // in the answer
}

func dialLineClient(addr, tok string) (*lineClient, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	lc := &lineClient{c: c, r: bufio.NewReader(c), want: []byte(`"result"`)}
	init := `{"jsonrpc":"2.0","id":0,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"b","version":"1"},"token":"` + tok + `"}}` + "\n"
	if err := lc.roundTrip([]byte(init)); err != nil {
		c.Close()
		return nil, fmt.Errorf("hal/initialize: %w", err)
	}
	if _, err := c.Write([]byte(`{"jsonrpc":"2.0","method":"hal/initialized"}` + "\n")); err != nil {
		c.Close()
		return nil, fmt.Errorf("hal/initialized: %w", err)
	}
	return lc, nil
}

// roundTrip sends one request line and reads lines until the answer:
// one holding lc.want; notifications (a write's hal/value, which every
// client gets) are skipped.
func (lc *lineClient) roundTrip(req []byte) error {
	if _, err := lc.c.Write(req); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	for {
		line, err := lc.r.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("receive: %w", err)
		}
		if bytes.Contains(line, lc.want) {
			return nil
		}
		if !bytes.Contains(line, []byte(`"method":"hal/`)) {
			return fmt.Errorf("answer %s, want %s", line, lc.want)
		}
	}
}

func (lc *lineClient) close() { lc.c.Close() }

// processCPU is the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleConnection is what one idle, initialized TCP connection
// costs the Hub in memory — heap and goroutine stacks — measured over 100
// of them, after a collection: the figure behind halbench's RSS with 100
// idle connections.
func BenchmarkIdleConnection(b *testing.B) {
	const n = 100
	h, _, tok := benchHub(b)
	addr := serveTCP(b, h)
	inUse := func() (heap, stack uint64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse, m.StackInuse
	}
	for range b.N {
		heap0, stack0 := inUse()
		conns := dialHubClients(b, addr, tok, n)
		waitSessions(b, h, n)
		heap1, stack1 := inUse()
		b.ReportMetric(float64(heap1+stack1-heap0-stack0)/n, "bytes/conn")
		b.ReportMetric(float64(stack1-stack0)/n, "stack-bytes/conn")
		for _, c := range conns {
			c.close()
		}
		waitSessions(b, h, 0)
	}
}

// waitSessions waits until the Hub has n sessions whose initialize
// answer has been written.
func waitSessions(b *testing.B, h *Hub, n int) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.RLock()
		got := len(h.sessions)
		h.mu.RUnlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d sessions, want %d", got, n)
		}
		runtime.Gosched()
	}
}

// BenchmarkTCPWrite is hal/write of a low-risk output over loopback TCP,
// audited and synced (an audit log in a temporary folder), by 1 and by
// 64 clients, each writing true and false in turn: the write path with
// its device's turn, the audit log's shared syncs and the hal/value each
// write sends every client.
func BenchmarkTCPWrite(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) { benchTCPWrite(b, n) })
	}
}

func benchTCPWrite(b *testing.B, clients int) {
	log, err := audit.Open(b.TempDir(), audit.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	h, _, tok := benchHub(b, func(o *Options) { o.Audit = log })
	conns := dialHubClients(b, serveTCP(b, h), tok, clients)
	for _, c := range conns {
		c.want = []byte(`"status":"applied"`)
	}
	before := log.Stats()
	runLineClients(b, conns, []byte(`{"jsonrpc":"2.0","id":10000,"method":"hal/write","params":{"device":"sim.led","value":true}}`+"\n"),
		[]byte(`{"jsonrpc":"2.0","id":10000,"method":"hal/write","params":{"device":"sim.led","value":false}}`+"\n"))
	after := log.Stats()
	if syncs := after.Syncs - before.Syncs; syncs > 0 {
		b.ReportMetric(float64(after.Entries-before.Entries)/float64(syncs), "entries/sync")
	}
}

// A cached hal/read allocates nothing (docs/performance.md, change 8):
// the whole request path of BenchmarkTCPRead, whose clients allocate
// nothing either, averages under one allocation a request, so that a
// read of a busy gateway waits on no collection it caused. Allocations
// of the runtime and of the Hub's other goroutines meanwhile are far
// fewer than the requests.
func TestCachedReadAllocatesNothing(t *testing.T) {
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		benchTCPRead(b, 1)
	})
	if r.N == 0 {
		t.Fatal("the benchmark did not run")
	}
	if a := r.AllocsPerOp(); a != 0 {
		t.Errorf("a cached hal/read over TCP: %d allocations a request (%d B), want 0", a, r.AllocedBytesPerOp())
	}
}
