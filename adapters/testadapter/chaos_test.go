//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitRecord waits for the record name to hold want; the adapter is
// another process, and the file is the only sign: polled.
func (p *proc) waitRecord(name, want string) {
	p.t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		b, _ := os.ReadFile(filepath.Join(p.home, name))
		if strings.TrimSpace(string(b)) == want {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s holds %q after %s, want %q", name, b, waitLong, want)
		}
		<-time.After(10 * time.Millisecond)
	}
}

// TestChaos: --chaos crash exits 3 after initialized, within its time;
// --chaos hang stops answering (a ping gets nothing) and goes on living
// until killed; each says what it did in chaos.txt.
func TestChaos(t *testing.T) {
	t.Run("crash", func(t *testing.T) {
		p := start(t, "--chaos", "40ms", "--chaos-mode", "crash")
		p.handshake()
		if code := p.exitCode(); code != chaosExit {
			t.Fatalf("exit %d, want %d", code, chaosExit)
		}
		if got := strings.TrimSpace(p.readFile(fileChaos)); got != chaosCrash {
			t.Errorf("chaos.txt = %q", got)
		}
	})
	t.Run("hang", func(t *testing.T) {
		p := start(t, "--chaos", "40ms", "--chaos-mode", "hang")
		p.handshake()
		p.waitRecord(fileChaos, chaosHang)
		p.send(ref(t, "ping"))
		select {
		case line := <-p.lines:
			t.Fatalf("a hung adapter wrote %q", line)
		case <-p.done:
			t.Fatal("a hung adapter exited")
		case <-time.After(300 * time.Millisecond): // a live one answers in a millisecond
		}
	})
	t.Run("bad mode", func(t *testing.T) {
		p := start(t, "--chaos", "1s", "--chaos-mode", "sometimes")
		if code := p.exitCode(); code != 2 {
			t.Fatalf("exit %d, want 2", code)
		}
	})
}
