package qemutest

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

type fakeT struct{ logs, errs []string }

func (f *fakeT) Helper()                        {}
func (f *fakeT) Logf(format string, a ...any)   { f.logs = append(f.logs, fmt.Sprintf(format, a...)) }
func (f *fakeT) Errorf(format string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(format, a...)) }

func TestReport(t *testing.T) {
	tests := []struct {
		name    string
		checks  []error // nil passes
		skip    bool
		out     string // regexp of the whole output
		errors  int
		failed  int
		summary string
	}{
		{"all pass", []error{nil, nil}, false,
			`^PASS c0 (\([0-9.]+[µnm]?s\))\nPASS c1 (\([0-9.]+[µnm]?s\))\n2 passed, 0 failed\n$`, 0, 0, "2 passed, 0 failed"},
		{"one fails, the rest still run", []error{nil, errors.New("boom"), nil}, false,
			`^PASS c0 (\([0-9.]+[µnm]?s\))\nFAIL c1 (\([0-9.]+[µnm]?s\)): boom\nPASS c2 (\([0-9.]+[µnm]?s\))\n2 passed, 1 failed\n$`, 1, 1, "2 passed, 1 failed"},
		{"skip counts as neither", []error{nil}, true,
			`^PASS c0 (\([0-9.]+[µnm]?s\))\nSKIP s: not here\n1 passed, 0 failed\n$`, 0, 0, "1 passed, 0 failed"},
		{"no checks", nil, false, `^0 passed, 0 failed\n$`, 0, 0, "0 passed, 0 failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			ft := &fakeT{}
			r := NewReport(ft, &out)
			for i, err := range tt.checks {
				r.Check(fmt.Sprintf("c%d", i), func() error { return err })
			}
			if tt.skip {
				r.Skip("s", errors.New("not here"))
			}
			r.Summary()
			if !regexp.MustCompile(tt.out).MatchString(out.String()) {
				t.Errorf("output:\n%s\nwant it to match %s", out.String(), tt.out)
			}
			if len(ft.errs) != tt.errors || r.Failed() != tt.failed {
				t.Errorf("Errorf calls %q, Failed() %d; want %d, %d", ft.errs, r.Failed(), tt.errors, tt.failed)
			}
			if last := ft.logs[len(ft.logs)-1]; last != tt.summary {
				t.Errorf("last log %q, want %q", last, tt.summary)
			}
		})
	}
}
