//go:build unix

package statedir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A second lock on a locked directory is refused with the holder's pid,
// whether the holder is this process (another open of the file) or
// another one; the pid is in the lock file.
func TestTakeRefusesASecondGateway(t *testing.T) {
	dir := t.TempDir()
	l, err := Take(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = Take(dir)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Fatalf("second Take: %v, want in use by pid %d", err, os.Getpid())
	}
	if want := fmt.Sprintf("state directory %s is in use by gateway pid %d", dir, os.Getpid()); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, LockName)); string(b) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Errorf("lock file holds %q", b)
	}
	l.Close()
	l2, err := Take(dir)
	if err != nil {
		t.Fatalf("Take after Close: %v", err)
	}
	l2.Close()
}

// The lock is the kernel's: a process killed while holding it (a crash,
// kill -9) leaves none behind, though its pid stays in the file.
func TestLockDiesWithItsProcess(t *testing.T) {
	if dir := os.Getenv("STATEDIR_TEST_HOLD"); dir != "" {
		if _, err := Take(dir); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		select {} // until killed
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockDiesWithItsProcess$")
	cmd.Env = append(os.Environ(), "STATEDIR_TEST_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "locked" {
		t.Fatalf("holder said %q", line)
	}
	var inUse *InUseError
	if _, err := Take(dir); !errors.As(err, &inUse) || inUse.PID != cmd.Process.Pid {
		t.Fatalf("Take while held: %v, want in use by pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Take(dir)
	if err != nil {
		t.Fatalf("Take after the holder was killed: %v", err)
	}
	l.Close()
}
