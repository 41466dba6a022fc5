package modbussim

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Relay is a serial line between two pseudo-terminals: the gateway opens
// Gateway, a stable link as /dev/serial/by-id gives, and the simulator
// opens Sim. It copies bytes both ways and can inject noise, unplug and
// plug the gateway's side, and pace bytes at a baud rate. It stops when
// its test ends. Its methods are safe from any goroutine, except Unplug
// and Plug, which fail the test on misuse (call them from the test's).
type Relay struct {
	// Gateway is the stable path of the gateway's port, in t.TempDir():
	// a symbolic link to the current pty's slave, gone while unplugged.
	Gateway string
	// Sim is the slave of the simulator's pty (/dev/pts/N), for StartRTU.
	Sim string

	t         testing.TB
	sim       *pty
	toGateway *direction
	toSim     *direction
	charTime  atomic.Int64 // ns a character takes on the line; 0: no pacing
	quit      chan struct{}
	wg        sync.WaitGroup

	mu sync.Mutex
	gw *pty // nil while unplugged
}

// direction is one way through the relay: chunks as read, in order, and
// who writes them out.
type direction struct {
	q     chan chunk
	dst   func() *os.File // where to write now; nil drops the bytes
	bytes atomic.Int64
}

// chunk is what one read returned, or one Noise, with when it arrived.
type chunk struct {
	data []byte
	at   time.Time
	done chan struct{} // closed once written, for Noise; may be nil
}

// NewRelay opens both pseudo-terminals, plugs the gateway's side in and
// starts copying.
func NewRelay(t testing.TB) *Relay {
	t.Helper()
	sim, err := openPTY()
	if err != nil {
		t.Fatalf("modbussim relay: %v", err)
	}
	r := &Relay{
		Gateway: filepath.Join(t.TempDir(), "usb-modbussim-if00-port0"),
		Sim:     sim.path,
		t:       t,
		sim:     sim,
		quit:    make(chan struct{}),
	}
	r.toGateway = &direction{q: make(chan chunk, 64), dst: r.gatewayMaster}
	r.toSim = &direction{q: make(chan chunk, 64), dst: func() *os.File { return sim.master }}
	t.Cleanup(r.stop)
	r.wg.Add(3)
	go r.read(sim.master, r.toGateway)
	go r.write(r.toGateway)
	go r.write(r.toSim)
	r.Plug()
	return r
}

// PTYPair is a relay's two ends, for a test that needs no more of it: the
// gateway's stable path and the simulator's pty.
func PTYPair(t testing.TB) (gatewaySide, simSide string) {
	t.Helper()
	r := NewRelay(t)
	return r.Gateway, r.Sim
}

// StartRTUBus is a relay and an RTU simulator on its far side at baud:
// the gateway opens relay.Gateway.
func StartRTUBus(t testing.TB, baud int, units Units) (*Sim, *Relay) {
	t.Helper()
	r := NewRelay(t)
	return StartRTU(t, r.Sim, baud, units), r
}

func (r *Relay) gatewayMaster() *os.File {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gw == nil {
		return nil
	}
	return r.gw.master
}

// Unplug does what pulling a USB adapter does: the gateway's port hangs
// up (its reads fail) and its stable link goes. Bytes the simulator sends
// meanwhile are lost.
func (r *Relay) Unplug() {
	r.t.Helper()
	r.mu.Lock()
	gw := r.gw
	r.gw = nil
	r.mu.Unlock()
	if gw == nil {
		r.t.Fatal("modbussim relay: Unplug while unplugged")
	}
	if err := os.Remove(r.Gateway); err != nil {
		r.t.Fatalf("modbussim relay: unplug: %v", err)
	}
	gw.close()
}

// Plug plugs a new adapter in: a new pty, with the stable link pointed at
// it atomically, as udev replaces /dev/serial/by-id links.
func (r *Relay) Plug() {
	r.t.Helper()
	gw, err := openPTY()
	if err != nil {
		r.t.Fatalf("modbussim relay: plug: %v", err)
	}
	r.mu.Lock()
	if r.gw != nil {
		r.mu.Unlock()
		gw.close()
		r.t.Fatal("modbussim relay: Plug while plugged in")
	}
	r.gw = gw
	r.mu.Unlock()
	r.wg.Add(1)
	go r.read(gw.master, r.toSim)
	tmp := r.Gateway + ".new"
	os.Remove(tmp)
	if err := os.Symlink(gw.path, tmp); err != nil {
		r.t.Fatalf("modbussim relay: plug: %v", err)
	}
	if err := os.Rename(tmp, r.Gateway); err != nil {
		r.t.Fatalf("modbussim relay: plug: %v", err)
	}
}

