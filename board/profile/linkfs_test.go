package profile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// mapLinkFS gives fstest.MapFS the ReadLink it has only from Go 1.25:
// an entry with fs.ModeSymlink is a link to its Data.
type mapLinkFS struct{ fstest.MapFS }

func (m mapLinkFS) ReadLink(name string) (string, error) {
	f, ok := m.MapFS[name]
	if !ok {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrNotExist}
	}
	if f.Mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return string(f.Data), nil
}

func TestDirFSReadLink(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("../devices/x/pwmchip0", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := DirFS(root)
	tests := []struct {
		name, want string
		wantErr    error // nil: no error
	}{
		{"link", "../devices/x/pwmchip0", nil},
		{"file", "", nil}, // an error, not a link: checked below
		{"missing", "", fs.ErrNotExist},
		{"../link", "", fs.ErrInvalid},
		{"/link", "", fs.ErrInvalid},
	}
	for _, tt := range tests {
		got, err := fsys.ReadLink(tt.name)
		switch {
		case tt.want != "":
			if err != nil || got != tt.want {
				t.Errorf("ReadLink(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
			}
		case err == nil:
			t.Errorf("ReadLink(%q) = %q, want an error", tt.name, got)
		case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
			t.Errorf("ReadLink(%q) error %v, want %v", tt.name, err, tt.wantErr)
		}
		var pe *fs.PathError
		if err != nil && (!errors.As(err, &pe) || pe.Path != tt.name) {
			t.Errorf("ReadLink(%q) error %v: want a PathError naming %q, not the host path", tt.name, err, tt.name)
		}
	}
	// Everything else reads as through os.DirFS.
	if _, err := fs.Stat(fsys, "file"); err != nil {
		t.Errorf("Stat(file) through DirFS: %v", err)
	}
}
