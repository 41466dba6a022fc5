package mqttbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openhal/gateway/adapter"
	"github.com/openhal/gateway/openhal"
)

// command is a set message waiting for the Hub.
type command struct {
	topic   string
	device  string
	payload []byte
}

// result is the payload of <base>/<device>/result.
type result struct {
	Status string          `json:"status"`
	Value  json.RawMessage `json:"value,omitempty"`
	// A value longer than echoMax is not echoed whole (a refused 1 MiB
	// command would be a 1 MiB result): ValueStart is its first echoMax
	// bytes, as a string, and ValueBytes its length.
	ValueStart   string        `json:"valueStart,omitempty"`
	ValueBytes   int           `json:"valueBytes,omitempty"`
	Confirmation *confirmation `json:"confirmation,omitempty"`
	Error        *resultError  `json:"error,omitempty"`
}

// echoMax bounds the value a result echoes.
const echoMax = 256

// echo sets the result's value: v compacted, or its start and length
// when it is longer than echoMax.
func (r *result) echo(v json.RawMessage) {
	v = compact(v)
	if len(v) <= echoMax {
		r.Value, r.ValueStart, r.ValueBytes = v, "", 0
		return
	}
	r.Value, r.ValueStart, r.ValueBytes = nil, cutText(string(v), echoMax), len(v)
}

type confirmation struct {
	ID        string `json:"id"`
	ExpiresAt string `json:"expiresAt,omitempty"`
}

