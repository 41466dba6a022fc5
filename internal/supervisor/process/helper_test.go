//go:build linux

package process

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests run real processes: the test binary re-executed with modeEnv
// naming a scripted behaviour (helperMain). Every helper prints "pid N" for
// each process the test must later find gone, then "ready" once its signal
// handling is in place, so that the test never signals a half-set-up process.
const modeEnv = "PROCESS_TEST_MODE"

// noRaceSleep keeps a helper built with -race from sleeping 1 s at exit
// (the race runtime's default atexit_sleep_ms), which would shift every
// step of a stop past its deadline.
const noRaceSleep = "GORACE=atexit_sleep_ms=0"

// helperEnv is a helper's complete environment.
func helperEnv(mode string) []string { return []string{modeEnv + "=" + mode, noRaceSleep} }

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ShimCommand {
		os.Exit(ShimMain(os.Args[2:]))
	}
	if mode := os.Getenv(modeEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	// Like the gateway: orphans of our adapters come back to us.
	if err := SetSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func helperMain(mode string) int {
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		out.Flush()
	}
	self := func(mode string, setsid bool) *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Env = helperEnv(mode)
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
		return cmd
	}
	// readStdin answers "shutdown" with "ok" if reply, and returns at EOF.
	readStdin := func(reply bool) {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "shutdown" && reply {
				say("ok")
			}
		}
	}
	linger := func() int {
		for {
			time.Sleep(time.Hour) // a scripted process that never ends by itself
		}
	}
	switch mode {
	case "reply": // answers shutdown, exits when stdin closes
		say("ready")
		readStdin(true)
		return 0
	case "silent": // never answers, exits when stdin closes
		say("ready")
		readStdin(false)
		return 0
	case "stubborn": // ignores shutdown, stdin's end and SIGTERM
		signal.Ignore(syscall.SIGTERM)
		say("ready")
		readStdin(false)
		return linger()
	case "linger": // prints its pid and waits to be killed
		say("pid %d", os.Getpid())
		return linger()
	case "group-linger": // exits on stdin's end, leaving a child in the group
		if err := self("linger", false).Start(); err != nil {
			say("error %v", err)
			return 1
		}
		say("ready")
		readStdin(false)
		return 0
	case "daemonize": // starts a setsid grandchild and exits at once
		if err := self("linger", true).Start(); err != nil {
			return 1
		}
		return 0
	case "setsid-escape": // a daemonizing child leaves an orphan in its own session
		if err := self("daemonize", false).Run(); err != nil {
			say("error %v", err)
			return 1
		}
		say("ready")
		readStdin(false)
		return 0
	case "setsid-below": // a lingering group member has a setsid child
		if err := self("setsid-parent", false).Start(); err != nil {
			say("error %v", err)
			return 1
		}
		say("ready")
		readStdin(false)
		return 0
	case "setsid-parent":
		say("pid %d", os.Getpid())
		if err := self("linger", true).Start(); err != nil {
			return 1
		}
		return linger()
	case "intermediate": // starts an adapter with Start, then waits to be killed
		p, err := Start(context.Background(), Spec{Path: os.Args[0], Env: helperEnv("linger")})
		if err != nil {
			say("error %v", err)
			return 1
		}
		say("pid %d", p.Pid())
		say("ready")
		return linger()
	case "intermediate-shim": // starts a "tree" adapter through the shim, then waits to be killed
		p, err := Start(context.Background(), Spec{Path: os.Args[0], Env: helperEnv("tree"), Shim: os.Args[0]})
		if err != nil {
			say("error %v", err)
			return 1
		}
		go io.Copy(os.Stdout, p.Stdout) // the tree's pids
		say("pid %d", p.Pid())
		return linger()
	case "tree": // a child in the group, one in a session of its own, and a re-parented setsid grandchild
		if err := self("linger", false).Start(); err != nil {
			say("error %v", err)
			return 1
		}
		if err := self("linger", true).Start(); err != nil {
			say("error %v", err)
			return 1
		}
		if err := self("daemonize", false).Run(); err != nil {
			say("error %v", err)
			return 1
		}
		say("ready")
		return linger()
	case "env": // prints its environment and working directory
		for _, kv := range os.Environ() {
			say("env %s", kv)
		}
		wd, _ := os.Getwd()
		say("dir %s", wd)
		say("args %s", strings.Join(os.Args[1:], " "))
		return 0
	case "ids": // prints its user and group ids
		say("ids %d %d %v", os.Getuid(), os.Getgid(), must(os.Getgroups()))
		return 0
	case "exit3":
		return 3
	}
	fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
	return 2
}

// adapter is a helper process under test with its standard output split
// into lines.
type adapter struct {
	p     *Proc
	lines chan string // closed at EOF
}

func startHelper(t *testing.T, mode string, args ...string) *adapter {
	t.Helper()
	return startSpec(t, Spec{Path: os.Args[0], Args: args, Env: helperEnv(mode)})
}

// startSpec starts a helper as spec says (a shim, a credential).
func startSpec(t *testing.T, spec Spec) *adapter {
	t.Helper()
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	a := &adapter{p: p, lines: make(chan string, 64)}
	go func() {
		defer close(a.lines)
		sc := bufio.NewScanner(p.Stdout)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
	}()
	go io.Copy(os.Stderr, p.Stderr)
	t.Cleanup(func() {
		p.Kill()
		<-p.Wait()
		Sweep(p)
		p.Close()
	})
	return a
}

// setup collects the pids the helper reports until it says "ready".
func (a *adapter) setup(t *testing.T, wantPids int) []int {
	t.Helper()
	var pids []int
	timeout := time.After(10 * time.Second)
	ready := false
	for !ready || len(pids) < wantPids {
		select {
		case l, ok := <-a.lines:
			if !ok {
				t.Fatalf("helper closed stdout during setup (pids %v)", pids)
			}
			switch {
			case l == "ready":
				ready = true
			case strings.HasPrefix(l, "pid "):
				pid, err := strconv.Atoi(strings.TrimPrefix(l, "pid "))
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, pid)
			default:
				t.Fatalf("helper said %q during setup", l)
			}
		case <-timeout:
			t.Fatalf("helper not ready after 10s (pids %v)", pids)
		}
	}
	return pids
}

// shutdown returns a sendShutdown for Stop that writes "shutdown" and
// closes its channel when the helper's "ok" arrives.
func (a *adapter) shutdown(t *testing.T) func() <-chan struct{} {
	return func() <-chan struct{} {
		replied := make(chan struct{})
		if _, err := io.WriteString(a.p.Stdin, "shutdown\n"); err != nil {
			t.Errorf("write shutdown: %v", err)
			return nil
		}
		go func() {
			for l := range a.lines {
				if l == "ok" {
					close(replied)
					return
				}
			}
		}()
		return replied
	}
}

// gone reports whether no process pid exists, not even as a zombie.
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

// goneWithin waits until no process pid exists, for at most d: a process
// that is not our child (one the shim reaps) is gone when its reaper says
// so, and nothing tells us.
func goneWithin(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !gone(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond) // polled: no event for another's reap
	}
	return true
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
