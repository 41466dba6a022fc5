package adapter

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto/reference"
)

// wait bounds every wait of the tests: they wait for events, never sleep.
const wait = 5 * time.Second

// pipeRun is one Run of an adapter over pipes, seen from the daemon's
// side.
type pipeRun struct {
	t    *testing.T
	in   *io.PipeWriter // daemon → adapter
	out  chan string    // adapter → daemon, one frame a line
	done chan error     // Run's result
}

// start runs a over pipes until the test ends.
func start(t *testing.T, a Adapter) *pipeRun {
	t.Helper()
	if a.Name == "" {
		a.Name, a.Version = "notifier", "0.1.0"
	}
	a.Logger = discard()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipeRun{t: t, in: inW, out: make(chan string, 1024), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := a.Run(ctx, inR, outW)
		outW.Close()
		p.done <- err
	}()
	go func() {
		defer close(p.out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			p.out <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
	})
	return p
}

// send writes one frame from the daemon.
func (p *pipeRun) send(frame string) {
	p.t.Helper()
	sent := make(chan error, 1)
	go func() {
		_, err := io.WriteString(p.in, frame+"\n")
		sent <- err
	}()
	select {
	case err := <-sent:
		if err != nil {
			p.t.Fatalf("send %s: %v", frame, err)
		}
	case <-time.After(wait):
		p.t.Fatalf("send %s: not read within %v", frame, wait)
	}
}

// recv returns the adapter's next frame.
func (p *pipeRun) recv() string {
	p.t.Helper()
	select {
	case line, ok := <-p.out:
		if !ok {
			p.t.Fatal("recv: the adapter closed its output")
		}
		return line
	case <-time.After(wait):
		p.t.Fatalf("recv: nothing within %v", wait)
	}
	return ""
}

// expect receives the next frame and compares it with want.
func (p *pipeRun) expect(want string) {
	p.t.Helper()
	if got := p.recv(); got != want {
		p.t.Fatalf("frame:\n got %s\nwant %s", got, want)
	}
}

// result waits for Run to return.
func (p *pipeRun) result() error {
	p.t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(wait):
		p.t.Fatalf("Run did not return within %v", wait)
	}
	return nil
}

// handshake runs the seed's handshake (the adapter must be
// notifier/0.1.0), byte for byte.
func (p *pipeRun) handshake() {
	p.t.Helper()
	p.send(string(reference.Bytes("initialize")))
	p.expect(string(reference.Bytes("initialize_result")))
	p.send(string(reference.Bytes("initialized")))
}

// initFrame is an initialize request with the given protocols and
// max_line, the rest as in the seed.
func initFrame(protocols string, maxLine int) string {
	s := string(reference.Bytes("initialize"))
	s = strings.Replace(s, `"protocols":[1]`, `"protocols":`+protocols, 1)
	return strings.Replace(s, `"max_line":262144`, fmt.Sprintf(`"max_line":%d`, maxLine), 1)
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
