package halhub

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go h.ServeLines(ln)
	b.Cleanup(func() { ln.Close() })
	conns := make([]*lineClient, clients)
	for i := range conns {
		if conns[i], err = dialLineClient(ln.Addr().String(), tok); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(conns[i].close)
	}
	runLineClients(b, conns)
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
		conns[i] = &lineClient{c: c, r: bufio.NewReader(c)}
		b.Cleanup(conns[i].close)
	}
	runLineClients(b, conns)
}

// benchRequest is the hal/read every client sends; its "params" stand in
// for a result in the echo's answer.
var benchRequest = []byte(`{"jsonrpc":"2.0","id":10000,"method":"hal/read","params":{"device":"sim.led"}}` + "\n")

// runLineClients runs b.N round trips over conns, each client sending its
// next request once its answer is back, and reports the process's CPU
// time per request besides the wall-clock time.
func runLineClients(b *testing.B, conns []*lineClient) {
	req, clients := benchRequest, len(conns)
	var left atomic.Int64
	left.Store(int64(b.N))
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for _, c := range conns {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := c.roundTrip(req); err != nil {
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
	c net.Conn
	r *bufio.Reader
}

func dialLineClient(addr, tok string) (*lineClient, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	lc := &lineClient{c: c, r: bufio.NewReader(c)}
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

// roundTrip sends one request line and reads one line back: no
// notification comes, since nothing is published while it runs. The
// answer must hold a result (the Hub's) or params (the echo's: the
// request itself).
func (lc *lineClient) roundTrip(req []byte) error {
	if _, err := lc.c.Write(req); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	line, err := lc.r.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	if !bytes.Contains(line, []byte(`"result"`)) && !bytes.Contains(line, []byte(`"params"`)) {
		return fmt.Errorf("answer %s, want a result", line)
	}
	return nil
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go h.ServeLines(ln)
	b.Cleanup(func() { ln.Close() })
	inUse := func() (heap, stack uint64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse, m.StackInuse
	}
	for range b.N {
		heap0, stack0 := inUse()
		conns := make([]*lineClient, n)
		for i := range conns {
			if conns[i], err = dialLineClient(ln.Addr().String(), tok); err != nil {
				b.Fatal(err)
			}
		}
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
