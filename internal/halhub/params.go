package halhub

import (
	"encoding/json"
	"fmt"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// checkVersion checks protocolVersion's form (seed 3.1.2, 2): a string
// MAJOR.MINOR. The error names the versions this Hub supports.
func checkVersion(raw json.RawMessage) (string, *jsonrpc.Error) {
	var v string
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || !versionPattern.MatchString(v) {
		return "", newError(openhal.CodeInvalidParams, "bad_version",
			fmt.Sprintf("protocolVersion must be a string MAJOR.MINOR such as %q; this hub supports %s",
				supportedVersions[0], joinVersions(supportedVersions)),
			data{"supported": supportedVersions})
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