type resultError struct {
	Code    int64  `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

// Received is the client's: a message on a subscription. A command that
// carries the retain flag is dropped, never acted on: a retained command
// is one the broker would replay to every later subscriber ("ghost
// switching"). Commands wait in a bounded queue, so that the client's
// reader is never held up by the Hub; a stop takes its own lane
// (stopLane), whatever the commands' queue holds.
func (b *Bridge) Received(m Message) {
	if b.disc != nil && m.Topic == b.t.HAStatus() {
		if string(m.Payload) == "online" {
			b.log.Info("mqtt: Home Assistant is online; republishing the discovery config and states")
			b.republish()
		}
		return
	}
	if m.Topic == b.t.StopSet(b.gw) {
		b.receivedStop(m)
		return
	}
	dev, ok := setDevice(b.t, b.gw, m.Topic)
	if !ok {
		return
	}
	if m.Retain {
		b.count(func(s *Stats) { s.RetainedDropped++ })
		b.log.Warn("mqtt: retained command dropped: a command must not be retained (the broker would replay it)", "topic", m.Topic)
		return
	}
	select {
	case b.cmds <- command{topic: m.Topic, device: dev, payload: m.Payload}:
	default:
		b.count(func(s *Stats) { s.CommandsDropped++ })
		b.log.Warn("mqtt: command dropped: too many waiting for the Hub", "topic", m.Topic, "queue", commandQueue)
	}
}

// receivedStop puts a stop in its lane. Every message on the stop topic
// engages it, retained or not: a stop is never ignored, and with retain
// handling 2 the broker never replays a retained one on subscribe. The
// one exception is an empty retained message, which only deletes the
// broker's retained copy of an earlier one.
func (b *Bridge) receivedStop(m Message) {
	if m.Retain && len(m.Payload) == 0 {
		b.count(func(s *Stats) { s.RetainedDropped++ })
		b.log.Info("mqtt: a retained stop was cleared from the broker; nothing to engage", "topic", m.Topic)
		return
	}
	if m.Retain {
		b.log.Warn("mqtt: stop published with the retain flag: engaged; clear it from the broker with an empty retained message", "topic", m.Topic)
	}
	b.stops.ask(stopReason(m.Topic, m.Payload))
}

// count changes a counter and republishes the diagnostics.
func (b *Bridge) count(f func(*Stats)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(&b.stats)
	b.putBridgeLocked()
}

// serveCommands runs the commands one at a time, in the order received,
// so that two commands to one device are applied in that order.
func (b *Bridge) serveCommands(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-b.cmds:
			b.setCommand(ctx, c)
		}
	}
}

// setCommand writes the device through the Hub and publishes the answer.
// The state topic is left alone: it follows the Hub's value events, so a
// pending write leaves it at the real value until an approval applies it.
func (b *Bridge) setCommand(ctx context.Context, c command) {
	if !json.Valid(c.payload) {
		b.publishResult(ctx, c.device, result{Status: "refused", Error: &resultError{
			Code: openhal.CodeInvalidParams, Name: openhal.CodeName(openhal.CodeInvalidParams),
			Message: fmt.Sprintf("payload %q is not JSON: send true, 40 or \"a string\" (in quotes)", truncate(c.payload, 64)),
		}})
		return
	}
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	res, err := b.hub.Write(wctx, c.device, c.payload, "mqtt: "+c.topic)
	cancel()
	var r result
	r.echo(c.payload)
	switch {
	case err != nil:
		b.log.Info("mqtt: command refused", "topic", c.topic, "err", err)
		r.Status, r.Error = "refused", refusal(err)
	case res.Status == "pending":
		var conf confirmation
		_ = json.Unmarshal(res.Confirmation, &conf)
		b.remember(conf.ID, c.device)
		b.log.Info("mqtt: command waits for an operator's approval", "topic", c.topic, "confirmation", conf.ID)
		r.Status, r.Confirmation = "pending", &conf
	default:
		if len(res.Value) > 0 {
			r.echo(res.Value)
		}
		r.Status = res.Status
	}
	b.publishResult(ctx, c.device, r)
}

// refusal is the Hub's error as a result names it.
func refusal(err error) *resultError {
	var e *adapter.Error
	if !errors.As(err, &e) {
		return &resultError{Code: openhal.CodeInternalError, Name: "ADAPTER_ERROR", Message: err.Error()}
	}
	name := openhal.CodeName(e.Code)
	if name == "" {
		name = fmt.Sprint(e.Code)
	}
	return &resultError{Code: e.Code, Name: name, Message: e.Message}
}

// remember keeps a pending confirmation's device until its resolution,
// the oldest forgotten past waitingMax (the Hub expires them anyway).
func (b *Bridge) remember(id, dev string) {
	if id == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting[id] = dev
	b.waitOrder = append(b.waitOrder, id)
	for len(b.waitOrder) > waitingMax {
		delete(b.waiting, b.waitOrder[0])
		b.waitOrder = b.waitOrder[1:]
	}
}

// onResolved publishes the outcome of one of the bridge's own pending
// writes: approved, rejected, cancelled, expired or failed.
func (b *Bridge) onResolved(ctx context.Context, data json.RawMessage) error {
	var e struct {
		Confirmation struct {
			ID        string          `json:"id"`
			Value     json.RawMessage `json:"value"`
			Status    string          `json:"status"`
			ExpiresAt string          `json:"expiresAt"`
			Error     *adapter.Error  `json:"error"`
		} `json:"confirmation"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return err
	}
	conf := e.Confirmation
	b.mu.Lock()
	dev, mine := b.waiting[conf.ID]
	delete(b.waiting, conf.ID)
	b.mu.Unlock()
	if !mine {
		return nil
	}
	r := result{Status: conf.Status, Confirmation: &confirmation{ID: conf.ID, ExpiresAt: conf.ExpiresAt}}
	r.echo(conf.Value)
	if conf.Error != nil {
		r.Error = refusal(conf.Error)
	}
	b.publishResult(ctx, dev, r)
	return nil
}

// publishResult answers a command. Results are not retained and not kept
// while the broker is away: they answer a command of now.
func (b *Bridge) publishResult(ctx context.Context, dev string, r result) {
	payload, err := json.Marshal(r)
	if err != nil {
		b.log.Error("mqtt: result not encoded", "device", dev, "err", err)
		return
	}
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	if err := b.client.Publish(pctx, b.t.Result(b.gw, dev), payload, false); err != nil {
		b.log.Warn("mqtt: result not published", "device", dev, "err", err)
	}
}

func truncate(p []byte, n int) string {
	if len(p) > n {
		return string(p[:n]) + "..."
	}
	return string(p)
}
