package cli

import "testing"

// A value line names the Hub-wide seq where the token is told it, the
// device's own devSeq where it is not (a device-limited token), and never
// prints "seq 0" for a value that has a number.
func TestSeqNote(t *testing.T) {
	for _, tc := range []struct {
		seq, devSeq uint64
		want        string
	}{
		{7, 3, "seq 7"},
		{7, 0, "seq 7"}, // a Hub that sends no devSeq
		{0, 3, "devSeq 3"},
		{0, 0, "seq 0"}, // a device-published value the Hub holds none of
	} {
		if got := seqNote(tc.seq, tc.devSeq); got != tc.want {
			t.Errorf("seqNote(%d, %d) = %q, want %q", tc.seq, tc.devSeq, got, tc.want)
		}
	}
}
