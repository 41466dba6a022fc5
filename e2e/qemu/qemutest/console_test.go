package qemutest

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestConsoleWaitFor(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		exit   bool
		fails  []string
		err    string // "" for success
	}{
		{"line arrives later", []string{"boot\n", "msg=ready\n"}, false, nil, ""},
		{"failure line first", []string{"Kernel panic\n", "msg=ready\n"}, false, []string{"Kernel panic"}, `printed "Kernel panic"`},
		{"QEMU exits", []string{"boot\n"}, true, nil, "QEMU exited"},
		{"never comes", []string{"boot\n"}, false, nil, "did not print"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			c := &Console{}
			exited := make(chan struct{})
			go func() {
				for _, w := range tt.writes {
					c.Write([]byte(w))
				}
				if tt.exit {
					close(exited)
				}
			}()
			err := c.WaitFor(ctx, exited, "msg=ready", tt.fails...)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("WaitFor = %v, want %q", err, tt.err)
			}
		})
	}
}
