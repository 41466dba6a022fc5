package rpi3b_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// recorder keeps the hal/value notifications the client receives, so that
// a check can ask whether one came.
type recorder struct {
	mu      sync.Mutex
	values  []openhal.ValueResult
	changed chan struct{}
}

func newRecorder(ch <-chan halclient.Notification) *recorder {
	r := &recorder{changed: make(chan struct{})}
	go func() {
		for n := range ch {
			var v openhal.ValueResult
			if n.Method != openhal.NotifyValue || json.Unmarshal(n.Params, &v) != nil {
				continue
			}
			r.mu.Lock()
			r.values = append(r.values, v)
			close(r.changed)
			r.changed = make(chan struct{})
			r.mu.Unlock()
		}
	}()
	return r
}

// waitValue waits until id's value want has been published.
func (r *recorder) waitValue(ctx context.Context, id string, want any, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		r.mu.Lock()
		for _, v := range r.values {
			if v.Device == id && v.Value == want {
				r.mu.Unlock()
				return nil
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("no hal/value %v of %s within %s", want, id, within)
		}
	}
}
