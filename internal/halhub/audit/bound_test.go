package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openhal/gateway/openhal"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// encodedSize is the length of s as encoding/json writes it, without the
// quotes.
func encodedSize(t *testing.T, s string) int {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return len(b) - 2
}

// TestCutString: the prefix kept is the longest whose encoding fits,
// ends at a character boundary, and a string that fits is kept whole.
func TestCutString(t *testing.T) {
	tests := []struct {
		name string
		s    string
		max  int
		cut  bool
	}{
		{"short", "preheat for run 7", 1024, false},
		{"exactly the bound", strings.Repeat("x", 1024), 1024, false},
		{"one byte over", strings.Repeat("x", 1025), 1024, true},
		{"escaped quotes", strings.Repeat(`"`, 600), 1024, true},
		{"control characters take 6", strings.Repeat("\x01", 200), 1024, true},
		{"html characters take 6", strings.Repeat("<&>", 100), 1024, true},
		{"line separators take 6", strings.Repeat("\u2028", 200), 1024, true},
		{"invalid UTF-8 takes 6", strings.Repeat("\xff", 200), 1024, true},
		{"multi-byte characters", strings.Repeat("é€😀", 200), 1024, true},
		{"a short string of wide characters", strings.Repeat("\x01", 170), 1024, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := cutString(tt.s, tt.max)
			if cut != tt.cut {
				t.Fatalf("cut = %v, want %v", cut, tt.cut)
			}
			if !strings.HasPrefix(tt.s, got) {
				t.Fatalf("%q is not a prefix", got)
			}
			if n := encodedSize(t, got); n > tt.max {
				t.Errorf("kept %d encoded bytes, more than %d", n, tt.max)
			}
			if !cut {
				if got != tt.s {
					t.Errorf("a string that fits was changed")
				}
				return
			}
			if utf8.ValidString(tt.s) && !utf8.ValidString(got) {
				t.Errorf("cut inside a character: %q", got[len(got)-4:])
			}
			// One more character would not fit.
			_, size := utf8.DecodeRuneInString(tt.s[len(got):])
			if n := encodedSize(t, tt.s[:len(got)+size]); n <= tt.max {
				t.Errorf("cut at %d bytes, but %d would still fit (%d encoded)", len(got), len(got)+size, n)
			}
		})
	}
}

// TestEntryBounds: each field a client may fill is cut to its bound, its
// full length and hash kept under cut; a field within its bound is kept
// as it is, with no cut noted.
func TestEntryBounds(t *testing.T) {
	long := strings.Repeat("r", 255<<10)
	longName := strings.Repeat("d", 300)
	object := map[string]any{"blob": strings.Repeat("v", 5000)}
	objectJSON, _ := json.Marshal(object)
	tests := []struct {
		name   string
		entry  Entry
		check  func(e Entry) string // what is wrong, or ""
		cuts   map[string][]byte    // the fields cut, and their full bytes
		fitted map[string]int       // the bound each cut field was cut to
	}{
		{"a short entry is kept whole",
			Entry{Action: "write", Device: "sim.led", Value: true, Outcome: "applied", Reason: "why not"}, nil, nil, nil},
		{"a long reason",
			Entry{Action: "write", Outcome: "refused", Reason: long},
			func(e Entry) string { return prefixOf(e.Reason, long) },
			map[string][]byte{CutReason: []byte(long)}, map[string]int{CutReason: CutText}},
		{"a long string value",
			Entry{Action: "write", Outcome: "refused", Value: long},
			func(e Entry) string { return prefixOf(e.Value.(string), long) },
			map[string][]byte{CutValue: []byte(long)}, nil},
		{"a large object value is left out",
			Entry{Action: "write", Outcome: "refused", Value: object},
			func(e Entry) string {
				if e.Value != nil {
					return "the value is still there"
				}
				return ""
			},
			map[string][]byte{CutValue: objectJSON}, nil},
		{"a long error message",
			Entry{Action: "write", Outcome: "refused", Error: &ErrorInfo{Code: -32004, Message: "no device " + long, Reason: "device_not_found"}},
			func(e Entry) string {
				if e.Error.Reason != "device_not_found" || e.Error.Code != -32004 {
					return "the error's other fields changed"
				}
				return prefixOf(e.Error.Message, "no device "+long)
			},
			map[string][]byte{CutErrorMessage: []byte("no device " + long)}, nil},
		{"long names",
			Entry{Principal: openhal.Principal{Kind: "anonymous", Name: longName}, Action: "write", Device: longName, Confirmation: longName, Outcome: "refused"},
			func(e Entry) string {
				if len(e.Device) != CutName || len(e.Confirmation) != CutName || len(e.Principal.Name) != CutName {
					return "not cut to CutName"
				}
				return ""
			},
			map[string][]byte{CutDevice: []byte(longName), CutConfirmation: []byte(longName), CutPrincipalName: []byte(longName)}, nil},
	}
	l := openLog(t, t.TempDir(), Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs := mustAppend(t, l, tt.entry)
			pg, err := l.List(seqs[0]-1, ListOptions{Limit: 1})
			if err != nil || len(pg.Entries) != 1 {
				t.Fatalf("List: %v, %d entries", err, len(pg.Entries))
			}
			line := pg.Entries[0]
			if len(line) > 4<<10 {
				t.Errorf("the entry takes %d bytes", len(line))
			}
			var got Entry
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				if msg := tt.check(got); msg != "" {
					t.Errorf("%s: %s", msg, line)
				}
			}
			if len(got.Cut) != len(tt.cuts) {
				t.Errorf("cut %v, want %d fields", got.Cut, len(tt.cuts))
			}
			for field, full := range tt.cuts {
				c, ok := got.Cut[field]
				if !ok || c.Bytes != len(full) || c.SHA256 != sha(full) {
					t.Errorf("cut[%s] = %+v, want %d bytes, sha256 %s", field, c, len(full), sha(full))
				}
			}
			if tt.fitted[CutReason] > 0 && encodedSize(t, got.Reason) != CutText {
				t.Errorf("reason kept %d bytes, want %d", encodedSize(t, got.Reason), CutText)
			}
		})
	}
}

