// Package mcp23017test is a fake MCP23017 or MCP23008 for tests of what
// drives one: an i2c.Bus holding the chip's registers as the datasheets
// describe them (DS20001952 with BANK = 0, DS21919), pins whose levels the
// test sets, interrupt-on-change with INTF and INTCAP, and the INT output
// on a gpiotest pin.
//
// What it models: sequential register access (the address pointer
// increments and wraps, SEQOP = 0); IOCON at both of the MCP23017's
// addresses; GPIO reads the pins (inverted by IPOL), a write to it goes to
// OLAT; an input's level is what the test drives, else high with its
// pull-up, else low; a watched input (GPINTEN) that differs from its
// previous level (INTCON 0) or from DEFVAL (INTCON 1) raises its port's
// interrupt when none is pending: INTF says which pins, INTCAP holds the
// port as it was, and later changes are not captured until a read of the
// port's INTCAP or GPIO clears it; INTA is port A's interrupt, or either
// port's with MIRROR; INT open-drain (ODR) is high only when the line's
// pull-up is on. A reset (PowerCycle) puts every register back to its
// power-on value. Not modelled: BANK = 1, byte mode (SEQOP = 1), INTB,
// the hardware address enable of the SPI parts.
package mcp23017test

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/physic"

	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
)

// The MCP23008's registers; the MCP23017's are at twice them, port B one
// further.
const (
	regIODIR, regIPOL, regGPINTEN, regDEFVAL, regINTCON, regIOCON = 0, 1, 2, 3, 4, 5
	regGPPU, regINTF, regINTCAP, regGPIO, regOLAT                 = 6, 7, 8, 9, 10
	nRegs                                                         = 11

	ioconMirror = 1 << 6
	ioconODR    = 1 << 2
	ioconINTPOL = 1 << 1
)

// ErrNAK is what a transfer to an absent chip returns: the words of
// periph's sysfs bus for Linux's EREMOTEIO.
var ErrNAK = errors.New("sysfs-i2c: remote I/O error")

// Chip is one expander on a bus of its own.
type Chip struct {
	model mcp23017.Model
	addr  uint16
	int   *Line

	mu      sync.Mutex
	regs    [2][nRegs]byte // by port, then the MCP23008's register number
	ext     uint16         // levels the test drives
	driven  uint16         // pins the test drives
	prev    uint16         // levels at the last comparison
	pending [2]bool        // each port's interrupt
	absent  bool
	txs     int
	onTx    func(n int)
}

// New is a chip at addr in its power-on state, its INT output on a
// gpiotest pin named INT.
func New(m mcp23017.Model, addr uint16) *Chip {
	c := &Chip{model: m, addr: addr}
	c.int = NewLine("INT")
	c.int.chip = c
	c.PowerCycle()
	return c
}

// INT is the Pi line the chip's INT (INTA) is wired to.
func (c *Chip) INT() *Line { return c.int }

// PowerCycle resets every register to its power-on value: all pins
// inputs, no pull-ups, no interrupts, IOCON 0 (INT an active-low driver).
func (c *Chip) PowerCycle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.regs = [2][nRegs]byte{}
	c.regs[0][regIODIR], c.regs[1][regIODIR] = 0xff, 0xff
	c.pending = [2]bool{}
	c.prev = c.levels()
	c.driveINT()
}

// SetPresent makes the chip answer on the bus, or not (unplugged,
// unpowered: every transfer fails with ErrNAK).
func (c *Chip) SetPresent(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.absent = !on
}

// Drive sets what the outside world drives onto pin (an input sees it).
func (c *Chip) Drive(pin int, l gpio.Level) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.driven |= 1 << pin
	c.ext = c.ext&^(1<<pin) | bit(l)<<pin
	c.compare()
}

// Level is pin's level: an output's latch, or an input's level.
func (c *Chip) Level(pin int) gpio.Level {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.levels()&(1<<pin) != 0
}

// IsOutput reports whether pin drives (its IODIR bit is 0).
func (c *Chip) IsOutput(pin int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reg16(regIODIR)&(1<<pin) == 0
}

// Register returns a register by its address in the chip's own map.
func (c *Chip) Register(addr byte) byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	port, r := c.split(int(addr))
	return c.regs[port][r]
}

// Txs is the number of transfers the chip has answered.
func (c *Chip) Txs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.txs
}

// OnTx has f called after each transfer the chip answers, with their
// count, outside the chip's lock: what happens while its driver is
// between two transfers.
func (c *Chip) OnTx(f func(n int)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onTx = f
}

// Tx implements i2c.Bus: w's first byte sets the address pointer, the
// rest are written from it on, then r is read from where it is.
func (c *Chip) Tx(addr uint16, w, r []byte) error {
	n, f, err := c.tx(addr, w, r)
	if err == nil && f != nil {
		f(n)
	}
	return err
}

