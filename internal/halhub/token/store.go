package token

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/openhal/gateway/internal/atomicfile"
	"github.com/openhal/gateway/internal/filelock"
	"github.com/openhal/gateway/openhal"
)

// Files in the state directory.
const (
	FileName  = "tokens.json"
	LockName  = "tokens.lock"
	AdminFile = "admin.token"
	AdminName = "admin"
)

// Store is the token file of one state directory. It holds no state of
// its own: every call reads the file, so that several Stores, in one
// process or in several, see each other's changes.
type Store struct {
	dir string
}

// Open returns the store of state directory dir. It touches nothing on
// disk; Add creates the directory (mode 0700) when it is missing.
func Open(dir string) *Store { return &Store{dir: dir} }

// Path is the token file's path.
func (s *Store) Path() string { return filepath.Join(s.dir, FileName) }

// record is one line of the file: an entry and its token's hash.
type record struct {
	Entry
	Hash string `json:"hash"`
}

type file struct {
	Tokens []record `json:"tokens"`
	absent bool     // read returned it for a missing file
}

// Add makes a token for a new entry and returns it; it is not kept
// anywhere and cannot be shown again.
func (s *Store) Add(name, kind string, scope openhal.Scope, devices []string) (string, error) {
	e := Entry{Name: name, Kind: kind, Scope: scope, Devices: devices, Created: time.Now().UTC()}
	if err := e.validate(); err != nil {
		return "", fmt.Errorf("add token %q: %w", name, err)
	}
	var token string
	err := s.update(func(f *file) error {
		var err error
		token, err = add(f, e)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("add token %q: %w", name, err)
	}
	return token, nil
}

// add appends e with a fresh token to f.
func add(f *file, e Entry) (string, error) {
	for _, r := range f.Tokens {
		if r.Name == e.Name {
			return "", errors.New("name already taken")
		}
	}
	token, err := newToken()
	if err != nil {
		return "", err
	}
	f.Tokens = append(f.Tokens, record{Entry: e.clone(), Hash: hashHex(token)})
	return token, nil
}

// List returns the entries in the order they were added.
func (s *Store) List() ([]Entry, error) {
	f, err := s.read()
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, len(f.Tokens))
	for i, r := range f.Tokens {
		entries[i] = r.Entry
	}
	return entries, nil
}

// Revoke removes the entry called name; its token stops working as soon
// as the running gateway has reloaded the file.
func (s *Store) Revoke(name string) error {
	err := s.update(func(f *file) error {
		for i, r := range f.Tokens {
			if r.Name == name {
				f.Tokens = slices.Delete(f.Tokens, i, i+1)
				return nil
			}
		}
		return errors.New("no such token")
	})
	if err != nil {
		return fmt.Errorf("revoke token %q: %w", name, err)
	}
	return nil
}

// EnsureAdmin gives a fresh state directory its first admin token: when
// no admin-scope token exists, it adds one named "admin" (kind operator)
// and writes the token to <dir>/admin.token, readable by its owner only.
// It returns that file's path, and whether it made a token; when an
// admin-scope token already exists the file may be absent or hold a token
// since revoked. The token itself is never returned, so it cannot end up
// in a log.
func (s *Store) EnsureAdmin() (path string, created bool, err error) {
	path = filepath.Join(s.dir, AdminFile)
	err = s.update(func(f *file) error {
		for _, r := range f.Tokens {
			if r.Scope == openhal.ScopeAdmin {
				return errUnchanged
			}
		}
		e := Entry{Name: AdminName, Kind: openhal.KindOperator, Scope: openhal.ScopeAdmin, Created: time.Now().UTC()}
		token, err := add(f, e)
		if err != nil {
			return fmt.Errorf("no admin-scope token, and cannot add %q: %w", AdminName, err)
		}
		// The file goes first: should saving tokens.json then fail, the
		// file holds a token nobody accepts and the next call replaces it,
		// rather than an admin token existing that nobody knows.
		if err := atomicfile.Write(path, []byte(token+"\n"), 0o600); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return "", false, fmt.Errorf("ensure admin token: %w", err)
	}
	return path, created, nil
}

// Load reads the file into a Table for lookups. A missing file is an
// empty table: no token works until one is added.
func (s *Store) Load() (*Table, error) {
	f, err := s.read()
	if err != nil {
		return nil, err
	}
	t := newTable(f)
	if f.absent {
		t.absent = true
	}
	return t, nil
}

// errUnchanged tells update that fn made no change to save.
var errUnchanged = errors.New("unchanged")

// update runs fn on the file's contents under the lock and saves what fn
// left, unless fn fails or returns errUnchanged.
func (s *Store) update(fn func(*file) error) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("make state directory: %w", err)
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	f, err := s.read()
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		if errors.Is(err, errUnchanged) {
			return nil
		}
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", s.Path(), err)
	}
	return atomicfile.Write(s.Path(), append(b, '\n'), 0o600)
}

// lock takes the exclusive lock that every writer holds from reading the
// file to renaming the new one into place. Readers need no lock: they see
// the old file or the new one, never half of one.
func (s *Store) lock() (unlock func(), err error) {
	p := filepath.Join(s.dir, LockName)
	lf, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock tokens: %w", err)
	}
	if err := filelock.Lock(lf, filelock.Exclusive); err != nil {
		lf.Close()
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	// Closing the file releases the lock.
	return func() { lf.Close() }, nil
}

// read decodes and checks the file; a missing file is an empty one.
func (s *Store) read() (*file, error) {
	b, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return &file{absent: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	f, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Path(), err)
	}
	return f, nil
}

// decode is strict: a hand-edited file with a typo is refused rather than
// half understood.
func decode(b []byte) (*file, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	f := &file{}
	if err := dec.Decode(f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	names := make(map[string]bool, len(f.Tokens))
	for i, r := range f.Tokens {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("tokens[%d]: %w", i, err)
		}
		if h, err := hex.DecodeString(r.Hash); err != nil || len(h) != 32 {
			return nil, fmt.Errorf("tokens[%d] (%q): hash must be 64 hex digits", i, r.Name)
		}
		if names[r.Name] {
			return nil, fmt.Errorf("tokens[%d]: name %q appears twice", i, r.Name)
		}
		names[r.Name] = true
	}
	return f, nil
}
