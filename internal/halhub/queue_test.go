package halhub

import (
	"fmt"
	"strings"
	"testing"
)

// testQueue is a queue of limit notifications and slack values per
// device, with bytes enough for any test that does not test them.
func testQueue(limit, slack int) *outQueue {
	return newOutQueue(queueLimits{messages: limit, slack: slack, bytes: 1 << 20}, nil, nil)
}

// takeQueued takes what waits in q and returns it as strings.
func takeQueued(q *outQueue) (msgs []string, done []func()) {
	batch, done := q.take(nil, nil)
	for _, b := range batch {
		msgs = append(msgs, string(b))
	}
	return msgs, done
}

// queueReady reports whether q has signalled that something waits, taking the
// signal.
func queueReady(q *outQueue) bool {
	select {
	case <-q.ready:
		return true
	default:
		return false
	}
}

// Spec §8: a newer value of a device replaces the one waiting and moves to
// the back, so that the order of events is kept; values of other devices
// and other messages stay where they are.
func TestQueueCoalescesValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []string // "device=msg" queues a value, "msg" another message
		want string
	}{
		{"one value", []string{"a=a1"}, "a1"},
		{"newest wins", []string{"a=a1", "a=a2", "a=a3"}, "a3"},
		{"moves to the back", []string{"a=a1", "x", "b=b1", "a=a2"}, "x b1 a2"},
		{"devices apart", []string{"a=a1", "b=b1", "a=a2", "b=b2", "c=c1"}, "a2 b2 c1"},
		{"others all kept", []string{"x", "a=a1", "y", "a=a2", "z"}, "x y a2 z"},
		{"head replaced", []string{"a=a1", "b=b1", "c=c1", "a=a2"}, "b1 c1 a2"},
		{"tail replaced", []string{"a=a1", "b=b1", "b=b2"}, "a1 b2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := testQueue(100, 1)
			for _, op := range tc.ops {
				if dev, m, ok := strings.Cut(op, "="); ok {
					q.pushValue(dev, []byte(m))
				} else if !q.push([]byte(op), nil) {
					t.Fatalf("push %s refused", op)
				}
			}
			if all, _ := q.queued(); all != len(strings.Fields(tc.want)) {
				t.Errorf("%d messages wait, want %d", all, len(strings.Fields(tc.want)))
			}
			got, _ := takeQueued(q)
			if strings.Join(got, " ") != tc.want {
				t.Errorf("took %q, want %q", got, tc.want)
			}
		})
	}
}

// Spec §8: more than limit messages other than values is an overflow; values
// and answers are never refused (answers are bounded by MaxInFlight), and
// a take makes room again.
func TestQueueLimit(t *testing.T) {
	q := testQueue(2, 1)
	for _, m := range []string{"n1", "n2"} {
		if !q.push([]byte(m), nil) {
			t.Fatalf("push %s refused below the limit", m)
		}
	}
	if q.push([]byte("n3"), nil) {
		t.Fatal("push past the limit accepted")
	}
	answered := 0
	for range 5 {
		if !q.push([]byte("answer"), func() { answered++ }) {
			t.Fatal("an answer was refused")
		}
	}
	for i := range 5 {
		q.pushValue(string(rune('a'+i)), []byte("v"))
	}
	if q.push([]byte("n3"), nil) {
		t.Fatal("push past the limit accepted after answers and values")
	}
	got, done := takeQueued(q)
	if len(got) != 2+5+5 {
		t.Fatalf("took %d messages, want 12: %q", len(got), got)
	}
	if len(done) != 5 {
		t.Fatalf("take returned %d callbacks, want one per answer (5)", len(done))
	}
	for _, f := range done {
		f()
	}
	if answered != 5 {
		t.Errorf("%d callbacks ran, want 5", answered)
	}
	if !q.push([]byte("n4"), nil) || !q.push([]byte("n5"), nil) {
		t.Fatal("push refused after take emptied the queue")
	}
}

