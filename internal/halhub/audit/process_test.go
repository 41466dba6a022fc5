package audit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/openhal/gateway/openhal"
)

// The tests re-run their own binary as a second process that appends to
// the same log. Its mode is in childEnv; its options in the others.
const (
	childEnv      = "AUDIT_TEST_CHILD" // "append" or "spam"
	childDirEnv   = "AUDIT_TEST_DIR"
	childCountEnv = "AUDIT_TEST_COUNT" // entries per goroutine, for "append"
	childMaxEnv   = "AUDIT_TEST_MAX"   // MaxFileBytes
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if err := child(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const childGoroutines = 4

// child appends from childGoroutines goroutines and prints each seq on
// stdout once its Append has returned. "append" prints "ready", waits for
// a line on stdin, appends its count and exits; "spam" appends until it is
// killed.
func child(mode string) error {
	maxBytes, _ := strconv.ParseInt(os.Getenv(childMaxEnv), 10, 64)
	l, err := Open(os.Getenv(childDirEnv), Options{MaxFileBytes: maxBytes, KeepFiles: 1 << 20, Logger: quiet()})
	if err != nil {
		return err
	}
	defer l.Close()
	count := -1
	if mode == "append" {
		if count, err = strconv.Atoi(os.Getenv(childCountEnv)); err != nil {
			return err
		}
		os.Stdout.WriteString("ready\n")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
	}
	var mu sync.Mutex // one write per seq, whole
	var wg sync.WaitGroup
	errs := make(chan error, childGoroutines)
	for g := range childGoroutines {
		wg.Go(func() {
			e := Entry{Principal: openhal.Principal{Kind: openhal.KindService, Name: "child"}, Action: "write",
				Device: "bench.pump", Value: strings.Repeat("v", 100*g), Outcome: "applied"}
			if g == 1 {
				e.Action, e.Outcome = "stop", "stopped" // into the kept set
			}
			for i := 0; count < 0 || i < count; i++ {
				seqs, err := l.Append(context.Background(), e)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				os.Stdout.WriteString(strconv.FormatUint(seqs[0], 10) + "\n")
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// startChild starts the test binary as a child appending to dir; its
// stdout lines arrive on the channel, which is closed at EOF.
func startChild(t *testing.T, mode, dir string, count int, maxBytes int64) (*exec.Cmd, io.WriteCloser, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childDirEnv+"="+dir,
		childCountEnv+"="+strconv.Itoa(count), childMaxEnv+"="+strconv.FormatInt(maxBytes, 10))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, stdin, lines
}

func parseSeqs(t *testing.T, lines []string) []uint64 {
	t.Helper()
	var seqs []uint64
	for _, s := range lines {
		q, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("child printed %q", s)
		}
		seqs = append(seqs, q)
	}
	return seqs
}

// checkAll lists the log in dir and checks that it holds exactly seqs
// 1..n, each line whole, those in mine written by principal me.
func checkAll(t *testing.T, l *Log, n int, mine map[uint64]bool, me string) {
	t.Helper()
	lines, seqs, skipped := listAll(t, l)
	if !slices.Equal(seqs, seqRange(1, uint64(n))) || skipped != 0 {
		t.Fatalf("List: %d entries, skipped %d; want seqs 1..%d", len(seqs), skipped, n)
	}
	for i, line := range lines {
		if got := strings.Contains(string(line), `"name":"`+me+`"`); got != mine[seqs[i]] {
			t.Fatalf("seq %d (%s) written by %s: %v", seqs[i], line, me, mine[seqs[i]])
		}
	}
}

// TestTwoLogsOneDir: two Logs on one directory, standing in for two
// processes, each writing to both file sets, with a reader listing all
// along: every List sees seqs 1..n with no gap, though the sets are two
// files written one after the other.
func TestTwoLogsOneDir(t *testing.T) {
	const perGoroutine, goroutines = 100, 4
	dir := t.TempDir()
	logs := []*Log{openLog(t, dir, Options{MaxFileBytes: 4096, KeepFiles: 1 << 20}), openLog(t, dir, Options{MaxFileBytes: 4096, KeepFiles: 1 << 20})}
	var (
		mu   sync.Mutex
		mine = make(map[uint64]bool) // written by logs[0]
		wg   sync.WaitGroup
	)
	for i, l := range logs {
		name := []string{"first", "second"}[i]
		for g := range goroutines {
			wg.Go(func() {
				e := Entry{Principal: openhal.Principal{Kind: openhal.KindAgent, Name: name}, Action: "write", Outcome: "applied"}
				if g == 1 {
					e.Action, e.Outcome = "write", "blocked" // into the kept set
				}
				for range perGoroutine {
					seqs, err := l.Append(context.Background(), e)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if _, dup := mine[seqs[0]]; dup {
						t.Errorf("seq %d given twice", seqs[0])
					}
					mine[seqs[0]] = i == 0
					mu.Unlock()
				}
			})
		}
	}
	done := make(chan struct{})
	listed := make(chan int)
	go func() { // every List sees seqs 1..n, whatever the writers are doing
		rounds := 0
		defer func() { listed <- rounds }()
		for {
			select {
			case <-done:
				return
			default:
			}
			pg, err := logs[1].List(0, ListOptions{})
			lines, skipped := pg.Entries, pg.Skipped
			if err != nil || skipped != 0 {
				t.Errorf("List during writes: %v, %d skipped", err, skipped)
				return
			}
			for i, line := range lines {
				if seq, ok := parseLine(line); !ok || seq != uint64(i+1) {
					t.Errorf("List during writes: line %d is %s", i, line)
					return
				}
			}
			rounds++
		}
	}()
	wg.Wait()
	close(done)
	t.Logf("%d Lists during the writes", <-listed)
	for seq, first := range mine {
		if !first {
			delete(mine, seq)
		}
	}
	checkAll(t, logs[0], 2*goroutines*perGoroutine, mine, "first")
	if s0, s1 := logs[0].Stats(), logs[1].Stats(); s0.Resyncs == 0 || s1.Resyncs == 0 || s0.Rotations+s1.Rotations == 0 {
		t.Errorf("the Logs did not interleave: %+v %+v", s0, s1)
	}
}

// TestTwoProcesses: a second process appends to the log while this one
// does.
func TestTwoProcesses(t *testing.T) {
	const perGoroutine = 200
	dir := t.TempDir()
	l := openLog(t, dir, Options{MaxFileBytes: 8192, KeepFiles: 1 << 20})
	cmd, stdin, lines := startChild(t, "append", dir, perGoroutine, 8192)
	if got := wait(t, lines, "the child to start"); got != "ready" {
		t.Fatalf("child said %q", got)
	}
	var (
		mu     sync.Mutex
		parent = make(map[uint64]bool)
		wg     sync.WaitGroup
	)
	for range childGoroutines {
		wg.Go(func() {
			e := Entry{Principal: openhal.Principal{Kind: openhal.KindAgent, Name: "parent"}, Action: "token.add", Outcome: "created"}
			for range perGoroutine {
				seqs, err := l.Append(context.Background(), e)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				parent[seqs[0]] = true
				mu.Unlock()
			}
		})
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	var printed []string
	for s := range lines {
		printed = append(printed, s)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	wg.Wait()
	childSeqs := parseSeqs(t, printed)
	if len(childSeqs) != childGoroutines*perGoroutine {
		t.Fatalf("child printed %d seqs", len(childSeqs))
	}
	for _, q := range childSeqs {
		if parent[q] {
			t.Fatalf("seq %d given to both processes", q)
		}
	}
	checkAll(t, l, 2*childGoroutines*perGoroutine, parent, "parent")
	t.Logf("parent: %+v", l.Stats())
}

// TestKilledProcessLosesNothing kills a process appending in a tight loop
// (SIGKILL, mid-stream, several times over): every seq it printed, that is
// every Append that returned, is in the log, whole.
func TestKilledProcessLosesNothing(t *testing.T) {
	const rounds, atLeast = 3, 300
	dir := t.TempDir()
	var printed []uint64
	for round := range rounds {
		cmd, _, lines := startChild(t, "spam", dir, 0, 16<<10)
		var got []string
		for len(got) < atLeast {
			s := wait(t, lines, "the child's seqs")
			if s == "" {
				t.Fatalf("round %d: the child ended after %d seqs", round, len(got))
			}
			got = append(got, s)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for s := range lines {
			got = append(got, s)
		}
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("round %d: child ended with %v, want killed", round, err)
		}
		printed = append(printed, parseSeqs(t, got)...)

		l := openLog(t, dir, Options{})
		lines2, seqs, skipped := listAll(t, l)
		on := make(map[uint64]bool, len(seqs))
		for _, q := range seqs {
			on[q] = true
		}
		for _, q := range printed {
			if !on[q] {
				t.Fatalf("round %d: seq %d was answered but is not in the log", round, q)
			}
		}
		after := mustAppend(t, l, write("after"))
		if after[0] <= seqs[len(seqs)-1] {
			t.Errorf("round %d: seq %d given after %d", round, after[0], seqs[len(seqs)-1])
		}
		t.Logf("round %d: %d printed, %d in the log, %d lines skipped, %d repaired at Open",
			round, len(got), len(lines2), skipped, l.Stats().Repairs)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
