package cli

import "testing"

// The commit is printed once: beside a version that lacks it, or not at
// all when the version holds it.
func TestVersionLine(t *testing.T) {
	tests := []struct{ version, commit, want string }{
		{"f0402df", "f0402df", "gateway f0402df"},
		{"f0402df-dirty", "f0402df", "gateway f0402df-dirty"},
		{"v0.2.0-3-gf0402df", "f0402df", "gateway v0.2.0-3-gf0402df"},
		{"v0.2.0", "f0402df", "gateway v0.2.0 (commit f0402df)"},
		{"dev", "unknown", "gateway dev (commit unknown)"},
		{"dev", "", "gateway dev"},
	}
	for _, tt := range tests {
		if got := versionLine(tt.version, tt.commit); got != tt.want {
			t.Errorf("versionLine(%q, %q) = %q, want %q", tt.version, tt.commit, got, tt.want)
		}
	}
}
