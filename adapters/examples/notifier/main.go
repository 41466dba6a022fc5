// Command notifier is an example service adapter (adapter protocol 1),
// written with package adapters. It receives every event the daemon sends
// it (its grant reads all devices) and either appends each, as one JSON
// line, to events.jsonl in its state directory, or, when NOTIFIER_URL is
// set, POSTs it as JSON to that URL. A webhook that fails is logged and
// skipped: a notifier must never take the adapter down.
//
// Build it next to its adapter.json and install that folder:
//
//	go build -o bin/adapters/notifier/notifier ./adapters/examples/notifier
//	cp adapters/examples/notifier/adapter.json bin/adapters/notifier/
//	gateway adapter install bin/adapters/notifier
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/openhal/gateway/adapter"
)

// Name and version must be those of adapter.json: the daemon fails an
// adapter that answers otherwise as tampered.
const (
	name    = "notifier"
	version = "0.1.0"
)

// FileName is the file in the state directory that events are appended
// to when no URL is set.
const fileName = "events.jsonl"

// postTimeout bounds one webhook call, so that a dead endpoint delays the
// next event by that much at most.
const postTimeout = 5 * time.Second

func main() {
	n := &notifier{
		url:    os.Getenv("NOTIFIER_URL"),
		client: &http.Client{Timeout: postTimeout},
		now:    time.Now,
		log:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	n.adapter().Main()
}

// notifier is the adapter's state: where events go.
type notifier struct {
	url    string // webhook; "" writes to the file
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	mu   sync.Mutex
	file *os.File // events.jsonl, open from initialize to the end of Run
}

// record is one event as written or posted.
type record struct {
	Seq        uint64          `json:"seq"`
	Type       string          `json:"type"`
	Data       json.RawMessage `json:"data"`
	Dropped    uint64          `json:"dropped,omitempty"`
	ReceivedAt string          `json:"received_at"`
}

func (n *notifier) adapter() adapter.Adapter {
	return adapter.Adapter{
		Name: name, Version: version,
		OnInitialize: n.open,
		OnEvent:      n.event,
		Logger:       n.log,
	}
}

// open opens events.jsonl when there is no webhook. Failing here refuses
// initialize: an adapter that cannot keep its events should not pretend
// to run. The file is closed when the connection ends, after the last
// event (Run delivers queued events before ending its context).
func (n *notifier) open(ctx context.Context, c *adapter.Conn) error {
	if n.url != "" {
		n.log.Info("posting events", "url", n.url)
		return nil
	}
	dir := c.Params().Paths.State
	if dir == "" {
		return errors.New("initialize gave no paths.state")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	p := filepath.Join(dir, fileName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	n.mu.Lock()
	n.file = f
	n.mu.Unlock()
	go func() {
		<-ctx.Done()
		n.mu.Lock()
		defer n.mu.Unlock()
		if err := f.Close(); err != nil {
			n.log.Warn("close events file", "path", p, "err", err)
		}
		n.file = nil
	}()
	n.log.Info("appending events", "path", p)
	return nil
}

// event writes or posts one event. Errors are logged, never fatal.
func (n *notifier) event(ctx context.Context, _ *adapter.Conn, e adapter.Event) {
	line, err := json.Marshal(record{
		Seq: e.Seq, Type: e.Type, Data: e.Data, Dropped: e.Dropped,
		ReceivedAt: n.now().UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		n.log.Warn("event not encoded", "seq", e.Seq, "err", err)
		return
	}
	if n.url != "" {
		if err := n.post(ctx, line); err != nil {
			n.log.Warn("event not posted", "seq", e.Seq, "url", n.url, "err", err)
		}
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.file == nil {
		n.log.Warn("event not written: file closed", "seq", e.Seq)
		return
	}
	if _, err := n.file.Write(append(line, '\n')); err != nil {
		n.log.Warn("event not written", "seq", e.Seq, "err", err)
	}
}

// post sends one event to the webhook; any status but 2xx is an error.
func (n *notifier) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return err // already names the method and URL
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s", n.url, resp.Status)
	}
	return nil
}
