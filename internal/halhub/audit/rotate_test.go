package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fileSeqs returns the seqs in each file of dir, rotated ones first, oldest
// first, the current one last.
func fileSeqs(t *testing.T, dir string) (names []string, seqs [][]uint64, sizes []int64) {
	t.Helper()
	rot, err := writes.listRotated(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rot {
		names = append(names, r.name)
	}
	names = append(names, fileName)
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var s []uint64
		for l := range bytes.Lines(b) {
			seq, ok := parseLine(bytes.TrimSuffix(l, []byte{'\n'}))
			if !ok {
				t.Fatalf("%s: bad line %q", name, l)
			}
			s = append(s, seq)
		}
		seqs = append(seqs, s)
		sizes = append(sizes, int64(len(b)))
	}
	return names, seqs, sizes
}

func TestRotation(t *testing.T) {
	const maxBytes, keep, total = 1000, 3, 60
	dir := t.TempDir()
	l := openLog(t, dir, Options{MaxFileBytes: maxBytes, KeepFiles: keep})
	for range total {
		mustAppend(t, l, write("w"))
	}
	names, seqs, sizes := fileSeqs(t, dir)
	if len(names) != keep+1 {
		t.Fatalf("files %v, want %d rotated and the current one", names, keep)
	}
	var next uint64
	for i, name := range names {
		if sizes[i] > maxBytes || len(seqs[i]) == 0 {
			t.Errorf("%s: %d bytes, %d entries", name, sizes[i], len(seqs[i]))
			continue
		}
		if r, ok := writes.parseRotated(name); ok && r.seq != seqs[i][0] {
			t.Errorf("%s holds seqs from %d", name, seqs[i][0])
		}
		if next != 0 && seqs[i][0] != next {
			t.Errorf("%s starts at seq %d, want %d", name, seqs[i][0], next)
		}
		next = seqs[i][len(seqs[i])-1] + 1
	}
	if next != total+1 {
		t.Errorf("the last seq is %d, want %d", next-1, total)
	}
	st := l.Stats()
	if st.Rotations < keep+1 {
		t.Errorf("Rotations = %d: the oldest files were never deleted", st.Rotations)
	}

	oldest := seqs[0][0]
	bound := seqs[1][0] // the first seq of the second file
	tests := []struct {
		name         string
		since        uint64
		limit        int
		first, count uint64
	}{
		{"all", 0, 0, oldest, total - oldest + 1},
		{"from the start, limited", 0, 5, oldest, 5},
		{"across a file boundary", bound - 2, 4, bound - 1, 4},
		{"from a file's first seq", bound - 1, 1, bound, 1},
		{"within the current file", total - 3, 10, total - 2, 3},
		{"the last one", total - 1, 0, total, 1},
		{"nothing after the last", total, 0, 0, 0},
		{"since before the oldest kept", 1, 2, oldest, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg, err := l.List(tt.since, ListOptions{Limit: tt.limit})
			if err != nil || pg.Skipped != 0 {
				t.Fatalf("List: %v, %d skipped", err, pg.Skipped)
			}
			var got []uint64
			for _, line := range pg.Entries {
				seq, _ := parseLine(line)
				got = append(got, seq)
			}
			var want []uint64
			if tt.count > 0 {
				want = seqRange(tt.first, tt.first+tt.count-1)
			}
			if !slices.Equal(got, want) {
				t.Errorf("List(%d, %d) = %v, want %v", tt.since, tt.limit, got, want)
			}
		})
	}
}

// TestRotationKeepsBatchTogether: an Append larger than the limit goes
// whole into a new file; it is not split.
func TestRotationKeepsBatchTogether(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{MaxFileBytes: 1000, KeepFiles: 5})
	mustAppend(t, l, write("one"))
	batch := make([]Entry, 20)
	for i := range batch {
		batch[i] = write("many")
	}
	mustAppend(t, l, batch...)
	names, seqs, sizes := fileSeqs(t, dir)
	if len(names) != 2 || !slices.Equal(seqs[0], []uint64{1}) || !slices.Equal(seqs[1], seqRange(2, 21)) {
		t.Errorf("files %v hold %v", names, seqs)
	}
	if sizes[1] <= 1000 {
		t.Errorf("the batch takes %d bytes: make it larger than the limit", sizes[1])
	}
	// The next entry starts a new file again.
	mustAppend(t, l, write("next"))
	if names, seqs, _ = fileSeqs(t, dir); len(names) != 3 || !slices.Equal(seqs[2], []uint64{22}) {
		t.Errorf("files %v hold %v", names, seqs)
	}
}

// TestRotatedNames: a name that is taken gets a suffix, and names sort by
// (seq, suffix).
func TestRotatedNames(t *testing.T) {
	dir := t.TempDir()
	for range 3 {
		p, err := writes.rotatedName(dir, 42)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err := writes.rotatedName(dir, 7)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, nil, 0o600)
	os.WriteFile(filepath.Join(dir, "audit-1.log"), nil, 0o600) // not a rotated file's name
	rot, err := writes.listRotated(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rot {
		got = append(got, r.name)
	}
	want := []string{
		"audit-00000000000000000007.log",
		"audit-00000000000000000042.log",
		"audit-00000000000000000042-1.log",
		"audit-00000000000000000042-2.log",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rotated files %v, want %v", got, want)
	}
}
