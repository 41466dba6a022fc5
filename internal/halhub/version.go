package halhub

import (
	"regexp"
	"strings"
)

// versionPattern is the form MAJOR.MINOR of seed 3.1.2, without leading
// zeros so that every version has one spelling.
var versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// compareVersions compares two well-formed versions numerically, major
// first, then minor. It compares digit strings (longer is larger, then
// lexically), so that a 30-digit major never overflows an integer.
func compareVersions(a, b string) int {
	amaj, amin, _ := strings.Cut(a, ".")
	bmaj, bmin, _ := strings.Cut(b, ".")
	if c := compareDigits(amaj, bmaj); c != 0 {
		return c
	}
	return compareDigits(amin, bmin)
}

func compareDigits(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// negotiate returns the version to answer with: the client's when the Hub
// supports it, otherwise the newest the Hub supports (seed 3.1.2, 3 and 4).
func negotiate(client string, supported []string) string {
	newest := supported[0]
	for _, v := range supported {
		if v == client {
			return v
		}
		if compareVersions(v, newest) > 0 {
			newest = v
		}
	}
	return newest
}
