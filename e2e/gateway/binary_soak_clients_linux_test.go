package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// soakLedger is what the soak's clients were answered: the writes the
// gateway said it applied (by their unique reason) and the confirmations
// it said were approved, for the audit check; and when each client last
// connected, for the reconnection check.
type soakLedger struct {
	mu        sync.Mutex
	applied   map[string]string // write reason -> node
	approved  map[string]string // confirmation id -> node
	connected map[string]time.Time
	answered  map[string]int // client -> requests answered
	refused   map[string]int // client -> requests answered with an error
	changed   chan struct{}  // closed and replaced on every connection
}

func newSoakLedger() *soakLedger {
	return &soakLedger{applied: map[string]string{}, approved: map[string]string{},
		connected: map[string]time.Time{}, answered: map[string]int{}, refused: map[string]int{},
		changed: make(chan struct{})}
}

func (l *soakLedger) connect(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.connected[client] = time.Now()
	close(l.changed)
	l.changed = make(chan struct{})
}

// answer counts one answered request; err is the Hub's error, or nil.
func (l *soakLedger) answer(client string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answered[client]++
	if err != nil {
		l.refused[client]++
	}
}

func (l *soakLedger) wrote(node, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.applied[reason] = node
}

func (l *soakLedger) approve(node, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.approved[id] = node
}

// of returns the reasons (or confirmation ids) answered for node.
func of(m map[string]string, node string) []string {
	var out []string
	for k, n := range m {
		if n == node {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (l *soakLedger) answers(node string) (writes, approvals []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return of(l.applied, node), of(l.approved, node)
}

// waitReconnected waits until every client in names has connected since
// since, and fails naming those that did not within the deadline.
func (l *soakLedger) waitReconnected(t testing.TB, names []string, since time.Time, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		l.mu.Lock()
		var missing []string
		for _, n := range names {
			if !l.connected[n].After(since) {
				missing = append(missing, n)
			}
		}
		changed := l.changed
		l.mu.Unlock()
		if len(missing) == 0 {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Errorf("clients not reconnected %s after the restart: %s", within, strings.Join(missing, ", "))
			return
		}
	}
}

// soakClient is one client of the soak: it dials its node, works until
// the connection breaks, and dials again, until the soak ends.
type soakClient struct {
	name, node string
	url, token string
	work       func(ctx context.Context, s *soakSession) error
}

// soakSession is one connection of a client, with what its work needs.
type soakSession struct {
	*soakClient
	c      *halclient.Conn
	ledger *soakLedger
	rnd    *rand.Rand
	seq    *int // the client's own counter, across connections
}

// run is the client's life; it returns when ctx ends.
func (sc *soakClient) run(ctx context.Context, ledger *soakLedger) {
	seq := 0
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(len(sc.name))))
	for ctx.Err() == nil {
		c, err := halclient.Dial(ctx, sc.url, halclient.Options{Token: sc.token, ClientName: "soak-" + sc.name})
		if err != nil {
			// The gateway is being restarted: nothing announces its
			// return to a client, so it dials again shortly.
			pause(ctx, 100*time.Millisecond)
			continue
		}
		ledger.connect(sc.name)
		sc.work(ctx, &soakSession{soakClient: sc, c: c, ledger: ledger, rnd: rnd, seq: &seq})
		c.Close()
	}
}

// jitter is a pace between d/2 and 3d/2.
func (s *soakSession) jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(s.rnd.Int64N(int64(d)))
}

// hubAnswered reports whether err is an answer of the Hub's (an error
// it gave) rather than a broken connection, and counts it.
func (s *soakSession) hubAnswered(err error) bool {
	var he *halclient.HubError
	if err != nil && !errors.As(err, &he) {
		return false
	}
	s.ledger.answer(s.name, err)
	return true
}

// writer writes devices in turn, each write with a reason of its own,
// and notes the writes answered applied.
func writer(devices []string, value func(dev string, n int) any, every time.Duration) func(context.Context, *soakSession) error {
	return func(ctx context.Context, s *soakSession) error {
		for ctx.Err() == nil {
			*s.seq++
			dev := devices[*s.seq%len(devices)]
			reason := fmt.Sprintf("soak %s %d", s.name, *s.seq)
			res, err := s.c.Write(ctx, dev, value(dev, *s.seq), reason)
			if !s.hubAnswered(err) {
				return err
			}
			if err == nil && res.Status == openhal.StatusApplied {
				s.ledger.wrote(s.node, reason)
			}
			pause(ctx, s.jitter(every))
		}
		return nil
	}
}

// reader reads devices in turn (an adapter's may fault or time out).
func reader(devices []string, every time.Duration) func(context.Context, *soakSession) error {
	return func(ctx context.Context, s *soakSession) error {
		for ctx.Err() == nil {
			*s.seq++
			_, err := s.c.Read(ctx, devices[*s.seq%len(devices)], 0)
			if !s.hubAnswered(err) {
				return err
			}
			pause(ctx, s.jitter(every))
		}
		return nil
	}
}

// watcher takes the notifications until the connection ends, counting
// them as answers.
func watcher(ctx context.Context, s *soakSession) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.c.Done():
			return s.c.Err()
		case <-s.c.Notifications():
			s.ledger.answer(s.name, nil)
		}
	}
}

// confirmer has an agent ask for sim.heater on (high risk: pending) and
// an admin connection approve it; approvals answered are noted.
func confirmer(adminURL, adminTok string, every time.Duration) func(context.Context, *soakSession) error {
	return func(ctx context.Context, s *soakSession) error {
		admin, err := halclient.Dial(ctx, adminURL, halclient.Options{Token: adminTok, ClientName: "soak-approver"})
		if err != nil {
			return err
		}
		defer admin.Close()
		for ctx.Err() == nil {
			*s.seq++
			res, err := s.c.Write(ctx, "sim.heater", true, fmt.Sprintf("soak %s %d", s.name, *s.seq))
			if !s.hubAnswered(err) {
				return err
			}
			if err == nil && res.Confirmation != nil {
				_, err := admin.Approve(ctx, res.Confirmation.ID)
				if !s.hubAnswered(err) {
					return err
				}
				if err == nil {
					s.ledger.approve(s.node, res.Confirmation.ID)
				}
			}
			pause(ctx, s.jitter(every))
		}
		return nil
	}
}

// stopper engages the emergency stop and resumes, over and over; the
// lock keeps its cycle apart from the driver's latched-stop check. A
// resume that a kill interrupted is tried again on the next connection
// before the lock is let go.
func stopper(lock *sync.Mutex, every time.Duration) func(context.Context, *soakSession) error {
	owed := false // a stop engaged and not yet resumed, under lock
	return func(ctx context.Context, s *soakSession) error {
		defer func() {
			if owed && ctx.Err() != nil { // the soak ends: the driver resumes
				owed = false
				lock.Unlock()
			}
		}()
		for ctx.Err() == nil {
			if !owed {
				pause(ctx, s.jitter(every))
				lock.Lock()
				owed = true
				if _, err := s.c.Stop(ctx, "soak"); !s.hubAnswered(err) {
					return err // the next connection resumes what may be engaged
				}
				pause(ctx, s.jitter(every/4))
			}
			if err := s.c.Resume(ctx); !s.hubAnswered(err) {
				return err
			}
			owed = false
			lock.Unlock()
		}
		return nil
	}
}
