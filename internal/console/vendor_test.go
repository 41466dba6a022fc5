package console

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"
)

// manifest is web/vendor/vendor.json, as scripts/vendor-console.sh reads it.
type manifest struct {
	Packages []struct {
		Name, Version, License, Integrity string
		Files                             []struct{ From, To, SHA256 string }
	}
}

// Every vendored file is in the manifest with the sha256 it has, every
// package brings its licence, and nothing else sits in the embedded
// vendor/ (not the manifest either, which stays in the tree): what the
// binary ships is what npm served (scripts/vendor-console.sh checks that
// against the registry).
func TestVendored(t *testing.T) {
	files := Files()
	b, err := os.ReadFile("web/vendor/vendor.json")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("vendor/vendor.json: %v", err)
	}
	listed := map[string]bool{}
	for _, p := range m.Packages {
		if p.Name == "" || p.Version == "" || p.License == "" || !strings.HasPrefix(p.Integrity, "sha512-") {
			t.Errorf("vendor.json: package %q@%q: name, version, license and a sha512 integrity are required", p.Name, p.Version)
		}
		licence := false
		for _, f := range p.Files {
			name := "vendor/" + f.To
			listed[name] = true
			licence = licence || path.Base(f.From) == "LICENSE"
			got, err := fs.ReadFile(files, name)
			if err != nil {
				t.Errorf("%s@%s: %v", p.Name, p.Version, err)
				continue
			}
			if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != f.SHA256 {
				t.Errorf("%s: sha256 %x; vendor.json says %s (changed by hand? run scripts/vendor-console.sh)", name, sum, f.SHA256)
			}
		}
		if !licence {
			t.Errorf("%s@%s: no LICENSE among its files", p.Name, p.Version)
		}
	}
	fs.WalkDir(files, "vendor", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !listed[name] {
			t.Errorf("%s is in vendor/ but not in vendor.json", name)
		}
		return err
	})
}
