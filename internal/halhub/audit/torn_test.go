package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// line is a whole entry line with its '\n'.
func line(seq uint64) string {
	b, err := json.Marshal(Entry{Seq: seq, TS: time.Unix(1e9, 0).UTC(), Principal: agent, Action: "write", Value: false, Outcome: "applied"})
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

func TestOpenRepairsCutLine(t *testing.T) {
	whole := line(1) + line(2) + line(3)
	cut := line(4)[:30]
	tests := []struct {
		name        string
		content     string
		wantSeqs    []uint64
		wantSkipped int
		wantRepair  bool
		wantNext    uint64 // the seq the next Append gets
	}{
		{"empty", "", nil, 0, false, 1},
		{"whole lines", whole, seqRange(1, 3), 0, false, 4},
		{"cut after its seq", whole + cut, seqRange(1, 3), 1, true, 5},
		{"cut inside its seq", whole + `{"seq":4`, seqRange(1, 3), 1, true, 4},
		{"cut just after the newline's place", whole + line(4)[:len(line(4))-1], seqRange(1, 4), 0, true, 5},
		{"only a cut line", line(1)[:20], nil, 1, true, 2},
		{"garbage without newline", "not json", nil, 1, true, 1},
		{"bad line inside", line(1) + "garbage\n" + line(2), []uint64{1, 2}, 1, false, 3},
		{"two cut lines", line(1) + line(2)[:25] + "\n" + line(3)[:25], []uint64{1}, 2, true, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, fileName)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			l := openLog(t, dir, Options{})
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 0 && b[len(b)-1] != '\n' {
				t.Errorf("after Open the file ends %q", b[max(0, len(b)-10):])
			}
			if !strings.HasPrefix(string(b), tt.content) {
				t.Errorf("Open rewrote the file: %q", b)
			}
			if got := l.Stats().Repairs; got != map[bool]uint64{false: 0, true: 1}[tt.wantRepair] {
				t.Errorf("Repairs = %d, want repair %v", got, tt.wantRepair)
			}
			_, seqs, skipped := listAll(t, l)
			if !slices.Equal(seqs, tt.wantSeqs) || skipped != tt.wantSkipped {
				t.Errorf("List: seqs %v skipped %d, want %v and %d", seqs, skipped, tt.wantSeqs, tt.wantSkipped)
			}
			if got := mustAppend(t, l, write("after")); !slices.Equal(got, []uint64{tt.wantNext}) {
				t.Errorf("next seq %v, want %d", got, tt.wantNext)
			}
			_, seqs, skipped = listAll(t, l)
			if want := append(slices.Clone(tt.wantSeqs), tt.wantNext); !slices.Equal(seqs, want) || skipped != tt.wantSkipped {
				t.Errorf("List after Append: seqs %v skipped %d, want %v and %d", seqs, skipped, want, tt.wantSkipped)
			}
		})
	}
}

// TestCutLineFromAnotherProcess: a process that dies in the middle of its
// write while this Log is open leaves a cut line; this Log's next write
// ends it first and goes on after its seq.
func TestCutLineFromAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	mustAppend(t, l, write("a"))
	f, err := os.OpenFile(filepath.Join(dir, fileName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line(2)[:40]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := mustAppend(t, l, write("b")); !slices.Equal(got, []uint64{3}) {
		t.Errorf("seqs %v, want [3]", got)
	}
	_, seqs, skipped := listAll(t, l)
	if !slices.Equal(seqs, []uint64{1, 3}) || skipped != 1 {
		t.Errorf("List: seqs %v skipped %d, want [1 3] and 1", seqs, skipped)
	}
	if st := l.Stats(); st.Repairs != 1 || st.Resyncs != 1 {
		t.Errorf("Stats %+v, want 1 repair and 1 resync", st)
	}
}

// TestListLeavesLineBeingWritten: List neither returns nor counts a last
// line without its newline: it may still be being written.
func TestListLeavesLineBeingWritten(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	mustAppend(t, l, write("a"))
	f, err := os.OpenFile(filepath.Join(dir, fileName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	whole := line(2)
	if _, err := f.WriteString(whole[:len(whole)-1]); err != nil {
		t.Fatal(err)
	}
	if _, seqs, skipped := listAll(t, l); !slices.Equal(seqs, []uint64{1}) || skipped != 0 {
		t.Errorf("List: seqs %v skipped %d, want [1] and 0", seqs, skipped)
	}
	if _, err := f.WriteString("\n"); err != nil {
		t.Fatal(err)
	}
	if _, seqs, skipped := listAll(t, l); !slices.Equal(seqs, []uint64{1, 2}) || skipped != 0 {
		t.Errorf("List: seqs %v skipped %d, want [1 2] and 0", seqs, skipped)
	}
}

func TestLastSeqOfLongLines(t *testing.T) {
	long := `{"seq":7,"value":"` + strings.Repeat("x", MaxEntryBytes+100) + "\"}\n"
	tests := []struct {
		name    string
		content string
		want    uint64
		found   bool
	}{
		{"empty", "", 0, false},
		{"one line", line(5), 5, true},
		{"no newline at all", strings.Repeat("y", 200<<10), 0, false},
		{"long line last", line(5) + long, 5, true},
		{"long line first", long + line(8), 8, true},
		{"across chunks", line(3) + strings.Repeat("z", 100<<10) + "\n", 3, true},
		{"cut seq", line(3) + `{"seq":4,"t`, 4, true},
		{"foreign order", `{"ts":"x","seq":9}` + "\n", 9, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, found, err := lastSeqOf(strings.NewReader(tt.content), int64(len(tt.content)))
			if err != nil || seq != tt.want || found != tt.found {
				t.Errorf("lastSeqOf = %d %v %v, want %d %v", seq, found, err, tt.want, tt.found)
			}
		})
	}
}

// TestLineLengthLimit: a line of MaxEntryBytes is read; one byte more is
// skipped, forwards and backwards alike.
func TestLineLengthLimit(t *testing.T) {
	sized := func(seq uint64, n int) string {
		head := `{"seq":` + itoa(int(seq)) + `,"value":"`
		return head + strings.Repeat("x", n-len(head)-2) + "\"}\n"
	}
	dir := t.TempDir()
	content := line(1) + sized(2, MaxEntryBytes) + sized(3, MaxEntryBytes+1) + line(4)
	if err := os.WriteFile(filepath.Join(dir, fileName), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	l := openLog(t, dir, Options{})
	if _, seqs, skipped := listAll(t, l); !slices.Equal(seqs, []uint64{1, 2, 4}) || skipped != 1 {
		t.Errorf("List: seqs %v skipped %d, want [1 2 4] and 1", seqs, skipped)
	}
	for _, c := range []struct {
		content string
		want    uint64
	}{
		{line(1) + sized(2, MaxEntryBytes), 2},
		{line(1) + sized(2, MaxEntryBytes+1), 1},
	} {
		if seq, _, err := lastSeqOf(strings.NewReader(c.content), int64(len(c.content))); err != nil || seq != c.want {
			t.Errorf("lastSeqOf = %d %v, want %d", seq, err, c.want)
		}
	}
}
