package board

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds arbitrary text to the configuration decoder: it must
// never panic, a refusal must be a non-empty Errors whose every fault says
// something, and what it accepts must pass Validate, so that no file can
// slip a value past the checks by its form. Its corpus is
// testdata/fuzz/FuzzParse (one file per input worth keeping: the default
// configuration, faults of form, and anything the fuzzer found).
func FuzzParse(f *testing.F) {
	f.Add(DefaultYAML())
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("Parse(%q): error %T %v is not a non-empty Errors", data, err, err)
			}
			for _, e := range errs {
				if e.Msg == "" {
					t.Fatalf("Parse(%q): a fault at %q says nothing", data, e.Path)
				}
				if !utf8.ValidString(e.Error()) {
					t.Fatalf("Parse(%q): fault %q is not UTF-8", data, e.Error())
				}
			}
			return
		}
		if c.Board == "" {
			t.Fatalf("Parse(%q) accepted a file without a board", data)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse(%q) accepted what Validate refuses: %v", data, err)
		}
	})
}
