//go:build linux

package process

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pidfdThread is PIDFD_THREAD (Linux 6.9): a pidfd for one thread, readable
// when that thread exits. The kernel headers define it as O_EXCL.
const pidfdThread = unix.O_EXCL

// TestPdeathsigThread shows why Start forks from a thread of its own.
// The death signal fires when the forking *thread* exits, and the Go
// runtime ends a thread when a goroutine that locked it returns. The
// control forks with Pdeathsig straight from such a goroutine: the child
// dies with the thread. Start called from the same kind of goroutine must
// give a child that outlives it.
func TestPdeathsigThread(t *testing.T) {
	tests := []struct {
		name      string
		start     func(t *testing.T) (stdin io.WriteCloser, stdout io.Reader, wait func())
		wantAlive bool
	}{
		{
			name: "fork on the caller's thread (control)",
			start: func(t *testing.T) (io.WriteCloser, io.Reader, func()) {
				cmd := exec.Command(os.Args[0])
				cmd.Env = helperEnv("reply")
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
				in, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				return in, out, func() { cmd.Process.Kill(); cmd.Wait() }
			},
		},
		{
			name: "Start",
			start: func(t *testing.T) (io.WriteCloser, io.Reader, func()) {
				p, err := Start(context.Background(), Spec{Path: os.Args[0], Env: helperEnv("reply")})
				if err != nil {
					t.Fatal(err)
				}
				return p.Stdin, p.Stdout, func() { p.Kill(); <-p.Wait(); p.Close() }
			},
			wantAlive: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type started struct {
				in   io.WriteCloser
				out  io.Reader
				wait func()
				tid  int
			}
			var s started
			for {
				ch := make(chan started, 1)
				go func() {
					// Locked and never unlocked: the thread ends when this
					// returns, unless it is the main thread, which the
					// runtime parks instead.
					runtime.LockOSThread()
					in, out, wait := tt.start(t)
					ch <- started{in, out, wait, unix.Gettid()}
				}()
				s = <-ch
				if s.tid != os.Getpid() {
					break
				}
				s.wait() // ran on the main thread: try again
			}
			defer s.wait()

			fd, err := unix.PidfdOpen(s.tid, pidfdThread)
			if errors.Is(err, unix.ESRCH) {
				fd = -1 // the thread is already gone
			} else if err != nil {
				t.Skipf("no thread pidfd (Linux 6.9+): %v", err)
			}
			if fd >= 0 {
				defer unix.Close(fd)
				waitReadable(t, fd, 10*time.Second)
			}
			// The thread has exited, so a death signal tied to it has been
			// sent. A live child answers shutdown; a killed one gives EOF.
			_, werr := io.WriteString(s.in, "shutdown\n")
			alive := false
			sc := bufio.NewScanner(s.out)
			for werr == nil && sc.Scan() {
				if sc.Text() == "ok" {
					alive = true
					break
				}
			}
			if alive != tt.wantAlive {
				t.Errorf("child alive after the forking goroutine's thread ended: %v, want %v", alive, tt.wantAlive)
			}
		})
	}
}

// waitReadable waits for fd (a pidfd) to become readable, that is for its
// process or thread to exit.
func waitReadable(t *testing.T, fd int, max time.Duration) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(max)
	for fds[0].Revents == 0 {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("pidfd %d not readable after %v", fd, max)
		}
		if _, err := unix.Poll(fds, int(left.Milliseconds())+1); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatal(err)
		}
	}
}
