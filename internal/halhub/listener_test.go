package halhub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/clock/clocktest"
)

// scriptedListener is a listener whose Accept returns what the test feeds
// it, in order: a connection or an error.
type scriptedListener struct {
	next   chan any // net.Conn or error
	closed chan struct{}
	once   sync.Once
}

func newScriptedListener() *scriptedListener {
	return &scriptedListener{next: make(chan any), closed: make(chan struct{})}
}

func (l *scriptedListener) Accept() (net.Conn, error) {
	select {
	case v := <-l.next:
		if c, ok := v.(net.Conn); ok {
			return c, nil
		}
		return nil, v.(error)
	case <-l.closed:
		return nil, fmt.Errorf("accept: %w", net.ErrClosed)
	}
}

func (l *scriptedListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *scriptedListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// probedListener is a scriptedListener whose Accept can be given a
// deadline, as a *net.TCPListener's can.
type probedListener struct {
	*scriptedListener
	mu       sync.Mutex
	deadline time.Time
}

func (l *probedListener) SetDeadline(t time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deadline = t
	return nil
}

func (l *probedListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	deadline := l.deadline
	l.mu.Unlock()
	if deadline.IsZero() {
		return l.scriptedListener.Accept()
	}
	select {
	case v := <-l.next:
		if c, ok := v.(net.Conn); ok {
			return c, nil
		}
		return nil, v.(error)
	case <-time.After(time.Until(deadline)):
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.ErrDeadlineExceeded}
	}
}

// acceptErr is an accept error as the net package returns it.
func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// Spec §2: an error at accept that is not the peer's (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) never ends the listener: it backs off, 5 ms doubling to
// 1 s, and accepts again; meanwhile /healthz answers 503 naming the
// listener, and 200 again once an accept succeeds. On the old code
// ServeLines returned at the first EMFILE and the listener was gone.
func TestListenerSurvivesAcceptErrors(t *testing.T) {
	clk := clocktest.NewFake(time.Unix(1000, 0))
	th := newTestHub(t, func(o *Options) { o.Clock = clk })
	ln := newScriptedListener()
	served := make(chan error, 1)
	base := clk.Pending()
	go func() { served <- th.hub.ServeLines(th.hub.Guard("scripted", ln, nil)) }()
	healthz := func() (int, string) {
		resp, err := http.Get(th.httpURL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	errs := []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.EMFILE, syscall.EMFILE, syscall.EMFILE, syscall.EMFILE, syscall.EMFILE, syscall.EMFILE}
	want := time.Duration(0)
	for i, errno := range errs {
		ln.next <- acceptErr(errno)
		want = min(max(2*want, acceptBackoffMin), acceptBackoffMax)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := clk.WaitPending(ctx, base+1); err != nil {
			t.Fatalf("failure %d (%v): no back-off timer: %v", i, errno, err)
		}
		cancel()
		g := th.guardNamed(t, "scripted")
		g.mu.Lock()
		got := g.delay
		g.mu.Unlock()
		if got != want {
			t.Errorf("failure %d: back-off %v, want %v", i, got, want)
		}
		if i == 0 {
			if code, body := healthz(); code != http.StatusServiceUnavailable || body != "stuck: listener scripted\n" {
				t.Errorf("/healthz while backing off: %d %q, want 503 naming the listener", code, body)
			}
		}
		clk.Advance(got)
	}
	if n := th.hub.stats.acceptErrors.Load(); n != uint64(len(errs)) {
		t.Errorf("%d accept errors counted, want %d", n, len(errs))
	}

	// It accepts again, and serves.
	server, client := net.Pipe()
	ln.next <- server
	c := th.tcpClient(t, client)
	c.init(th.admin)
	if code, body := healthz(); code != http.StatusOK {
		t.Errorf("/healthz after the listener recovered: %d %q", code, body)
	}
	select {
	case err := <-served:
		t.Fatalf("ServeLines returned: %v", err)
	default:
	}
	ln.Close()
	if err := <-served; err != nil {
		t.Errorf("ServeLines after Close: %v", err)
	}
}

// An error that is the peer's (it went away before accept) is passed over
// at once: no back-off, no failed listener.
func TestListenerPassesPeerErrors(t *testing.T) {
	clk := clocktest.NewFake(time.Unix(1000, 0))
	th := newTestHub(t, func(o *Options) { o.Clock = clk })
	ln := newScriptedListener()
	g := th.hub.Guard("tcp", ln, nil)
	defer g.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := g.Accept()
		accepted <- c
	}()
	for _, errno := range []syscall.Errno{syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EPROTO, syscall.EPERM} {
		ln.next <- acceptErr(errno)
	}
	server, client := net.Pipe()
	defer client.Close()
	ln.next <- server
	if c := <-accepted; c == nil {
		t.Fatal("no connection")
	}
	if down := th.hub.listenersDown(); len(down) != 0 || th.hub.stats.acceptErrors.Load() != 0 {
		t.Errorf("listeners down %v, %d accept errors, after peer errors only", down, th.hub.stats.acceptErrors.Load())
	}
}

// Closing a listener that backs off ends its Accept at once, and it leaves
// /healthz's list.
func TestListenerCloseDuringBackOff(t *testing.T) {
	clk := clocktest.NewFake(time.Unix(1000, 0))
	th := newTestHub(t, func(o *Options) { o.Clock = clk })
	ln := newScriptedListener()
	g := th.hub.Guard("unix", ln, nil)
	done := make(chan error, 1)
	go func() { _, err := g.Accept(); done <- err }()
	ln.next <- acceptErr(syscall.EMFILE)
	waitFor(t, 5*time.Second, "the back-off", func() bool { return len(th.hub.listenersDown()) == 1 })
	g.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waiting after Close")
	}
	if down := th.hub.listenersDown(); len(down) != 0 {
		t.Errorf("a closed listener still listed: %v", down)
	}
}

// guardNamed returns the Hub's guarded listener called name.
func (th *testHub) guardNamed(t *testing.T, name string) *guardedListener {
	t.Helper()
	th.hub.mu.RLock()
	defer th.hub.mu.RUnlock()
	for g := range th.hub.guards {
		if g.name == name {
			return g
		}
	}
	t.Fatalf("no listener %s", name)
	return nil
}

// After a back-off, a listener that can accept again counts as accepting
// even if nobody connects: its accept waits a short while without error.
// (On Linux an accept with no descriptor left fails at once, whether or
// not a peer waits.)
func TestListenerRecoversWithoutPeers(t *testing.T) {
	clk := clocktest.NewFake(time.Unix(1000, 0))
	th := newTestHub(t, func(o *Options) { o.Clock = clk })
	ln := &probedListener{scriptedListener: newScriptedListener()}
	base := clk.Pending()
	g := th.hub.Guard("probed", ln, nil)
	defer g.Close()
	go g.Accept()
	ln.next <- acceptErr(syscall.EMFILE)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := clk.WaitPending(ctx, base+1); err != nil {
		t.Fatal(err)
	}
	if down := th.hub.listenersDown(); len(down) != 1 {
		t.Fatalf("listeners down: %v", down)
	}
	clk.Advance(acceptBackoffMin)
	waitFor(t, 5*time.Second, "the listener to count as accepting", func() bool { return len(th.hub.listenersDown()) == 0 })
	ln.mu.Lock()
	deadline := ln.deadline
	ln.mu.Unlock()
	if !deadline.IsZero() {
		t.Errorf("the probe's deadline %v is left on the listener", deadline)
	}
}
