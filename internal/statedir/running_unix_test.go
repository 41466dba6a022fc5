//go:build unix

package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Find gives the record of a live gateway only: none, one of a gone
// process, or of a process that has its pid now, is ErrNotRunning.
func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		record  string // the file's content; "" for no file
		self    bool   // written by Record
		want    error
		wantErr bool
	}{
		{name: "no record", want: ErrNotRunning},
		{name: "this process", self: true},
		{name: "a gone process", record: `{"pid":2147483646,"hubs":["ws://127.0.0.1:1/hal"]}`, want: ErrNotRunning},
		{name: "the pid reused", record: `{"pid":` + itoa(os.Getpid()) + `,"start":"1","hubs":["ws://127.0.0.1:1/hal"]}`, want: ErrNotRunning},
		{name: "not a record", record: `hello`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.record != "" {
				if err := os.WriteFile(filepath.Join(dir, RunningName), []byte(tt.record), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			hubs := []string{"ws://127.0.0.1:7/hal", "tcp://127.0.0.1:8"}
			if tt.self {
				if err := Record(dir, hubs, "ab:cd"); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Find(dir)
			switch {
			case tt.wantErr:
				if err == nil || errors.Is(err, ErrNotRunning) {
					t.Errorf("Find = %+v, %v; want a read error", r, err)
				}
			case tt.want != nil:
				if !errors.Is(err, tt.want) {
					t.Errorf("Find = %+v, %v; want %v", r, err, tt.want)
				}
			case err != nil || r.PID != os.Getpid() || !slices.Equal(r.Hubs, hubs) || r.Fingerprint != "ab:cd":
				t.Errorf("Find = %+v, %v; want this process's record", r, err)
			}
		})
	}
}

// Forget removes this process's record, and leaves another's.
func TestForget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, RunningName)
	other := `{"pid":1,"hubs":["ws://127.0.0.1:1/hal"]}`
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Forget(dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != other {
		t.Errorf("another's record after Forget: %q, %v", b, err)
	}
	if err := Record(dir, []string{"tcp://127.0.0.1:1"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := Forget(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(dir); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Find after Forget: %v, want ErrNotRunning", err)
	}
}

func itoa(n int) string { return fmt.Sprint(n) }