func prefixOf(kept, full string) string {
	if len(kept) == 0 || len(kept) > CutText || !strings.HasPrefix(full, kept) {
		return "not the first CutText bytes"
	}
	return ""
}

// TestEntryLimit: an entry with every field at its worst — each as long
// as it may be, of the characters that take the most bytes to encode,
// and a count entry with more kinds than MaxTallies — encodes to less
// than EntryLimit, so Append never refuses an entry for its size.
func TestEntryLimit(t *testing.T) {
	worst := strings.Repeat("\x01", 100<<10)
	big := strings.Repeat("\u2028", 100<<10)
	e := Entry{
		Principal: openhal.Principal{Kind: worst, Name: big, Scope: openhal.Scope(worst)},
		Action:    worst, Device: big, Value: worst, Outcome: big, Rule: worst, Confirmation: big, Reason: worst,
		Error: &ErrorInfo{Code: -32099, Message: big, Reason: worst},
	}
	var c Counter
	for i := range MaxTallies + 5 {
		c.Add(Entry{Action: string(rune('a'+i)) + worst, Outcome: big, Rule: worst, Error: &ErrorInfo{Reason: big}})
	}
	ce := c.Entry(e.Principal)
	ce.Reason, ce.Error, ce.Device, ce.Value, ce.Confirmation = e.Reason, e.Error, e.Device, e.Value, e.Confirmation
	for i, x := range []Entry{e, ce} {
		b, err := encodeEntry(&x)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("worst %s: %d bytes (EntryLimit %d)", []string{"entry", "count entry"}[i], len(b)+20, EntryLimit)
		if len(b)+20 > EntryLimit {
			t.Errorf("%d bytes, more than EntryLimit %d", len(b)+20, EntryLimit)
		}
	}
}

// TestListCutsOldLongLines: a line written before the bound (an upgraded
// log), longer than EntryLimit, is listed cut as Append would cut it;
// shorter old lines are listed as stored.
func TestListCutsOldLongLines(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("r", 255<<10)
	old, _ := json.Marshal(Entry{Seq: 1, Action: "write", Outcome: "refused", Reason: long})
	short := `{"seq":2,"ts":"2026-01-01T00:00:00Z","principal":{"kind":"agent","name":"a"},"action":"write","outcome":"applied","reason":"` + strings.Repeat("s", 2000) + `"}`
	writeFile(t, dir, fileName, string(old)+"\n"+short+"\n")
	l := openLog(t, dir, Options{})
	lines, seqs, skipped := listAll(t, l)
	if skipped != 0 || len(seqs) != 2 {
		t.Fatalf("seqs %v, %d skipped", seqs, skipped)
	}
	var e Entry
	json.Unmarshal(lines[0], &e)
	if e.Seq != 1 || len(lines[0]) > 4<<10 || e.Cut[CutReason].Bytes != len(long) || e.Cut[CutReason].SHA256 != sha([]byte(long)) {
		t.Errorf("the old long line is listed as %.200s", lines[0])
	}
	if string(lines[1]) != short {
		t.Errorf("a short old line was changed: %.100s", lines[1])
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
