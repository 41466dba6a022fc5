package qemutest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
)

// Console is a guest's serial console: QEMU writes it, the test reads it
// and waits for a line to appear in it.
type Console struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and dropped at each write
}

func (c *Console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	return c.b.Write(p)
}

// String is everything the console printed so far.
func (c *Console) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// WaitFor waits until the console holds want. It fails when the console
// holds one of fails first, when exited is closed (QEMU is gone) or when
// ctx ends.
func (c *Console) WaitFor(ctx context.Context, exited <-chan struct{}, want string, fails ...string) error {
	for {
		c.mu.Lock()
		log := c.b.String()
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ch := c.changed
		c.mu.Unlock()
		for _, f := range fails {
			if strings.Contains(log, f) {
				return fmt.Errorf("the console printed %q before %q", f, want)
			}
		}
		if strings.Contains(log, want) {
			return nil
		}
		select {
		case <-ch:
		case <-exited:
			if strings.Contains(c.String(), want) {
				return nil
			}
			return fmt.Errorf("QEMU exited before the console printed %q", want)
		case <-ctx.Done():
			return fmt.Errorf("the console did not print %q: %w", want, ctx.Err())
		}
	}
}
