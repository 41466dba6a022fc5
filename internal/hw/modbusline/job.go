package modbusline

import (
	"context"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
)

// job is a request a caller waits for: a fresh read, or a write of a
// coil or registers.
type job struct {
	ctx   context.Context
	dev   *Device
	write bool
	safe  bool // a write of the device's safe value by the Hub itself
	bit   bool
	regs  []uint16
	tries int         // attempts made
	done  chan result // buffered 1: finish never blocks
}

// result is a job's outcome: a read's value and when it was taken.
type result struct {
	value any
	ts    time.Time
	err   error
}

func (j *job) finish(r result) { j.done <- r }

// submit queues j and waits for its outcome, or for ctx. A line whose
// link is down fails it at once as offline.
func (l *Line) submit(ctx context.Context, j *job) result {
	j.ctx, j.done = ctx, make(chan result, 1)
	l.mu.Lock()
	if !l.online {
		err := l.offline(l.cause)
		l.mu.Unlock()
		return result{err: err}
	}
	l.jobs = append(l.jobs, j)
	l.mu.Unlock()
	l.poke()
	select {
	case r := <-j.done:
		return r
	case <-ctx.Done():
		return result{err: ctx.Err()}
	}
}

// failJobs fails every queued job with err.
func (l *Line) failJobs(err error) {
	l.mu.Lock()
	jobs := l.jobs
	l.jobs = nil
	l.mu.Unlock()
	for _, j := range jobs {
		j.finish(result{err: err})
	}
}

// runJob sends j once and tells its caller the outcome, or queues it
// again, ahead of the others, when the failure is worth another attempt
// (after the unit's quiet time); it returns the error of a failed link.
// A safe write to a unit that did not answer its last request is tried
// once: the stop has other outputs to drive.
func (l *Line) runJob(ctx context.Context, c *modbus.Client, j *job) error {
	p := j.dev.p
	l.mu.Lock()
	attempts := 1 + l.cfg.Retries
	if j.safe && l.failing[p.Unit] {
		attempts = 1
	}
	l.mu.Unlock()
	var r result
	r.err = l.attempt(ctx, j.ctx, func(actx context.Context) error {
		var err error
		if j.write {
			err = write(actx, c, p, j.bit, j.regs)
		} else {
			r.value, err = read(actx, c, p)
		}
		return err
	})
	r.ts = l.clk.Now()
	l.noteUnit(p.Unit, r.err, r.ts)
	if r.err != nil && modbus.IsLinkError(r.err) {
		j.finish(result{err: l.offline(r.err)})
		return r.err
	}
	if j.tries++; retryable(r.err) && j.tries < attempts && j.ctx.Err() == nil && ctx.Err() == nil {
		l.mu.Lock()
		l.jobs = append([]*job{j}, l.jobs...)
		l.mu.Unlock()
		return nil
	}
	j.finish(r)
	return nil
}

// write puts a coil or registers on the unit: function 5 for a coil, 6
// for one register, 16 for more.
func write(ctx context.Context, c *modbus.Client, p Point, bit bool, regs []uint16) error {
	switch {
	case p.Table.Bits():
		return c.WriteCoil(ctx, p.Unit, p.Address, bit)
	case len(regs) == 1:
		return c.WriteRegister(ctx, p.Unit, p.Address, regs[0])
	}
	return c.WriteRegisters(ctx, p.Unit, p.Address, regs)
}

// read takes a device's value alone.
func read(ctx context.Context, c *modbus.Client, p Point) (any, error) {
	if p.Table.Bits() {
		bits, err := c.ReadBits(ctx, p.Unit, p.Table, p.Address, 1)
		if err != nil {
			return nil, err
		}
		return bits[0], nil
	}
	regs, err := c.ReadRegisters(ctx, p.Unit, p.Table, p.Address, uint16(p.Words()))
	if err != nil {
		return nil, err
	}
	return p.registerValue(regs)
}
