package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the adapter manifest decoder: it must
// never panic; a refusal is a non-empty Errors whose every fault says
// something; an accepted manifest has a positive request timeout and
// decodes again to the same manifest once written back out (compared as
// JSON), so that what
// is installed is what was checked. Its corpus is testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validManifest))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("Parse(%q): error %T %v is not a non-empty Errors", data, err, err)
			}
			for _, e := range errs {
				if e.Msg == "" {
					t.Fatalf("Parse(%q): a fault at %q says nothing", data, e.Path)
				}
			}
			return
		}
		if m.Timeouts.RequestMs <= 0 {
			t.Fatalf("Parse(%q) accepted request_ms %d", data, m.Timeouts.RequestMs)
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("write back %+v: %v", m, err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) accepted, its own output %s refused: %v", data, out, err)
		}
		// Compared as written out: a nil and an empty list are the same
		// manifest.
		if out2, _ := json.Marshal(again); !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the manifest:\n%s\n%s", out, out2)
		}
	})
}