// Noise injects bytes between frames: toGateway as if the line brought
// them to the gateway, toSim to the simulator (either may be empty). Each
// goes after whatever the relay has already read in its direction, so
// never inside a frame that the gateway or the simulator wrote at once.
// It returns once both are written (paced, if the relay paces).
func (r *Relay) Noise(toGateway, toSim []byte) {
	var dones []chan struct{}
	for _, n := range []struct {
		d    *direction
		data []byte
	}{{r.toGateway, toGateway}, {r.toSim, toSim}} {
		if len(n.data) == 0 {
			continue
		}
		done := make(chan struct{})
		dones = append(dones, done)
		r.push(n.d, chunk{data: append([]byte(nil), n.data...), at: time.Now(), done: done})
	}
	for _, done := range dones {
		select {
		case <-done:
		case <-r.quit:
		}
	}
}

// Pace delivers each byte, both ways, no sooner than a line at baud with
// charBits bits a character (10 for 8N1, 11 for 8E1) would: a character
// takes charBits/baud seconds, and a byte is delivered once its last bit
// would have arrived. baud 0 stops pacing. Like RS-232, the model is full
// duplex; Modbus never sends both ways at once.
func (r *Relay) Pace(baud, charBits int) {
	if baud <= 0 || charBits <= 0 {
		r.charTime.Store(0)
		return
	}
	r.charTime.Store(int64(charBits) * int64(time.Second) / int64(baud))
}

// Bytes counts the bytes delivered each way so far (noise too).
func (r *Relay) Bytes() (toGateway, toSim int64) {
	return r.toGateway.bytes.Load(), r.toSim.bytes.Load()
}

// read copies what src gives into d until src is closed.
func (r *Relay) read(src *os.File, d *direction) {
	defer r.wg.Done()
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.push(d, chunk{data: append([]byte(nil), buf[:n]...), at: time.Now()})
		}
		if err != nil {
			return
		}
	}
}

func (r *Relay) push(d *direction, c chunk) {
	select {
	case d.q <- c:
	case <-r.quit:
	}
}

// write delivers d's chunks in order, each byte no sooner than the line
// is free and the byte's own character time has passed.
func (r *Relay) write(d *direction) {
	defer r.wg.Done()
	var free time.Time // when the paced line has sent all so far
	timer := time.NewTimer(0)
	<-timer.C
	for {
		var c chunk
		select {
		case c = <-d.q:
		case <-r.quit:
			return
		}
		ct := time.Duration(r.charTime.Load())
		if ct == 0 {
			r.put(d, c.data)
		} else {
			start := c.at
			if free.After(start) {
				start = free
			}
			for i := 0; i < len(c.data); {
				if wait := time.Until(start.Add(time.Duration(i+1) * ct)); wait > 0 {
					timer.Reset(wait)
					select {
					case <-timer.C:
					case <-r.quit:
						return
					}
				}
				// Every byte whose time has come goes now: a late wake-up
				// (a busy machine) catches up, and the rate stays the line's.
				n := min(int(time.Since(start)/ct)-i, len(c.data)-i)
				n = max(n, 1)
				r.put(d, c.data[i:i+n])
				i += n
			}
			free = start.Add(time.Duration(len(c.data)) * ct)
		}
		if c.done != nil {
			close(c.done)
		}
	}
}

// put writes to the direction's current destination; while the gateway's
// side is unplugged, its bytes are lost, as on a line with no one on it.
func (r *Relay) put(d *direction, p []byte) {
	if dst := d.dst(); dst != nil {
		if _, err := dst.Write(p); err == nil {
			d.bytes.Add(int64(len(p)))
		}
	}
}

// stop ends the copying and closes both terminals.
func (r *Relay) stop() {
	close(r.quit)
	r.mu.Lock()
	if r.gw != nil {
		r.gw.close()
		r.gw = nil
	}
	r.mu.Unlock()
	r.sim.close()
	r.wg.Wait()
}
