package token

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// Table is the token file as the running Hub holds it for lookups. It is
// immutable, so a Hub swaps a whole Table when the file changes and
// lookups need no lock. A nil Table knows no token.
type Table struct {
	entries []tableEntry
	absent  bool // read from no file: see Absent
}

// Absent reports that the table was read where the token file was
// missing. A gateway that made its file at start and then finds none has
// lost it (its state directory removed under it), rather than had every
// token revoked: it keeps the tokens it has, so that the stop stays
// within reach.
func (t *Table) Absent() bool { return t.absent }

type tableEntry struct {
	Entry
	hash [sha256.Size]byte
}

// newTable builds a table from a file that decode has checked.
func newTable(f *file) *Table {
	t := &Table{entries: make([]tableEntry, 0, len(f.Tokens))}
	for _, r := range f.Tokens {
		te := tableEntry{Entry: r.Entry.clone()}
		hex.Decode(te.hash[:], []byte(r.Hash)) // checked by decode
		t.entries = append(t.entries, te)
	}
	return t
}

// Lookup returns the entry token stands for. Every stored hash is
// compared, in constant time, so that how long a lookup takes tells
// nothing of which entry, if any, came close.
func (t *Table) Lookup(token string) (Entry, bool) {
	if t == nil {
		return Entry{}, false
	}
	h := hash(token)
	found := -1
	for i := range t.entries {
		if subtle.ConstantTimeCompare(h[:], t.entries[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Entry{}, false
	}
	return t.entries[found].Entry.clone(), true
}

// Len is the number of tokens.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}
