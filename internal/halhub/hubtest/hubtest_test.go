package hubtest_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// tappedListener tells of each connection the Hub accepts through it.
type tappedListener struct {
	net.Listener
	transport string
	accepted  chan<- string
}

func (l tappedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted <- l.transport
	}
	return c, err
}

// TestBench: the Hub is served where Listen says, through the wrapped
// listener, off the network after Down and back after Up, and a Restart
// gives it a new bootId on the same address.
func TestBench(t *testing.T) {
	accepted := make(chan string, 10)
	b := hubtest.New(t, hubtest.WrapListener(func(transport string, ln net.Listener) net.Listener {
		return tappedListener{Listener: ln, transport: transport, accepted: accepted}
	}))
	if b.Admin == "" || b.Agent == "" || b.Admin == b.Agent {
		t.Fatalf("tokens %q and %q", b.Admin, b.Agent)
	}
	addr := strings.TrimPrefix(b.Listen("tcp"), "tcp://")
	dial := func(what string, ok bool) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if (err == nil) != ok {
			t.Fatalf("%s: dial %s: %v", what, addr, err)
		}
		if err != nil {
			return
		}
		defer c.Close()
		select {
		case tr := <-accepted:
			if tr != "tcp" {
				t.Errorf("%s: accepted on %q, want tcp", what, tr)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: waited 10 s for the wrapped listener to accept", what)
		}
	}
	dial("listening", true)
	b.Down()
	dial("down", false)
	b.Up()
	dial("up again", true)
	boot := b.Hub().BootID()
	b.Restart()
	if b.Hub().BootID() == boot {
		t.Errorf("bootId %s kept across a restart", boot)
	}
	dial("restarted", true)
}
