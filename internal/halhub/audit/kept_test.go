package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var kept = fileSets[classKept]

func stopEntry(reason string) Entry {
	return Entry{Principal: agent, Action: "stop", Outcome: "stopped", Reason: reason}
}

// setSeqs returns the seqs held by the files of one set, oldest file
// first, and the files' sizes.
func setSeqs(t *testing.T, dir string, set fileSet) (seqs []uint64, sizes []int64) {
	t.Helper()
	rot, err := set.listRotated(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rot {
		names = append(names, r.name)
	}
	for _, name := range append(names, set.current) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, int64(len(b)))
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" {
				continue
			}
			seq, ok := parseLine([]byte(line))
			if !ok {
				t.Fatalf("%s: bad line %q", name, line)
			}
			seqs = append(seqs, seq)
		}
	}
	return seqs, sizes
}

// TestKeptSurvivesWrites: a flood of writes rotates the writes set
// through all its files, and the stop, the token change and the blocked
// write written before it stay, in the kept set, listed in seq order
// among the writes that remain.
func TestKeptSurvivesWrites(t *testing.T) {
	const maxBytes, keep, flood = 2000, 2, 400
	dir := t.TempDir()
	l := openLog(t, dir, Options{MaxFileBytes: maxBytes, KeepFiles: keep})
	keptSeqs := mustAppend(t, l, stopEntry("drill"),
		Entry{Principal: agent, Action: "token.add", Outcome: "created", Reason: `token "x"`},
		Entry{Principal: agent, Action: "write", Device: "bench.heater", Value: true, Outcome: "blocked", Rule: "interlock"})
	var writeSeqs []uint64
	for i := range flood {
		writeSeqs = append(writeSeqs, mustAppend(t, l, write(fmt.Sprint("w", i)))...)
	}
	inKept, _ := setSeqs(t, dir, kept)
	if !slices.Equal(inKept, keptSeqs) {
		t.Errorf("kept set holds %v, want %v", inKept, keptSeqs)
	}
	inWrites, sizes := setSeqs(t, dir, writes)
	if len(sizes) != keep+1 {
		t.Errorf("writes set has %d files, want %d", len(sizes), keep+1)
	}
	for _, s := range sizes {
		if s > maxBytes {
			t.Errorf("a file of %d bytes, more than %d", s, maxBytes)
		}
	}
	if inWrites[0] == writeSeqs[0] || inWrites[len(inWrites)-1] != writeSeqs[len(writeSeqs)-1] {
		t.Errorf("writes set holds %d..%d: the flood did not rotate the oldest away", inWrites[0], inWrites[len(inWrites)-1])
	}
	_, listed, skipped := listAll(t, l)
	want := append(slices.Clone(keptSeqs), inWrites...)
	if !slices.Equal(listed, want) || skipped != 0 {
		t.Errorf("List: %v (%d skipped), want %v", listed, skipped, want)
	}
}

// TestKeptRotatesOnItsOwn: the kept set rotates at the same size, and
// leaves the writes set alone.
func TestKeptRotatesOnItsOwn(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{MaxFileBytes: 1000, KeepFiles: 2})
	first := mustAppend(t, l, write("first"))
	for i := range 100 {
		mustAppend(t, l, stopEntry(fmt.Sprint("stop ", i)))
	}
	inWrites, _ := setSeqs(t, dir, writes)
	if !slices.Equal(inWrites, first) {
		t.Errorf("writes set holds %v, want %v", inWrites, first)
	}
	inKept, sizes := setSeqs(t, dir, kept)
	if len(sizes) != 3 || inKept[len(inKept)-1] != 101 {
		t.Errorf("kept set: %d files, seqs %v", len(sizes), inKept)
	}
}

// TestOneSeqAcrossSets: one Append of mixed entries takes consecutive
// seqs across both sets, and a reopened Log goes on from the highest,
// whichever set holds it.
func TestOneSeqAcrossSets(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	seqs := mustAppend(t, l, write("a"), stopEntry("b"), write("c"), stopEntry("d"))
	if !slices.Equal(seqs, seqRange(1, 4)) {
		t.Fatalf("seqs %v", seqs)
	}
	inWrites, _ := setSeqs(t, dir, writes)
	inKept, _ := setSeqs(t, dir, kept)
	if !slices.Equal(inWrites, []uint64{1, 3}) || !slices.Equal(inKept, []uint64{2, 4}) {
		t.Errorf("writes %v, kept %v", inWrites, inKept)
	}
	l.Close()
	l = openLog(t, dir, Options{})
	if got := mustAppend(t, l, write("e")); !slices.Equal(got, []uint64{5}) {
		t.Errorf("after reopen: %v, want [5] (the kept set held 4)", got)
	}
}