// take hands back the answers' callbacks in the order of the answers, with
// the messages in queue order, and reuses the caller's slices.
func TestQueueTake(t *testing.T) {
	q := testQueue(10, 1)
	var order []string
	cb := func(s string) func() { return func() { order = append(order, s) } }
	q.push([]byte("r1"), cb("r1"))
	q.pushValue("a", []byte("a1"))
	q.push([]byte("n1"), nil)
	q.push([]byte("r2"), cb("r2"))
	if !queueReady(q) {
		t.Fatal("no ready signal after pushes")
	}
	batch := make([][]byte, 0, 8)
	done := make([]func(), 0, 8)
	batch, done = q.take(batch, done)
	var got []string
	for _, b := range batch {
		got = append(got, string(b))
	}
	if strings.Join(got, " ") != "r1 a1 n1 r2" {
		t.Errorf("took %q", got)
	}
	q.done() // written, as the writer reports it
	for _, f := range done {
		f()
	}
	if strings.Join(order, " ") != "r1 r2" {
		t.Errorf("callbacks ran as %q, want r1 r2", order)
	}
	if cap(batch) != 8 || cap(done) != 8 {
		t.Errorf("take did not reuse the slices it was given")
	}
	if got, _ := takeQueued(q); len(got) != 0 || queueReady(q) {
		t.Errorf("after take: %q waits, ready signalled %v", got, queueReady(q))
	}
	// A value taken is no longer waiting: the next one goes to the back.
	q.pushValue("a", []byte("a2"))
	q.push([]byte("n2"), nil)
	if got, _ := takeQueued(q); strings.Join(got, " ") != "a2 n2" {
		t.Errorf("after take: took %q, want a2 n2", got)
	}
}

// A closed queue drops what waits and takes nothing more; a push is not an
// overflow (the connection is closing anyway).
func TestQueueClosed(t *testing.T) {
	q := testQueue(1, 1)
	q.push([]byte("n1"), nil)
	q.pushValue("a", []byte("a1"))
	q.close()
	if !q.push([]byte("n2"), nil) || !q.push([]byte("n3"), nil) {
		t.Error("push to a closed queue reported an overflow")
	}
	q.pushValue("a", []byte("a2"))
	if got, done := takeQueued(q); len(got) != 0 || len(done) != 0 {
		t.Errorf("a closed queue gave %q", got)
	}
}

