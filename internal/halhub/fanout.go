package halhub

import (
	"context"
	"sync"
	"time"
)

// fanout writes the notifications waiting on every connection whose
// transport has a write that never waits (tryWriter), from one goroutine.
//
// Why not each connection's writer: a value sent to 250 watchers would
// wake 250 writer goroutines, 250 hand-offs through the scheduler per
// value, and every goroutine readied meanwhile (the answer of the client
// that wrote the value, its audit sync) would wait behind them for a
// core. One goroutine walking the connections does the same writes
// without the hand-offs, and batches on its own: values that come while
// it walks wait on their queues and go out together at its next pass,
// one write(2) for several, as many as the pass took to come.
//
// It never waits on a client: what a socket does not take goes to that
// connection's writer (outQueue.handOver), whose write may wait, as does
// a batch for a connection whose writer is still at it (tryWriter.fits).
// Answers are not its: a waiting answer wakes the connection's writer,
// so that an answer never waits for a pass over the other connections.
type fanout struct {
	mu    sync.Mutex
	dirty []*session // connections with notifications waiting, each once (session.fanned)
	wake  chan struct{}

	// The goroutine's own, reused from one connection to the next.
	spare   []*session
	batch   [][]byte
	written []func()
	scratch []byte
}

// The fan-out's pace (fanout.rest): at most a fourth of a core, in
// stretches of fanoutChunk connections, and a value waits at most 20 ms
// more for it: the rests of one pass add up to maxFanoutRest at most.
const (
	fanoutShare   = 4
	fanoutChunk   = 16
	maxFanoutRest = 20 * time.Millisecond
	minFanoutRest = 50 * time.Microsecond
)

func newFanout() *fanout { return &fanout{wake: make(chan struct{}, 1)} }

// mark has s's waiting notifications written at the next pass. It is
// called with s's queue locked (outQueue.fan), so it only notes s.
func (f *fanout) mark(s *session) {
	if !s.fanned.CompareAndSwap(false, true) {
		return
	}
	f.mu.Lock()
	f.dirty = append(f.dirty, s)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// run makes a pass each time a connection is marked, until ctx ends.
func (f *fanout) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
		start := time.Now()
		f.mu.Lock()
		pass := f.dirty
		f.dirty = f.spare[:0]
		f.mu.Unlock()
		largest := 0              // the longest batch of the stretch
		restLeft := maxFanoutRest // what the pass may still rest
		for i, s := range pass {
			s.fanned.Store(false) // what comes from now on marks it again
			largest = max(largest, f.flush(s))
			pass[i] = nil
			if i%fanoutChunk == fanoutChunk-1 {
				restLeft -= f.rest(time.Since(start), largest, restLeft)
				start, largest = time.Now(), 0
				if ctx.Err() != nil {
					return
				}
			}
		}
		f.spare = pass
		f.rest(time.Since(start), largest, restLeft)
	}
}

// rest waits after a stretch of the pass — fanoutChunk connections, or
// what was left — that took d, three times as long, so that the fan-out
// takes at most 1/fanoutShare of a core: values that come meanwhile wait
// on their queues and go out together, a connection's in one write(2).
// A pass over a few connections is short and its rest too short to
// notice; one over hundreds at a high rate of values, where every
// write(2) costs about what the message does (the kernel delivers it to
// the reader in the same call), batches them instead of taking the cores
// the clients that act need. Resting after each stretch rather than
// after the whole pass matters as much as the share: while the fan-out
// runs it holds one of the runtime's Ps, and a goroutine readied meanwhile
// on a P whose thread is in a system call (the audit log's fsync) waits
// for it; a stretch of 16 writes is tens of microseconds. (Measured:
// the writer's p99 beside 250 watchers was 2-3 times its p99 alone with
// one rest a pass, 1.1-1.6 times with a rest every 16 connections.)
// Nothing waits when nothing comes.
//
// The share gives way when the fan-out falls behind: a connection whose
// batch held fanoutBehind values has had them wait long enough (32 ms
// of a 1 kHz value) to be on the way to having them coalesced, which a
// client that reads must never see for want of the Hub's time — on a
// slow core, with many watchers, the fan-out then takes what it needs.
//
// And the rests of one pass add up to maxFanoutRest at most (left is
// what remains; rest returns what it took). d is wall time: a stretch
// the kernel preempted for a few milliseconds (a busy machine, a VM's
// host) earns three times that, every stretch of the pass alike.
// (Measured, with tests running beside halbench's fan-out: stretches of
// 5-7 ms, and passes over 251 connections of up to 91 ms, 80 of them
// resting: longer than the 64 ms a 1 kHz value may wait on a connection
// before it coalesces.)
func (f *fanout) rest(d time.Duration, largest int, left time.Duration) time.Duration {
	r := restAfter(d, largest, left)
	if r > 0 {
		time.Sleep(r)
	}
	return r
}

// fanoutBehind is the batch from which the fan-out does not rest. At 32
// (half the value slack when it was 64) the arm64 emulation's slow cores
// coalesced 1.7 % of a 1 kHz value's deliveries to 100 watchers, 29 %
// without the rule (docs/performance.md, change 10).
const fanoutBehind = 32

// restAfter is the rest after a stretch that took d and wrote batches of
// at most largest messages, with left of the pass's rests still to take:
// none when the fan-out is falling behind, or when too short to be worth
// a timer.
func restAfter(d time.Duration, largest int, left time.Duration) time.Duration {
	if largest >= fanoutBehind {
		return 0
	}
	r := min(d*(fanoutShare-1), left)
	if r < minFanoutRest {
		return 0
	}
	return r
}

// flush writes what waits on s's queue as far as its socket takes it at
// once, as the connection's writer would, and hands the rest to that
// writer. It returns how many messages it took.
func (f *fanout) flush(s *session) (batch int) {
	f.batch, f.written = s.q.takeIf(f.batch[:0], f.written[:0], s.tw.fits)
	batch = len(f.batch)
	if batch == 0 {
		return 0
	}
	rest, all, err := s.tw.tryWrite(f.batch, &f.scratch)
	s.settle(rest, all, err, afterAll(f.written))
	clear(f.batch)
	clear(f.written)
	return batch
}

// afterAll returns one callback that runs fns in order (nil for none).
// It copies fns: the caller reuses its slice. (Answers wake their
// connection's writer, so a batch of the fan-out seldom holds one, and
// more than one rarer still.)
func afterAll(fns []func()) func() {
	switch len(fns) {
	case 0:
		return nil
	case 1:
		return fns[0]
	}
	all := append([]func(){}, fns...)
	return func() {
		for _, fn := range all {
			fn()
		}
	}
}
