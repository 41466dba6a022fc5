//go:build unix

package statedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/openhal/gateway/internal/atomicfile"
)

// Record writes this process's record with hubs and fingerprint in dir.
// The lock's holder calls it once it listens.
func Record(dir string, hubs []string, fingerprint string) error {
	r := Running{PID: os.Getpid(), Start: procStart(os.Getpid()), Hubs: hubs, Fingerprint: fingerprint}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("record the running gateway: %w", err)
	}
	// Readable by all: addresses are no secret, and the client commands
	// of the gateway's operators read it.
	if err := atomicfile.Write(filepath.Join(dir, RunningName), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("record the running gateway: %w", err)
	}
	return nil
}

// Forget removes this process's record from dir, on a clean stop. A
// record another gateway wrote since is left alone.
func Forget(dir string) error {
	r, err := readRunning(dir)
	if err != nil || r.PID != os.Getpid() {
		return nil
	}
	if err := os.Remove(filepath.Join(dir, RunningName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the running gateway's record: %w", err)
	}
	return nil
}

// Find returns the record of the gateway running on dir. ErrNotRunning
// says there is none (no record, or its process is gone); another error,
// that the record could not be read (a directory this user may not read).
func Find(dir string) (Running, error) {
	r, err := readRunning(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Running{}, ErrNotRunning
	}
	if err != nil {
		return Running{}, err
	}
	if !alive(r) {
		return Running{}, ErrNotRunning
	}
	return r, nil
}

func readRunning(dir string) (Running, error) {
	path := filepath.Join(dir, RunningName)
	b, err := os.ReadFile(path)
	if err != nil {
		return Running{}, err
	}
	var r Running
	if err := json.Unmarshal(b, &r); err != nil || r.PID <= 0 {
		return Running{}, fmt.Errorf("%s: not a gateway's record: %q", path, bytes.TrimSpace(b))
	}
	return r, nil
}

// alive reports whether r's process still runs: the pid exists, and was
// started when the record says.
func alive(r Running) bool {
	if err := syscall.Kill(r.PID, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return r.Start == "" || procStart(r.PID) == r.Start
}

// procStart is pid's start time from /proc/<pid>/stat (field 22), or ""
// without /proc. The command name (field 2) may hold spaces and
// parentheses: the fields are counted from its last ')'.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 {
		if f := bytes.Fields(b[i+1:]); len(f) >= 20 {
			return string(f[19])
		}
	}
	return ""
}
