package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func startTestEcho(t *testing.T) *echoServer {
	t.Helper()
	e, err := startEcho("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestEchoWebSocket(t *testing.T) {
	e := startTestEcho(t)
	ctx := testContext(t)
	c, _, err := websocket.Dial(ctx, e.wsURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(maxEchoMessage)
	for _, m := range []struct {
		typ websocket.MessageType
		msg string
	}{
		{websocket.MessageText, string(readRequest())},
		{websocket.MessageText, "x"},
		{websocket.MessageBinary, "\x00\x01\xff"},
		{websocket.MessageText, strings.Repeat("long ", 20000)},
	} {
		if err := c.Write(ctx, m.typ, []byte(m.msg)); err != nil {
			t.Fatal(err)
		}
		typ, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if typ != m.typ || string(got) != m.msg {
			t.Errorf("sent %v %.40q, got %v %.40q", m.typ, m.msg, typ, got)
		}
	}
}

func TestEchoTCP(t *testing.T) {
	e := startTestEcho(t)
	ctx := testContext(t)
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(e.tcpURL(), "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	long := strings.Repeat("y", 200<<10) // longer than the server's buffer
	sent := []string{string(readRequest()), "", "two lines\r", "in one write", long}
	var all bytes.Buffer
	for _, l := range sent {
		all.WriteString(l + "\n")
	}
	go c.Write(all.Bytes())
	r := bufio.NewReader(c)
	for _, want := range sent {
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if got != want+"\n" {
			t.Errorf("sent %.40q, got %.40q", want, got)
		}
	}
}

// The echo clients halbench measures with get their message back.
func TestEchoClients(t *testing.T) {
	e := startTestEcho(t)
	ctx := testContext(t)
	for name, transport := range map[string]string{e.wsURL(): transportWS, e.tcpURL(): transportTCP} {
		r, err := dialEcho(ctx, transport, name, readRequest())
		if err != nil {
			t.Fatal(err)
		}
		s, err := measure(ctx, []requester{r}, 0, 50*time.Millisecond)
		r.close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.lat.n == 0 || s.throughput <= 0 || s.lat.p50 <= 0 || s.lat.p50 > s.lat.p99 {
			t.Errorf("%s: %d samples, %.0f/s, p50 %s, p99 %s", name, s.lat.n, s.throughput, s.lat.p50, s.lat.p99)
		}
	}
}