func (c *Chip) tx(addr uint16, w, r []byte) (int, func(int), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.transfer(addr, w, r); err != nil {
		return 0, nil, err
	}
	return c.txs, c.onTx, nil
}

func (c *Chip) transfer(addr uint16, w, r []byte) error {
	if c.absent || addr != c.addr {
		return ErrNAK
	}
	if len(w) == 0 {
		return errors.New("mcp23017test: a transfer without a register address")
	}
	c.txs++
	a := int(w[0])
	if a >= c.size() {
		return fmt.Errorf("mcp23017test: no register %#x on the %v", a, c.model)
	}
	for _, b := range w[1:] {
		c.write(a, b)
		a = (a + 1) % c.size()
	}
	for i := range r {
		r[i] = c.read(a)
		a = (a + 1) % c.size()
	}
	c.compare()
	return nil
}

// SetSpeed implements i2c.Bus.
func (c *Chip) SetSpeed(physic.Frequency) error { return nil }

// Close implements i2c.BusCloser.
func (c *Chip) Close() error { return nil }

func (c *Chip) String() string { return fmt.Sprintf("mcp23017test(%v@%#x)", c.model, c.addr) }

func (c *Chip) size() int {
	if c.model == mcp23017.MCP23008 {
		return nRegs
	}
	return 2 * nRegs
}

// split maps an address of the chip's map to a port and a register.
func (c *Chip) split(a int) (port, r int) {
	if c.model == mcp23017.MCP23008 {
		return 0, a
	}
	return a % 2, a / 2
}

func (c *Chip) write(a int, b byte) {
	port, r := c.split(a)
	switch r {
	case regINTF, regINTCAP: // read-only
	case regIOCON:
		c.regs[0][r], c.regs[1][r] = b, b
	case regGPIO:
		c.regs[port][regOLAT] = b
	default:
		c.regs[port][r] = b
	}
}

// read returns a register; reading a port's INTCAP or GPIO clears its
// interrupt, as the chip does once the byte is out.
func (c *Chip) read(a int) byte {
	port, r := c.split(a)
	switch r {
	case regGPIO:
		v := byte(c.levels()>>(8*port)) ^ (c.regs[port][regIPOL] & c.regs[port][regIODIR])
		c.clear(port)
		return v
	case regINTCAP:
		v := c.regs[port][regINTCAP]
		c.clear(port)
		return v
	}
	return c.regs[port][r]
}

func (c *Chip) clear(port int) {
	c.pending[port] = false
	c.regs[port][regINTF] = 0
}

// reg16 is a register of both ports, port B in the high byte.
func (c *Chip) reg16(r int) uint16 {
	v := uint16(c.regs[0][r])
	if c.model == mcp23017.MCP23017 {
		v |= uint16(c.regs[1][r]) << 8
	}
	return v
}

// levels are the pins' levels: outputs drive their latch, inputs read
// what the test drives, else their pull-up, else low.
func (c *Chip) levels() uint16 {
	in := c.reg16(regIODIR)
	inputs := c.ext&c.driven | c.reg16(regGPPU)&^c.driven
	return c.reg16(regOLAT)&^in | inputs&in
}

// compare raises the interrupt of a port whose watched inputs changed,
// and sets INT.
func (c *Chip) compare() {
	now := c.levels()
	for port := 0; port < c.ports(); port++ {
		sh := 8 * port
		cur, prev := byte(now>>sh), byte(c.prev>>sh)
		p := &c.regs[port]
		watched := p[regGPINTEN] & p[regIODIR]
		against := prev&^p[regINTCON] | p[regDEFVAL]&p[regINTCON]
		if hit := (cur ^ against) & watched; hit != 0 && !c.pending[port] {
			c.pending[port] = true
			p[regINTF] = hit
			p[regINTCAP] = cur
		}
	}
	c.prev = now
	c.driveINT()
}

func (c *Chip) ports() int {
	if c.model == mcp23017.MCP23008 {
		return 1
	}
	return 2
}

// driveINT sets the INT line's level from the interrupts pending, and
// sends a falling edge when it falls.
func (c *Chip) driveINT() {
	if c.int != nil {
		c.int.set(c.intLevel(), true)
	}
}

// intLevel is the level INT (INTA) puts on the line.
func (c *Chip) intLevel() gpio.Level {
	active := c.pending[0] || c.regs[0][regIOCON]&ioconMirror != 0 && c.pending[1]
	iocon := c.regs[0][regIOCON]
	switch {
	case iocon&ioconODR != 0:
		return gpio.Level(!active && c.int.pull() == gpio.PullUp)
	case iocon&ioconINTPOL != 0:
		return gpio.Level(active)
	}
	return gpio.Level(!active)
}

