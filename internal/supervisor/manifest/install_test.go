package manifest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallVerifyLoad(t *testing.T) {
	src := writeFolder(t, validManifest)
	state := t.TempDir()
	rec, err := Install(src, state)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	if rec.Name != "notifier" || rec.Version != "0.1.0" || rec.Kind != "service" || rec.InstalledAt.IsZero() {
		t.Errorf("record = %+v", rec)
	}
	if want := hashOf(t, src); rec.Hash != want {
		t.Errorf("recorded hash %s, source hashes to %s", rec.Hash, want)
	}
	if fi, err := os.Stat(filepath.Join(state, "adapters/state/notifier")); err != nil || !fi.IsDir() {
		t.Errorf("adapter state dir: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(state, "adapters/notifier/bin/notifier")); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("installed exec: %v %v", fi, err)
	}
	if err := Verify(state, "notifier"); err != nil {
		t.Errorf("Verify after install: %v", err)
	}
	r2, m, err := Load(state, "notifier")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if r2.Hash != rec.Hash || !r2.InstalledAt.Equal(rec.InstalledAt) || m.Exec != "bin/notifier" {
		t.Errorf("Load = %+v %+v", r2, m)
	}
	// The source may change after install: the installed copy is what
	// runs.
	writeFile(t, src, "notifier.py", "evil", 0o644)
	if err := Verify(state, "notifier"); err != nil {
		t.Errorf("Verify after the source changed: %v", err)
	}
	// Nothing but the folder, the record and the state dir is left behind.
	entries, _ := os.ReadDir(filepath.Join(state, "adapters"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "notifier notifier.json state" {
		t.Errorf("adapters/ holds %s", got)
	}
}

func TestVerifyTampered(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, dir string)
	}{
		{"content", func(t *testing.T, dir string) { writeFile(t, dir, "notifier.py", "print('pwned')\n", 0o644) }},
		{"wrapper", func(t *testing.T, dir string) { writeFile(t, dir, "bin/notifier", "#!/bin/sh\nexec sh\n", 0o755) }},
		{"added file", func(t *testing.T, dir string) { writeFile(t, dir, "sitecustomize.py", "", 0o644) }},
		{"chmod", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "notifier.py"), 0o755) }},
		{"symlink", func(t *testing.T, dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "x")); err != nil {
				t.Fatal(err)
			}
		}},
		{"folder gone", func(t *testing.T, dir string) { os.RemoveAll(dir) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			if _, err := Install(writeFolder(t, validManifest), state); err != nil {
				t.Fatal(err)
			}
			tt.tamper(t, Dir(state, "notifier"))
			err := Verify(state, "notifier")
			if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "tampered") {
				t.Errorf("Verify = %v, want tampered", err)
			}
		})
	}
}

func TestFailedInstallKeepsPrevious(t *testing.T) {
	state := t.TempDir()
	rec, err := Install(writeFolder(t, validManifest), state)
	if err != nil {
		t.Fatal(err)
	}
	bad := edit(t, func(m map[string]any) { m["version"] = "0.2.0"; m["kind"] = "daemon" })
	_, err = Install(writeFolder(t, bad), state)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Install(bad) = %v, want Errors", err)
	}
	r2, m, err := Load(state, "notifier")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if *r2 != *rec || m.Version != "0.1.0" {
		t.Errorf("previous install changed: %+v %+v", r2, m)
	}
	if err := Verify(state, "notifier"); err != nil {
		t.Errorf("Verify: %v", err)
	}
	// A folder that cannot be installed (here: a FIFO) leaves it too.
	src := writeFolder(t, edit(t, func(m map[string]any) { m["version"] = "0.3.0" }))
	if err := mkfifo(filepath.Join(src, "pipe")); err != nil {
		t.Skip("no FIFOs:", err)
	}
	if _, err := Install(src, state); err == nil {
		t.Fatal("Install with a FIFO succeeded")
	}
	if err := Verify(state, "notifier"); err != nil {
		t.Errorf("Verify after a refused install: %v", err)
	}
}

func TestReinstallReplaces(t *testing.T) {
	state := t.TempDir()
	if _, err := Install(writeFolder(t, validManifest), state); err != nil {
		t.Fatal(err)
	}
	src := writeFolder(t, edit(t, func(m map[string]any) { m["version"] = "0.2.0" }))
	writeFile(t, src, "notifier.py", "print('v2')\n", 0o644)
	rec, err := Install(src, state)
	if err != nil {
		t.Fatal(err)
	}
	r2, m, err := Load(state, "notifier")
	if err != nil || r2.Hash != rec.Hash || m.Version != "0.2.0" {
		t.Fatalf("Load after reinstall = %+v %+v %v", r2, m, err)
	}
	if b, _ := os.ReadFile(filepath.Join(Dir(state, "notifier"), "notifier.py")); string(b) != "print('v2')\n" {
		t.Errorf("installed content %q", b)
	}
	if err := Verify(state, "notifier"); err != nil {
		t.Errorf("Verify: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(state, "adapters"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestListRemove(t *testing.T) {
	state := t.TempDir()
	if recs, err := List(state); err != nil || len(recs) != 0 {
		t.Fatalf("List(empty) = %v %v", recs, err)
	}
	for _, name := range []string{"zeta", "alpha"} {
		src := writeFolder(t, edit(t, func(m map[string]any) { m["name"] = name; m["kind"] = "tool" }))
		if _, err := Install(src, state); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := List(state)
	if err != nil || len(recs) != 2 || recs[0].Name != "alpha" || recs[1].Name != "zeta" || recs[0].Kind != "tool" {
		t.Fatalf("List = %+v %v", recs, err)
	}
	writeFile(t, StateDir(state, "alpha"), "data", "kept", 0o600)
	if err := Remove(state, "alpha"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(Dir(state, "alpha")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("installed folder after Remove: %v", err)
	}
	if _, _, err := Load(state, "alpha"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load after Remove = %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(StateDir(state, "alpha"), "data")); err != nil || string(b) != "kept" {
		t.Errorf("state dir after Remove: %q %v", b, err)
	}
	recs, err = List(state)
	if err != nil || len(recs) != 1 || recs[0].Name != "zeta" {
		t.Errorf("List after Remove = %+v %v", recs, err)
	}
	if err := Remove(state, "alpha"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second Remove = %v, want not exist", err)
	}
	if err := Verify(state, "zeta"); err != nil {
		t.Errorf("Verify(zeta): %v", err)
	}
}

func TestNamesAreNotPaths(t *testing.T) {
	state := t.TempDir()
	for _, name := range []string{"../x", "state", "", "A"} {
		if err := Remove(state, name); err == nil {
			t.Errorf("Remove(%q) succeeded", name)
		}
		if err := Verify(state, name); err == nil {
			t.Errorf("Verify(%q) succeeded", name)
		}
		if _, _, err := Load(state, name); err == nil {
			t.Errorf("Load(%q) succeeded", name)
		}
	}
}
