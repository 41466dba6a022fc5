// Package reference holds the reference frames of the oxidepmd adapter
// protocol v1: the example frames of the user's seed pages, byte for byte,
// in one embedded file (frames.txt). The protocol package's tests, the
// supervisor's tests and the test adapter all read this one file, so that
// a frame cannot drift between them.
//
// It is public so that an adapter's own tests may check their frames
// against the protocol's. Stable: the frames, byte for byte, and their
// names — changing one is a change of protocol, which needs a new
// protocol number — and Frames and Bytes.
package reference

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed frames.txt
var framesTxt string

// Directions of a frame.
const (
	FromDaemon  = "daemon"
	FromAdapter = "adapter"
)

// Frame is one reference frame: its name, who sends it (FromDaemon or
// FromAdapter) and its bytes, without the line's '\n'.
type Frame struct {
	Name, From string
	Bytes      []byte
}

// Frames returns every reference frame in the file's order. The slices
// are fresh copies: a caller may change them.
func Frames() []Frame {
	frames, _ := parse(framesTxt)
	return frames
}

// Bytes returns a fresh copy of the frame called name, or nil when there is
// none.
func Bytes(name string) []byte {
	for _, f := range Frames() {
		if f.Name == name {
			return f.Bytes
		}
	}
	return nil
}

// parse reads name<TAB>from<TAB>frame lines; empty lines and lines starting
// with '#' are comments. A malformed line is skipped and reported.
func parse(text string) ([]Frame, error) {
	var frames []Frame
	var bad error
	for i, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, ok1 := strings.Cut(line, "\t")
		from, frame, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 || name == "" || frame == "" || (from != FromDaemon && from != FromAdapter) {
			if bad == nil {
				bad = fmt.Errorf("frames.txt line %d: want name<TAB>daemon|adapter<TAB>frame", i+1)
			}
			continue
		}
		frames = append(frames, Frame{Name: name, From: from, Bytes: []byte(frame)})
	}
	return frames, bad
}
