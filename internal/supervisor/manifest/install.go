package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/openhal/gateway/internal/atomicfile"
)

// ErrTampered is wrapped by Verify's error when the installed folder is
// not what was installed: the supervisor then fails the adapter as
// "tampered" without spawning it.
var ErrTampered = errors.New("tampered")

// Record is what installing an adapter remembers, in
// <stateDir>/adapters/<name>.json. Resetting a failed adapter never
// rewrites it; only reinstalling does.
type Record struct {
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	Kind        string    `json:"kind"`
	Hash        string    `json:"hash"` // Hash of the installed folder
	InstalledAt time.Time `json:"installedAt"`
}

// Layout of the state directory.
func adaptersDir(stateDir string) string { return filepath.Join(stateDir, "adapters") }

// Dir is where adapter name is installed.
func Dir(stateDir, name string) string { return filepath.Join(adaptersDir(stateDir), name) }

// StateDir is the adapter's own data directory (paths.state in initialize,
// and its HOME). It outlives reinstalls and Remove.
func StateDir(stateDir, name string) string {
	return filepath.Join(adaptersDir(stateDir), "state", name)
}

// MakeStateDir creates adapter name's own state directory, private (0700),
// under a parent that every adapter's user may traverse but not list
// (0711): each adapter reaches its own directory and no other's.
func MakeStateDir(stateDir, name string) error {
	dir := StateDir(stateDir, name)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o711); err != nil {
		return err
	}
	if err := os.Chmod(parent, 0o711); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

func recordPath(stateDir, name string) string {
	return filepath.Join(adaptersDir(stateDir), name+".json")
}

// checkName keeps a name given to Load, Verify or Remove from naming any
// path but an adapter's.
func checkName(name string) error {
	if !namePattern.MatchString(name) || reservedNames[name] {
		return fmt.Errorf("%q is not an adapter name", name)
	}
	return nil
}

// Install checks the adapter folder srcDir and installs it: the folder is
// copied into a temporary directory beside its destination, with no
// symlink followed and hashed as it is written (copyTree), checked again
// there (the source may change while it is copied; what is recorded is
// what was copied), and only then renamed into place, so that an existing
// install is replaced only by a complete one. The record is written last,
// and the adapter's own state directory is created if missing.
//
// A folder over the limits (MaxFolderBytes, MaxFolderEntries,
// MaxFolderDepth) returns an error wrapping ErrTooLarge; one that changed
// under the copy, ErrChanged or ErrNotRegular. Either installs nothing.
//
// A manifest fault returns Errors and installs nothing. A crash between
// the rename and the record leaves the new folder with the old hash, which
// Verify reports as tampered: the failure is on the safe side, and a
// reinstall fixes it.
func Install(srcDir, stateDir string) (*Record, error) {
	if _, err := ReadDir(srcDir); err != nil {
		return nil, err
	}
	dir := adaptersDir(stateDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("install adapter: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".install-*")
	if err != nil {
		return nil, fmt.Errorf("install adapter: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("install adapter: %w", err)
	}
	sum, err := copyTree(srcDir, tmp)
	if err != nil {
		return nil, fmt.Errorf("install adapter from %s: %w", srcDir, err)
	}
	m, err := ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	if err := MakeStateDir(stateDir, m.Name); err != nil {
		return nil, fmt.Errorf("install adapter %s: %w", m.Name, err)
	}
	if err := replaceDir(tmp, Dir(stateDir, m.Name)); err != nil {
		return nil, fmt.Errorf("install adapter %s: %w", m.Name, err)
	}
	rec := &Record{Name: m.Name, Version: m.Version, Kind: m.Kind, Hash: sum, InstalledAt: time.Now().UTC()}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("install adapter %s: %w", m.Name, err)
	}
	if err := atomicfile.Write(recordPath(stateDir, m.Name), append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("install adapter %s: %w", m.Name, err)
	}
	return rec, nil
}

// replaceDir renames the complete directory src to dst. An existing dst is
// first moved aside and removed only after src is in place; if that
// rename fails, it is moved back.
func replaceDir(src, dst string) error {
	parent := filepath.Dir(dst)
	if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(src, dst); err != nil {
			return err
		}
		return atomicfile.SyncDir(parent)
	}
	old, err := os.MkdirTemp(parent, ".old-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(old)
	aside := filepath.Join(old, "prev")
	if err := os.Rename(dst, aside); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		if back := os.Rename(aside, dst); back != nil {
			return errors.Join(err, fmt.Errorf("restore previous install: %w", back))
		}
		return err
	}
	return atomicfile.SyncDir(parent)
}

// Load reads adapter name's record and its installed manifest. It does not
// re-hash the folder: Verify does.
func Load(stateDir, name string) (*Record, *Manifest, error) {
	rec, err := readRecord(stateDir, name)
	if err != nil {
		return nil, nil, err
	}
	m, err := ReadDir(Dir(stateDir, name))
	if err != nil {
		return nil, nil, fmt.Errorf("load adapter %s: %w", name, err)
	}
	if m.Name != rec.Name {
		return nil, nil, fmt.Errorf("load adapter %s: installed manifest names %q: %w", name, m.Name, ErrTampered)
	}
	return rec, m, nil
}

func readRecord(stateDir, name string) (*Record, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("load adapter: %w", err)
	}
	data, err := os.ReadFile(recordPath(stateDir, name))
	if err != nil {
		return nil, fmt.Errorf("load adapter %s: %w", name, err)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("load adapter %s: record: %w", name, err)
	}
	if rec.Name != name {
		return nil, fmt.Errorf("load adapter %s: record names %q", name, rec.Name)
	}
	return &rec, nil
}