// TestUpgradeFromOneSet: a log written before the kept set existed (one
// file set, stops among the writes) is read whole after the upgrade, and
// new entries take seqs after its last.
func TestUpgradeFromOneSet(t *testing.T) {
	dir := t.TempDir()
	old := func(seq uint64, action, outcome string) string {
		b, _ := json.Marshal(Entry{Seq: seq, Principal: agent, Action: action, Outcome: outcome})
		return string(b) + "\n"
	}
	writeFile(t, dir, "audit-00000000000000000001.log", old(1, "write", "applied")+old(2, "stop", "stopped"))
	writeFile(t, dir, fileName, old(3, "resume", "resumed")+old(4, "write", "applied"))
	l := openLog(t, dir, Options{})
	got := mustAppend(t, l, stopEntry("after the upgrade"), write("w"))
	if !slices.Equal(got, []uint64{5, 6}) {
		t.Errorf("seqs %v, want [5 6]", got)
	}
	lines, seqs, skipped := listAll(t, l)
	if !slices.Equal(seqs, seqRange(1, 6)) || skipped != 0 {
		t.Errorf("List: %v, %d skipped", seqs, skipped)
	}
	if !strings.Contains(string(lines[1]), `"action":"stop"`) {
		t.Errorf("seq 2 is %s", lines[1])
	}
	if inKept, _ := setSeqs(t, dir, kept); !slices.Equal(inKept, []uint64{5}) {
		t.Errorf("kept set holds %v", inKept)
	}
}

// TestListPages: a page stops before its entries would pass MaxBytes or
// Limit, holds at least one entry, and says where the next one starts;
// entries that Keep refuses do not count, and Next passes over them.
func TestListPages(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	var all []uint64
	for i := range 20 {
		e := write(fmt.Sprint("w", i))
		e.Device = fmt.Sprint("dev", i%2) // dev0 on odd seqs
		if i%5 == 4 {
			e = stopEntry(strings.Repeat("s", 300))
		}
		all = append(all, mustAppend(t, l, e)...)
	}
	lines, _, _ := listAll(t, l)
	size := func(from, n int) int { // the bytes of lines[from:from+n] with commas
		s := n - 1
		for _, b := range lines[from : from+n] {
			s += len(b)
		}
		return s
	}
	onlyDev0 := func(e *Entry) bool { return e.Device == "dev0" || e.Action == "stop" }
	tests := []struct {
		name  string
		since uint64
		opt   ListOptions
		want  []uint64
		next  uint64
	}{
		{"all", 0, ListOptions{}, all, 0},
		{"by limit", 0, ListOptions{Limit: 3}, all[:3], 3},
		{"limit at the end", 17, ListOptions{Limit: 3}, all[17:], 0},
		{"bytes exactly", 0, ListOptions{MaxBytes: size(0, 4)}, all[:4], 4},
		{"a byte short", 0, ListOptions{MaxBytes: size(0, 4) - 1}, all[:3], 3},
		{"one entry even if larger", 0, ListOptions{MaxBytes: 10}, all[:1], 1},
		{"bytes and limit", 5, ListOptions{Limit: 2, MaxBytes: 1 << 20}, all[5:7], 7},
		{"filtered", 0, ListOptions{Keep: onlyDev0}, []uint64{1, 3, 5, 7, 9, 10, 11, 13, 15, 17, 19, 20}, 0},
		{"filtered, limited: next passes the refused", 0, ListOptions{Keep: onlyDev0, Limit: 2}, []uint64{1, 3}, 4},
		{"filtered from next", 4, ListOptions{Keep: onlyDev0, Limit: 2}, []uint64{5, 7}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg, err := l.List(tt.since, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, line := range pg.Entries {
				seq, _ := parseLine(line)
				got = append(got, seq)
			}
			if !slices.Equal(got, tt.want) || pg.Next != tt.next {
				t.Errorf("List(%d) = %v next %d, want %v next %d", tt.since, got, pg.Next, tt.want, tt.next)
			}
		})
	}
}

// TestListSnapshot: what is written to either set after List has opened
// the files is left for the next List, so that a seq never comes after a
// higher one already returned.
func TestListSnapshot(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	mustAppend(t, l, write("a"), stopEntry("b"))
	sets, err := l.openForList(0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, r := range sets {
			r.close()
		}
	}()
	mustAppend(t, l, stopEntry("c"), write("d"))
	var got []uint64
	skipped := 0
	for {
		seq, line, err := nextOf(sets[:], &skipped)
		if err != nil || line == nil {
			break
		}
		got = append(got, seq)
	}
	if !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("read %v, want [1 2]", got)
	}
}
