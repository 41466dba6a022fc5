package cli

import "strings"

// versionLine is what `gateway version` prints: the version, and the
// commit when the version does not already hold it. `git describe`
// (the Makefile's VERSION) gives the commit alone on a checkout without
// tags ("f0402df") and ends with it after one ("v0.2.0-3-gf0402df"):
// printing it twice told nothing more.
func versionLine(version, commit string) string {
	if commit == "" || strings.Contains(version, commit) {
		return "gateway " + version
	}
	return "gateway " + version + " (commit " + commit + ")"
}
