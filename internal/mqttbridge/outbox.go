package mqttbridge

import "sync"

// outbox holds the retained messages not yet published, the newest per
// topic: a device that changes a thousand times while the broker is away
// is one message when it comes back. It is bounded by the number of
// topics (a few per device), never by the number of changes.
type outbox struct {
	mu    sync.Mutex
	items map[string][]byte
	order []string // topics in the order they first became due
	wake  chan struct{}
}

func newOutbox() *outbox {
	return &outbox{items: map[string][]byte{}, wake: make(chan struct{}, 1)}
}

// put makes payload the next retained message of topic, replacing one not
// yet sent (an empty payload clears the broker's retained message).
func (o *outbox) put(topic string, payload []byte) {
	o.mu.Lock()
	if _, due := o.items[topic]; !due {
		o.order = append(o.order, topic)
	}
	o.items[topic] = payload
	o.mu.Unlock()
	o.poke()
}

// poke wakes the publisher.
func (o *outbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// next returns the oldest due message.
func (o *outbox) next() (topic string, payload []byte, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.order) == 0 {
		return "", nil, false
	}
	topic = o.order[0]
	return topic, o.items[topic], true
}

// done removes topic once payload is published, unless a newer payload
// came meanwhile (that one stays due).
func (o *outbox) done(topic string, payload []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	cur, ok := o.items[topic]
	if !ok || string(cur) != string(payload) {
		return
	}
	delete(o.items, topic)
	for i, t := range o.order {
		if t == topic {
			o.order = append(o.order[:i], o.order[i+1:]...)
			break
		}
	}
}

// len is the number of topics due.
func (o *outbox) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.order)
}
