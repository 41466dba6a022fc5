//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The processes --fork leaves behind are copies of this program in a
// hidden mode. Each says its pid on a pipe once it ignores SIGTERM, so that
// the leader records a pid only when that process is ready to outlive a
// SIGTERM; the pipe is then given up and the sleeper holds only /dev/null.

// forkSleeper starts the processes of one --fork mode and records the pid
// of the one left sleeping in children.txt. The intermediate child of
// grandchild-setsid exits and is reaped here, so it is not listed.
func (a *adapter) forkSleeper(mode string) error {
	args, setsid := []string{"--sleeper"}, false
	switch mode {
	case forkSetsid:
		setsid = true
	case forkGrandchild:
		args = []string{"--sleeper-parent"}
	}
	cmd, pid, err := startSelf(args, setsid)
	if err != nil {
		return err
	}
	if mode == forkGrandchild {
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("wait for the grandchild's parent: %w", err)
		}
	} else {
		go cmd.Wait() // reap it should it die while we live
	}
	a.log.Info("forked", "mode", mode, "child", pid)
	return a.rec.child(pid)
}

// startSelf starts this program with args, stdin and stderr on /dev/null
// and stdout on a pipe, and reads the pid it says once ready.
func startSelf(args []string, setsid bool) (*exec.Cmd, int, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, fmt.Errorf("find own executable: %w", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, fmt.Errorf("pipe for %s: %w", args[0], err)
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start %s %v: %w", exe, args, err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return nil, 0, fmt.Errorf("read pid of %s (pid %d): %w", args[0], cmd.Process.Pid, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return nil, 0, fmt.Errorf("pid of %s: %w", args[0], err)
	}
	return cmd, pid, nil
}

// runSleeper is a process --fork leaves behind: it ignores SIGTERM and
// its input, says its pid, puts /dev/null on its stdout and sleeps until
// killed.
func runSleeper(log *slog.Logger) int {
	signal.Ignore(syscall.SIGTERM)
	if _, err := fmt.Fprintf(os.Stdout, "%d\n", os.Getpid()); err != nil {
		log.Error("say pid", "err", err)
		return 1
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		log.Error("open /dev/null", "err", err)
		return 1
	}
	if err := unix.Dup2(int(null.Fd()), 1); err != nil {
		log.Error("stdout to /dev/null", "err", err)
		return 1
	}
	null.Close()
	sleepForever()
	return 0
}

// runSleeperParent is the child of grandchild-setsid: it starts a sleeper
// in a new session, passes its pid on, and exits so that the sleeper is
// re-parented.
func runSleeperParent(log *slog.Logger, stdout io.Writer) int {
	_, pid, err := startSelf([]string{"--sleeper"}, true)
	if err != nil {
		log.Error("start grandchild", "err", err)
		return 1
	}
	if _, err := fmt.Fprintf(stdout, "%d\n", pid); err != nil {
		log.Error("say grandchild pid", "err", err)
		return 1
	}
	return 0
}
