package qemutest

import (
	"context"
	"strings"
	"testing"
	"time"
)

// What the console printed before the mark does not count.
func TestConsoleWaitForFrom(t *testing.T) {
	c := &Console{}
	c.Write([]byte("msg=listening (first start)\n"))
	from := c.Len()
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.WaitForFrom(short, nil, from, "msg=listening"); err == nil || !strings.Contains(err.Error(), "did not print") {
		t.Fatalf("the line before the mark was taken: %v", err)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	go c.Write([]byte("init: gateway exited\nmsg=listening (second start)\n"))
	if err := c.WaitForFrom(ctx, nil, from, "msg=listening", "Kernel panic"); err != nil {
		t.Fatalf("the line after the mark: %v", err)
	}
	if err := c.WaitForFrom(ctx, nil, from, "msg=listening", "init: gateway exited"); err == nil {
		t.Error("a failure line after the mark was not seen")
	}
}