// A busy connection coalescing one device's values allocates nothing per
// value: nodes come from the free list.
func TestQueueSteadyStateDoesNotAllocate(t *testing.T) {
	q := testQueue(10, 1)
	msg := []byte("v")
	batch := make([][]byte, 0, 4)
	done := make([]func(), 0, 4)
	q.pushValue("a", msg)
	batch, done = q.take(batch[:0], done[:0])
	q.done()
	allocs := testing.AllocsPerRun(1000, func() {
		q.pushValue("a", msg)
		q.pushValue("a", msg)
		q.pushValue("b", msg)
		batch, done = q.take(batch[:0], done[:0])
		q.done()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per round, want 0", allocs)
	}
}

// With slack, values of one device wait up to the slack; past it, the
// oldest of that device goes and the order of the rest is kept.
func TestQueueValueSlack(t *testing.T) {
	q := testQueue(10, 3)
	q.pushValue("a", []byte("a1"))
	q.pushValue("b", []byte("b1"))
	q.pushValue("a", []byte("a2"))
	q.push([]byte("n1"), nil)
	q.pushValue("a", []byte("a3"))
	q.pushValue("a", []byte("a4")) // a1 goes
	q.pushValue("b", []byte("b2"))
	batch, _ := q.take(nil, nil)
	var got []string
	for _, m := range batch {
		got = append(got, string(m))
	}
	if s := strings.Join(got, " "); s != "b1 a2 n1 a3 a4 b2" {
		t.Errorf("queue %s", s)
	}
	q.pushValue("a", []byte("a5"))
	if all, values := q.queued(); all != 1 || values != 1 {
		t.Errorf("after take: %d messages, %d values", all, values)
	}
}

// Spec §8: the queue is bounded in bytes too. It counts every message
// until the writer has written it (a batch taken but not written still
// counts); values are coalesced to make room — first the older values of
// the device being queued, then older values of other devices, each
// device keeping its newest; any message that still does not fit is
// refused (the caller closes the connection). The Hub's budget follows
// every change, and a closed queue gives back all it held.
func TestQueueBytes(t *testing.T) {
	budget := newQueueBudget(1 << 20)
	q := newOutQueue(queueLimits{messages: 100, slack: 100, bytes: 100}, budget, nil)
	ten := func(s string) []byte { return []byte(s + strings.Repeat(".", 10-len(s))) }
	check := func(what string, want int) {
		t.Helper()
		if held, _ := q.held(); held != want || budget.held.Load() != int64(want) {
			t.Fatalf("%s: the queue holds %d bytes, the budget counts %d; want %d", what, held, budget.held.Load(), want)
		}
	}
	for i := range 4 {
		q.pushValue("a", ten(fmt.Sprint("a", i)))
		q.pushValue("b", ten(fmt.Sprint("b", i)))
	}
	if !q.push(ten("n1"), nil) || !q.push(ten("r1"), func() {}) {
		t.Fatal("a message that fits was refused")
	}
	check("8 values and 2 others", 100)
	q.pushValue("a", ten("a4")) // a0 goes
	q.pushValue("c", ten("c0")) // a value of another device goes
	if !q.push(ten("n2"), nil) {
		t.Fatal("a notification was refused while older values could go")
	}
	check("full", 100)
	batch, done := takeQueued(q)
	if got := strings.Join(batch, " "); strings.Count(got, "a") > 4 || !strings.Contains(got, "a4") || !strings.Contains(got, "b3") ||
		!strings.Contains(got, "c0") || !strings.Contains(got, "n1") || !strings.Contains(got, "n2") || !strings.Contains(got, "r1") {
		t.Errorf("took %q: want the newest of each device and every other message", got)
	}
	check("taken, not written", 100)
	if q.push(ten("n3"), nil) || q.push(ten("r2"), func() {}) {
		t.Fatal("a message was taken while the batch being written fills the queue")
	}
	if q.pushValue("d", ten("d0")) {
		t.Fatal("a value of a device with none waiting was taken with no room")
	}
	q.done()
	for _, f := range done {
		f()
	}
	check("written", 0)
	if !q.push([]byte(strings.Repeat("x", 100)), nil) || q.push([]byte("y"), nil) {
		t.Fatal("a message of exactly the bound, then one byte more")
	}
	q.close()
	check("closed", 0)
}

// A stalled client's queue coalesces its values as it fills with bytes:
// one device's values of 1 KiB each stay within the bound, the newest
// last, and nothing is refused.
func TestQueueBytesCoalesceValues(t *testing.T) {
	q := newOutQueue(queueLimits{messages: 10, slack: valueSlack, bytes: 8 << 10}, nil, nil)
	for i := range 1000 {
		if !q.pushValue("scope", []byte(fmt.Sprintf("%04d", i)+strings.Repeat(".", 1020))) {
			t.Fatalf("value %d refused", i)
		}
	}
	got, _ := takeQueued(q)
	if len(got) != 8 || !strings.HasPrefix(got[7], "0999") {
		t.Errorf("%d values wait, the last %.4s; want 8, the newest last", len(got), got[len(got)-1])
	}
}

// An answer's goroutine may write it itself (claim), with what waits
// before it, only when nothing is being written, so that messages keep
// their order; while it writes, the writer takes nothing, and done wakes
// it for what came meanwhile. A claimed batch counts in the bytes held
// until done.
func TestQueueClaim(t *testing.T) {
	fits := func(int) bool { return true }
	q := testQueue(10, 1)
	var buf claimBuf
	if !q.claim([]byte("r1"), &buf, fits) || len(buf.batch) != 1 || string(buf.batch[0]) != "r1" {
		t.Fatalf("claim on an empty queue: %q; want r1", buf.batch)
	}
	if b, takenAt := q.held(); b != 2 || takenAt.IsZero() {
		t.Errorf("claimed: %d bytes held, taken at %v; want 2 and a time", b, takenAt)
	}
	q.push([]byte("n1"), nil)
	queueReady(q) // the push's signal: the writer wakes and must take nothing
	if got, _ := takeQueued(q); len(got) != 0 {
		t.Errorf("the writer took %q while the reader wrote", got)
	}
	if q.claim([]byte("r2"), &buf, fits) {
		t.Error("a second claim while one is written")
	}
	q.done()
	if !queueReady(q) {
		t.Error("done did not wake the writer for what was queued meanwhile")
	}
	if q.claim([]byte("r2"), &buf, func(int) bool { return false }) {
		t.Error("claim of what waits while the transport cannot take it")
	}
	answered := false
	q.push([]byte("a1"), func() { answered = true })
	ok := q.claim([]byte("r2"), &buf, fits)
	if got := fmt.Sprintf("%q", buf.batch); !ok || got != `["n1" "a1" "r2"]` || len(buf.done) != 1 {
		t.Fatalf("claim while n1 and a1 wait: %s with %d callbacks, %v; want n1 a1 r2, one", got, len(buf.done), ok)
	}
	if buf.done[0](); !answered {
		t.Error("the waiting answer's callback was not the one claimed")
	}
	if b, _ := q.held(); b != 6 {
		t.Errorf("%d bytes held while n1 a1 r2 are written, want 6", b)
	}
	if got, _ := takeQueued(q); len(got) != 0 {
		t.Errorf("the writer took %q after the claim took everything", got)
	}
	q.done()
	q.push([]byte("n2"), nil)
	if got, _ := q.take(nil, nil); len(got) != 1 {
		t.Fatalf("the writer took %q, want n2", got)
	}
	if q.claim([]byte("r3"), &buf, fits) {
		t.Error("claim while the writer writes n2")
	}
	q.done()
	if b, _ := q.held(); b != 0 {
		t.Errorf("%d bytes held after done, want 0", b)
	}
	q.close()
	if q.claim([]byte("r4"), &buf, fits) {
		t.Error("claim on a closed queue")
	}
}

// What the socket did not take of a claimed message goes to the writer
// before anything queued meanwhile, with its callback.
func TestQueueHandOver(t *testing.T) {
	q := testQueue(10, 1)
	q.claim([]byte("abcdef"), new(claimBuf), func(int) bool { return true })
	q.push([]byte("n1"), nil)
	q.pushValue("a", []byte("a1"))
	answered := false
	q.handOver([]byte("def"), func() { answered = true })
	if b, takenAt := q.held(); b != 3+2+2 || !takenAt.IsZero() {
		t.Errorf("after hand-over: %d bytes held, taken at %v; want 7, none", b, takenAt)
	}
	if !queueReady(q) {
		t.Error("the hand-over did not wake the writer")
	}
	got, done := takeQueued(q)
	if strings.Join(got, " ") != "def n1 a1" || len(done) != 1 {
		t.Fatalf("took %q with %d callbacks, want def n1 a1 and one", got, len(done))
	}
	done[0]()
	if !answered {
		t.Error("the hand-over's callback was not the one taken")
	}
}

// On a queue the fan-out serves, notifications wake the fan-out and an
// answer wakes the writer, so that no answer waits for a pass over the
// other connections; takeIf takes only what fits at once, and wakes the
// writer for what does not.
func TestQueueWakesFanOut(t *testing.T) {
	q := testQueue(10, 4)
	fanned := 0
	q.fan = func() { fanned++ }
	q.pushValue("a", []byte("a1"))
	q.push([]byte("n1"), nil)
	if fanned != 2 || queueReady(q) {
		t.Errorf("two notifications: fan-out told %d times, writer woken %v; want 2, false", fanned, queueReady(q))
	}
	q.push([]byte("r1"), func() {})
	if !queueReady(q) {
		t.Error("an answer did not wake the writer")
	}
	if got, _ := q.takeIf(nil, nil, func(int) bool { return false }); len(got) != 0 {
		t.Errorf("takeIf took %d messages that do not fit", len(got))
	}
	if !queueReady(q) {
		t.Error("takeIf left what does not fit without waking the writer")
	}
	var sizes []int
	batch, done := q.takeIf(nil, nil, func(n int) bool { sizes = append(sizes, n); return true })
	if len(batch) != 3 || len(done) != 1 || fmt.Sprint(sizes) != "[6]" {
		t.Errorf("takeIf: %d messages, %d callbacks, asked for %v bytes; want 3, 1, [6]", len(batch), len(done), sizes)
	}
	q.pushValue("a", []byte("a2"))
	fanned = 0
	q.done()
	if fanned != 1 || queueReady(q) {
		t.Errorf("done with a value waiting: fan-out told %d times, writer woken %v; want 1, false", fanned, queueReady(q))
	}
}

// A taken batch is bounded in bytes (queueLimits.take), at least one
// message whatever its size: what stays keeps its order and its counts —
// each device's run of values, the answers that wake the writer, the
// other notifications and their limit — so that it coalesces, wakes and
// overflows as if it had never been behind a batch. A claim takes what
// waits only when all of it and the answer fit in one batch.
func TestQueueTakeBounded(t *testing.T) {
	q := newOutQueue(queueLimits{messages: 3, slack: 2, bytes: 1 << 10, take: 6}, nil, nil)
	fanned := 0
	q.fan = func() { fanned++ }
	q.pushValue("a", []byte("a1"))
	q.push([]byte("n1"), nil)
	q.push([]byte("r1"), func() {})
	q.pushValue("a", []byte("a2"))
	q.pushValue("b", []byte("b1"))
	queueReady(q) // r1's wake-up
	got, done := takeQueued(q)
	if strings.Join(got, " ") != "a1 n1 r1" || len(done) != 1 {
		t.Fatalf("took %q with %d callbacks, want a1 n1 r1 and one", got, len(done))
	}
	if all, values := q.queued(); all != 2 || values != 2 {
		t.Errorf("after the take %d messages wait, %d values; want a2 b1", all, values)
	}
	// a2 is a's only waiting value now: a's run starts at it.
	q.pushValue("a", []byte("a3"))
	q.pushValue("a", []byte("a4")) // past the slack of 2: a2 goes, not a taken one
	fanned = 0
	q.done()
	if queueReady(q) || fanned != 1 {
		t.Errorf("done with values alone waiting: writer woken %v, fan-out told %d times; want false, 1 (r1 no longer counted)", queueReady(q), fanned)
	}
	got, _ = takeQueued(q)
	if strings.Join(got, " ") != "b1 a3 a4" {
		t.Fatalf("took %q, want b1 a3 a4", got)
	}
	q.done()
	// The limit of waiting notifications counts those still waiting only.
	for _, n := range []string{"n2", "n3", "n4"} {
		if !q.push([]byte(n), nil) {
			t.Fatalf("%s refused with room for it", n)
		}
	}
	if got, _ = takeQueued(q); strings.Join(got, " ") != "n2 n3 n4" {
		t.Fatalf("took %q, want n2 n3 n4", got)
	}
	q.done()
	if !q.push([]byte("n5"), nil) || !q.push([]byte("n6"), nil) || !q.push([]byte("n7"), nil) || q.push([]byte("n8"), nil) {
		t.Error("the limit of 3 waiting notifications, counted after a bounded take")
	}
	// One message larger than the bound is taken alone.
	takeQueued(q)
	q.done()
	takeQueued(q)
	q.done()
	q.push([]byte("a message of 20 bytes"), nil)
	if got, _ = takeQueued(q); len(got) != 1 {
		t.Fatalf("took %q, want the large message alone", got)
	}
	q.done()
	// A claim takes what waits only when all of it fits with the answer.
	q.pushValue("c", []byte("c1"))
	q.pushValue("c", []byte("c2"))
	var buf claimBuf
	fits := func(int) bool { return true }
	if q.claim([]byte("r2r2"), &buf, fits) {
		t.Error("claimed 8 bytes where a batch holds 6")
	}
	if !q.claim([]byte("r2"), &buf, fits) || fmt.Sprintf("%q", buf.batch) != `["c1" "c2" "r2"]` {
		t.Errorf("claim of 6 bytes: %q, want c1 c2 r2", buf.batch)
	}
}