// Verify re-hashes adapter name's installed folder and compares it with
// the record. A different hash, a missing folder, or a symlink or special
// file in it is an error wrapping ErrTampered; other errors (the record
// cannot be read, a file cannot be opened) are reported as they are.
func Verify(stateDir, name string) error {
	rec, err := readRecord(stateDir, name)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	dir := Dir(stateDir, name)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("verify adapter %s: installed folder is missing: %w", name, ErrTampered)
	}
	sum, err := Hash(dir)
	switch {
	case errors.Is(err, ErrNotRegular):
		return fmt.Errorf("verify adapter %s: %w: %w", name, ErrTampered, err)
	case err != nil:
		return fmt.Errorf("verify adapter %s: %w", name, err)
	case sum != rec.Hash:
		return fmt.Errorf("verify adapter %s: %w: installed folder hashes to %s, recorded %s", name, ErrTampered, sum, rec.Hash)
	}
	return nil
}

// List returns the records of every installed adapter, by name.
func List(stateDir string) ([]Record, error) {
	entries, err := os.ReadDir(adaptersDir(stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list adapters: %w", err)
	}
	var recs []Record
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || checkName(name) != nil {
			continue // temporary files, folders, state/
		}
		rec, err := readRecord(stateDir, name)
		if err != nil {
			return nil, fmt.Errorf("list adapters: %w", err)
		}
		recs = append(recs, *rec)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	return recs, nil
}

// Remove uninstalls adapter name: its record first, so that a remove cut
// short leaves an adapter that is not installed rather than one that looks
// tampered, then its folder. The adapter's own state directory is kept,
// as a package manager keeps configuration: a reinstall finds its data.
// Removing an adapter that is not installed is an error wrapping
// fs.ErrNotExist.
func Remove(stateDir, name string) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("remove adapter: %w", err)
	}
	rp := recordPath(stateDir, name)
	if _, err := os.Lstat(rp); err != nil {
		return fmt.Errorf("remove adapter %s: %w", name, err)
	}
	if err := os.Remove(rp); err != nil {
		return fmt.Errorf("remove adapter %s: %w", name, err)
	}
	if err := atomicfile.SyncDir(adaptersDir(stateDir)); err != nil {
		return fmt.Errorf("remove adapter %s: %w", name, err)
	}
	if err := os.RemoveAll(Dir(stateDir, name)); err != nil {
		return fmt.Errorf("remove adapter %s: %w", name, err)
	}
	return nil
}

// installedMode is an installed file's mode: readable by everyone and
// writable by the gateway alone, executable when the source is by anyone.
// The adapter runs as its own user and must read its folder, never change
// it (the hash would then fail it as tampered); and only "executable by
// anyone" counts in the hash, so the normalised mode hashes as the source.
func installedMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}
