package modbusline

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
)

// block is one poll: adjacent coils or registers of one unit, read at one
// interval in one request, and the devices whose values they hold.
type block struct {
	unit     byte
	table    modbus.Table
	first    uint16
	count    uint16
	interval time.Duration
	devs     []*Device
	next     time.Time // when it is due
	tries    int       // attempts that failed and are to be made again
}

// plan groups the devices into blocks: by unit, table and interval,
// adjacent or overlapping addresses in one block up to the most one
// request may read. Registers between two devices are never read: a unit
// may answer an address it does not have with an exception, which would
// fail the whole block.
func plan(devs []*Device, now time.Time) []*block {
	sorted := slices.Clone(devs)
	slices.SortStableFunc(sorted, func(a, b *Device) int {
		return cmp.Or(cmp.Compare(a.p.Unit, b.p.Unit), cmp.Compare(a.p.Table, b.p.Table),
			cmp.Compare(a.p.Interval, b.p.Interval), cmp.Compare(a.p.Address, b.p.Address))
	})
	var out []*block
	var cur *block
	for _, d := range sorted {
		first, last := int(d.p.Address), int(d.p.Address)+d.p.Words()-1
		if cur != nil && cur.unit == d.p.Unit && cur.table == d.p.Table && cur.interval == d.p.Interval &&
			first <= cur.last()+1 && max(last, cur.last())-int(cur.first)+1 <= maxRead(d.p.Table) {
			cur.count = uint16(max(last, cur.last()) - int(cur.first) + 1)
			cur.devs = append(cur.devs, d)
			continue
		}
		cur = &block{unit: d.p.Unit, table: d.p.Table, first: d.p.Address, count: uint16(d.p.Words()),
			interval: d.p.Interval, devs: []*Device{d}, next: now}
		out = append(out, cur)
	}
	return out
}

func (b *block) last() int { return int(b.first) + int(b.count) - 1 }

// maxRead is the most coils or registers one request of t reads.
func maxRead(t modbus.Table) int {
	if t.Bits() {
		return modbus.MaxReadBits
	}
	return modbus.MaxReadRegisters
}

// next returns what the line does now: a job, else the block due
// soonest, else how long until one is due or a unit's quiet time ends
// (0: nothing ever is). Units in their quiet time (Config.Quiet) are
// passed over.
func (l *Line) next(now time.Time) (*job, *block, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.jobs = slices.DeleteFunc(l.jobs, func(j *job) bool {
		if err := j.ctx.Err(); err != nil {
			j.finish(result{err: err})
			return true
		}
		return false
	})
	var wake time.Time // the soonest a job or block waits for
	later := func(t time.Time) {
		if wake.IsZero() || t.Before(wake) {
			wake = t
		}
	}
	if i := l.firstJob(now, later); i >= 0 {
		j := l.jobs[i]
		l.jobs = slices.Delete(l.jobs, i, i+1)
		return j, nil, 0
	}
	var soonest *block
	for _, b := range l.blocks {
		at := b.next
		if q := l.quiet[b.unit]; q.After(at) {
			at = q
		}
		if !at.After(now) && (soonest == nil || b.next.Before(soonest.next)) {
			soonest = b
		} else if at.After(now) {
			later(at)
		}
	}
	switch {
	case soonest != nil:
		return nil, soonest, 0
	case wake.IsZero():
		return nil, nil, 0
	}
	return nil, nil, wake.Sub(now)
}

// firstJob picks the job to run, or -1: a write of a safe value to a unit
// that answers, then any safe write, then other writes, then reads, each
// in the order they came; a job to a unit in its quiet time waits, and
// later is told when that ends. A stop's writes to the units that answer
// so are never queued behind a silent unit's timeouts.
func (l *Line) firstJob(now time.Time, later func(time.Time)) int {
	rank := func(j *job) int {
		switch {
		case j.safe && !l.failing[j.dev.p.Unit]:
			return 0
		case j.safe:
			return 1
		case j.write:
			return 2
		}
		return 3
	}
	best := -1
	for i, j := range l.jobs {
		if q := l.quiet[j.dev.p.Unit]; q.After(now) {
			later(q)
			continue
		}
		if best < 0 || rank(j) < rank(l.jobs[best]) {
			best = i
		}
	}
	return best
}

// poll reads a block once. A failure worth another attempt (no answer, a
// garbled one) leaves the block due, so that the attempt comes after the
// writes waiting and the unit's quiet time; the last attempt's failure,
// or an exception, is the devices' fault. A block that a unit refuses
// with exception 2 (an address it does not have) is split into its
// devices' own polls, so that one wrong address faults only its own
// device. It returns the error of a failed link.
func (l *Line) poll(ctx context.Context, c *modbus.Client, b *block) error {
	var bits []bool
	var regs []uint16
	err := l.attempt(ctx, ctx, func(actx context.Context) (err error) {
		if b.table.Bits() {
			bits, err = c.ReadBits(actx, b.unit, b.table, b.first, b.count)
		} else {
			regs, err = c.ReadRegisters(actx, b.unit, b.table, b.first, b.count)
		}
		return err
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	now := l.clk.Now()
	l.noteUnit(b.unit, err, now)
	if modbus.IsLinkError(err) {
		b.tries = 0
		return err
	}
	if retryable(err) && b.tries < l.cfg.Retries {
		b.tries++
		return nil // still due
	}
	b.tries, b.next = 0, now.Add(b.interval)
	var exc *modbus.Exception
	switch {
	case err == nil:
		for _, d := range b.devs {
			d.polled(b, bits, regs, now)
		}
	case errors.As(err, &exc) && exc.Code == 2 && len(b.devs) > 1:
		l.split(b, now)
	default:
		for _, d := range b.devs {
			d.failed(err)
		}
	}
	return nil
}

// split replaces b by a block for each of its devices, due now.
func (l *Line) split(b *block, now time.Time) {
	l.log.Info("modbus unit refused a block: polling its devices one by one",
		"unit", b.unit, "table", b.table.String(), "first", b.first, "count", b.count)
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.blocks, b)
	if i < 0 {
		return
	}
	blocks := append(make([]*block, 0, len(l.blocks)+len(b.devs)-1), l.blocks[:i]...)
	for _, d := range b.devs {
		blocks = append(blocks, &block{unit: b.unit, table: b.table, first: d.p.Address, count: uint16(d.p.Words()),
			interval: b.interval, devs: []*Device{d}, next: now})
	}
	l.blocks = append(blocks, l.blocks[i+1:]...)
}
