// Package mqtttest is a fake mqttbridge.Client, for the bridge's unit
// tests: it records what the bridge publishes and subscribes, and lets a
// test bring the connection up and down and deliver messages.
package mqtttest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/mqttbridge"
)

// Published is one message the bridge published.
type Published struct {
	Topic   string
	Payload string
	Retain  bool
}

// Client is the fake. Attach a handler (the bridge) before Up.
type Client struct {
	mu      sync.Mutex
	h       mqttbridge.Handler
	up      bool
	pubs    []Published
	subs    []string
	changed chan struct{} // closed and replaced at each publish
}

// New returns a fake client, down.
func New() *Client { return &Client{changed: make(chan struct{})} }

// Attach sets the handler told of connections and messages.
func (c *Client) Attach(h mqttbridge.Handler) {
	c.mu.Lock()
	c.h = h
	c.mu.Unlock()
}

func (c *Client) handler() mqttbridge.Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

// Up brings the connection up and tells the handler.
func (c *Client) Up() {
	c.mu.Lock()
	c.up = true
	c.mu.Unlock()
	c.handler().Connected()
}

// Down takes the connection down (Publish fails) and tells the handler
// why.
func (c *Client) Down(err error) {
	c.mu.Lock()
	c.up = false
	c.mu.Unlock()
	c.handler().Disconnected(err)
}

// Deliver hands the handler a message, as a subscription would.
func (c *Client) Deliver(m mqttbridge.Message) { c.handler().Received(m) }

// Publish records the message, or fails while down.
func (c *Client) Publish(ctx context.Context, topic string, payload []byte, retain bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.up {
		return mqttbridge.ErrDisconnected
	}
	c.pubs = append(c.pubs, Published{topic, string(payload), retain})
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

// Subscribe records the filters.
func (c *Client) Subscribe(ctx context.Context, filters ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.up {
		return mqttbridge.ErrDisconnected
	}
	c.subs = append(c.subs, filters...)
	return nil
}

// Subscriptions returns every filter subscribed, in order.
func (c *Client) Subscriptions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.subs...)
}

// Published returns the messages published from index from on.
func (c *Client) Published(from int) []Published {
	c.mu.Lock()
	defer c.mu.Unlock()
	if from > len(c.pubs) {
		return nil
	}
	return append([]Published(nil), c.pubs[from:]...)
}

// Mark is the index of the next message published: Wait from it sees
// only what comes after.
func (c *Client) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pubs)
}

// Wait returns the first message published from index from on with
// topic and, when payload is not "", that payload; the test fails after
// 5 s.
func (c *Client) Wait(t testing.TB, from int, topic, payload string) Published {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		c.mu.Lock()
		for _, p := range c.pubs[min(from, len(c.pubs)):] {
			if p.Topic == topic && (payload == "" || p.Payload == payload) {
				c.mu.Unlock()
				return p
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no publish on %s %s within 5s; published: %v", topic, payload, c.Published(from))
			return Published{}
		}
	}
}
