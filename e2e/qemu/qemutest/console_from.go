package qemutest

import (
	"context"
	"fmt"
	"strings"
)

// Len is how many bytes the console holds: a mark for WaitForFrom.
func (c *Console) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.Len()
}

// WaitForFrom is WaitFor on what the console printed from byte from on
// (a Len taken earlier): for a line a program prints again, as a
// gateway started a second time does.
func (c *Console) WaitForFrom(ctx context.Context, exited <-chan struct{}, from int, want string, fails ...string) error {
	since := func() string {
		s := c.String()
		if from > len(s) {
			return ""
		}
		return s[from:]
	}
	for {
		c.mu.Lock()
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ch := c.changed
		c.mu.Unlock()
		log := since()
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
			if strings.Contains(since(), want) {
				return nil
			}
			return fmt.Errorf("QEMU exited before the console printed %q", want)
		case <-ctx.Done():
			return fmt.Errorf("the console did not print %q: %w", want, ctx.Err())
		}
	}
}

// WaitConsoleFrom is WaitConsole on what the console printed from byte
// from on (Console().Len() taken earlier).
func (g *Guest) WaitConsoleFrom(ctx context.Context, from int, want string, fails ...string) error {
	return g.console.WaitForFrom(ctx, g.exited, from, want, fails...)
}
