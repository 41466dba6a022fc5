package cli

import "fmt"

// seqNote names a value's number for people: the Hub-wide seq when the
// token is told it, otherwise the device's own count. A token limited to
// some devices is sent no seq (it would count the hidden devices' values
// too: docs/protocol.md, "Telling missed values"), so printing its seq
// would print 0.
func seqNote(seq, devSeq uint64) string {
	if seq == 0 && devSeq > 0 {
		return fmt.Sprintf("devSeq %d", devSeq)
	}
	return fmt.Sprintf("seq %d", seq)
}
