package halhub

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
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

// checkVersion checks protocolVersion's form (seed 3.1.2, 2): a string
// MAJOR.MINOR. The error names the versions this Hub supports.
func checkVersion(raw json.RawMessage) (string, *jsonrpc.Error) {
	var v string
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || !versionPattern.MatchString(v) {
		return "", newError(openhal.CodeInvalidParams, "bad_version",
			fmt.Sprintf("protocolVersion must be a string MAJOR.MINOR such as %q; this hub supports %s",
				supportedVersions[0], joinVersions(supportedVersions)),
			errorData{"supported": supportedVersions})
	}
	return v, nil
}

func joinVersions(vs []string) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ", "
		}
		out += "v" + v
	}
	return out
}
