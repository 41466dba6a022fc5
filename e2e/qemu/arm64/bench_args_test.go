package arm64_test

import (
	"slices"
	"strings"
	"testing"
)

// TestBenchFlags: the flags given win over the default, and --no-fail and
// the guest's gateway are always added.
func TestBenchFlags(t *testing.T) {
	tail := []string{"--no-fail", "--gateway", guestGateway}
	for _, tc := range []struct {
		given string
		want  []string
	}{
		{"", append(strings.Fields(defaultBenchFlags), tail...)},
		{"  ", append(strings.Fields(defaultBenchFlags), tail...)},
		{"--quick", append([]string{"--quick"}, tail...)},
		{" --quick  --watchers 50 ", append([]string{"--quick", "--watchers", "50"}, tail...)},
	} {
		if got := benchFlags(tc.given); !slices.Equal(got, tc.want) {
			t.Errorf("benchFlags(%q) = %q, want %q", tc.given, got, tc.want)
		}
	}
}

// TestExitStatus: halbench's status is read from the line halbenchScript
// prints; output without it (the guest shell cut off) is an error, never
// a success.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		out     string
		want    int
		wantErr bool
	}{
		{exitMarker + "0", 0, false},
		{exitMarker + "1\n", 1, false},
		{"some noise\n" + exitMarker + "2", 2, false},
		{"", 0, true},
		{"Segmentation fault", 0, true},
		{exitMarker, 0, true},
		{exitMarker + "x", 0, true},
	} {
		got, err := exitStatus(tc.out)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("exitStatus(%q) = %d, %v; want %d, error %v", tc.out, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestHalbenchScript: the table and the log go to their own files, and
// the status follows the marker.
func TestHalbenchScript(t *testing.T) {
	got := halbenchScript([]string{"--quick", "--no-fail"})
	for _, want := range []string{guestHalbench + " --quick --no-fail", ">" + guestReport, "2>" + guestBenchLog, exitMarker + "$?"} {
		if !strings.Contains(got, want) {
			t.Errorf("halbenchScript = %q, want it to contain %q", got, want)
		}
	}
}
