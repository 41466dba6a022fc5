package halclient

import (
	"strings"
	"testing"
)

// The file keeps what a person wrote in it: comments, blank lines and the
// order of the entries; a new name is noted on its entry's own line; a
// new gateway is added at the end; names that would break the fields are
// escaped, and read back as they were.
func TestKnownFileRoundTrip(t *testing.T) {
	fp1, fp2 := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	const id = "0123456789abcdef0123456789abcdef"
	in := "# mine: the bench\n\n" + id + " " + strings.ToUpper(fp1) + " bench\n# the old one\n10.0.0.9:7752 " + fp2 + "\n"
	k, err := parseKnown("known", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(k.entries) != 2 || k.entries[0].line != 3 || k.entries[0].fingerprint != fp1 || k.entries[1].key != "10.0.0.9:7752" {
		t.Fatalf("entries %+v", k.entries)
	}
	if !k.add(id, fp1, []string{"Bench", "10.0.0.5:7752"}) {
		t.Error("a new address noted nothing")
	}
	if k.add(id, fp1, []string{"bench", "10.0.0.5:7752"}) {
		t.Error("names noted twice")
	}
	const other = "fedcba9876543210fedcba9876543210"
	k.add(other, strings.Repeat("ef", 32), []string{"Lab, 2%"})
	want := "# mine: the bench\n\n" + id + " " + fp1 + " bench,10.0.0.5:7752\n# the old one\n10.0.0.9:7752 " + fp2 + "\n" +
		other + " " + strings.Repeat("ef", 32) + " Lab%2C%202%25\n"
	if got := string(k.render()); got != want {
		t.Errorf("render =\n%s\nwant\n%s", got, want)
	}
	again, err := parseKnown("known", k.render())
	if err != nil || len(again.entries) != 3 || strings.Join(again.entries[2].seenAs, "|") != "Lab, 2%" {
		t.Errorf("read back: %v, %+v", err, again.entries)
	}
	if e := again.conflict(id, []string{"LAB, 2%"}, fp1); e == nil || e.key != other {
		t.Errorf("a name another gateway was seen as, case aside: conflict %+v", e)
	}
	if e := again.conflict("10.0.0.9:7752", nil, fp2); e != nil {
		t.Errorf("the same certificate conflicts with itself: %+v", e)
	}
}

func TestKnownFileBadLines(t *testing.T) {
	fp := strings.Repeat("ab", 32)
	for _, tt := range []struct{ text, want string }{
		{"gw " + fp + " a b\n", "known line 1: want KEY FINGERPRINT [SEEN-AS,...]"},
		{"# ok\ngw\n", "known line 2: want KEY FINGERPRINT"},
		{"gw 12ab\n", "known line 1: certificate fingerprint \"12ab\""},
		{"gw " + fp + " a,%zz\n", "known line 1: seen-as \"%zz\""},
		{"gw " + fp + " a,,b\n", "known line 1: seen-as \"\""},
	} {
		_, err := parseKnown("known", []byte(tt.text))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !strings.HasSuffix(err.Error(), "(fix or remove the line)") {
			t.Errorf("parse %q = %v; want %q...", tt.text, err, tt.want)
		}
	}
}