func bit(l gpio.Level) uint16 {
	if l {
		return 1
	}
	return 0
}

// Line is the Pi GPIO line INT is wired to: a gpiotest pin whose level
// the chip sets, a falling edge sent on EdgesChan each time it falls (64
// are kept, as the kernel keeps a line's events), and a Halt that cuts a
// WaitForEdge short, as gpioioctl's does. Alone (NewLine), the test sets
// its level with Fall and Rise.
type Line struct {
	*gpiotest.Pin
	chip *Chip

	wmu     sync.Mutex
	waiting chan struct{} // closed by Halt; nil while no wait is on
	waiters chan struct{} // closed when the next wait is on
	ins     int
	lose    bool // falls send no edge
	short   bool // held low, whatever drives it
	fail    bool // waits fail at once
	closed  bool
}

// Close releases the line, as gpioioctl's Close does.
func (l *Line) Close() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.closed = true
	return nil
}

// Closed reports whether the line was released.
func (l *Line) Closed() bool {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.closed
}

// Lose makes the line's falls send no edge (a missed edge), or not.
func (l *Line) Lose(on bool) { l.knob(&l.lose, on) }

// Short holds the line low, as a short to ground would, or lets it go
// back to what the chip drives.
func (l *Line) Short(on bool) {
	l.knob(&l.short, on)
	switch {
	case on:
		l.Pin.Lock()
		l.L = gpio.Low
		l.Pin.Unlock()
	case l.chip != nil:
		l.chip.mu.Lock()
		defer l.chip.mu.Unlock()
		l.set(l.chip.intLevel(), true)
	}
}

// FailWaits makes WaitForEdge fail at once, as on a line gone wrong, or
// not.
func (l *Line) FailWaits(on bool) { l.knob(&l.fail, on) }

func (l *Line) knob(k *bool, on bool) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	*k = on
}

// NewLine is a line of its own, not wired to a chip.
func NewLine(name string) *Line {
	return &Line{Pin: &gpiotest.Pin{N: name, EdgesChan: make(chan gpio.Level, 64)}}
}

// Fall pulls the line low, an edge.
func (l *Line) Fall() { l.set(gpio.Low, true) }

// Rise lets it go high.
func (l *Line) Rise() { l.set(gpio.High, true) }

// In requests the line: gpiotest's, then the level the chip drives (a
// request does not lift a line the chip holds low, and sees no edge in
// it: a line already low stays so unnoticed, as on the kernel's).
func (l *Line) In(pull gpio.Pull, edge gpio.Edge) error {
	if err := l.Pin.In(pull, edge); err != nil {
		return err
	}
	l.wmu.Lock()
	l.ins++
	l.wmu.Unlock()
	if l.chip == nil {
		return nil
	}
	l.chip.mu.Lock()
	defer l.chip.mu.Unlock()
	l.set(l.chip.intLevel(), false)
	return nil
}

// Ins is how many times the line was requested.
func (l *Line) Ins() int {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.ins
}

// WaitForEdge waits for a falling edge, timeout, or Halt.
func (l *Line) WaitForEdge(timeout time.Duration) bool {
	halted := make(chan struct{})
	l.wmu.Lock()
	if l.fail {
		l.wmu.Unlock()
		return false
	}
	l.waiting = halted
	if l.waiters != nil {
		close(l.waiters)
		l.waiters = nil
	}
	l.wmu.Unlock()
	defer func() {
		l.wmu.Lock()
		l.waiting = nil
		l.wmu.Unlock()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-l.EdgesChan:
		return true
	case <-halted:
	case <-t.C:
	}
	return false
}

// Waiting returns a channel closed once a WaitForEdge is on (at once if
// one is).
func (l *Line) Waiting() <-chan struct{} {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.waiting != nil {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if l.waiters == nil {
		l.waiters = make(chan struct{})
	}
	return l.waiters
}

// Halt ends a wait in progress; one that is not yet waiting is not
// touched, as on gpioioctl.
func (l *Line) Halt() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.waiting != nil {
		close(l.waiting)
		l.waiting = nil
	}
	return nil
}

func (l *Line) pull() gpio.Pull {
	l.Pin.Lock()
	defer l.Pin.Unlock()
	return l.P
}

// set sets the level; with edges, a fall is one.
func (l *Line) set(v gpio.Level, edges bool) {
	l.wmu.Lock()
	short, lose := l.short, l.lose
	l.wmu.Unlock()
	l.Pin.Lock()
	fell := bool(l.L && !v)
	l.L = v && gpio.Level(!short)
	l.Pin.Unlock()
	if fell && edges && !short && !lose {
		select {
		case l.EdgesChan <- gpio.Low:
		default: // the kernel's queue is full: the edge is lost
		}
	}
}
