package qemutest

import (
	"bytes"
	"fmt"
	"os"
	"path"
)

// File is one regular file of a newc archive.
type File struct {
	Name string // slash-separated, without a leading slash
	Mode uint32 // permission bits, such as 0o755
	Data []byte
}

// Archive returns an uncompressed cpio "newc" archive of files, with the
// directories they need (0755) before them and the trailer: the format the
// kernel unpacks into its rootfs.
func Archive(files []File) []byte {
	var b bytes.Buffer
	ino := 1
	pad := func() {
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
	}
	entry := func(name string, mode uint32, data []byte) {
		fmt.Fprintf(&b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
		ino++
		b.WriteString(name)
		b.WriteByte(0)
		pad()
		b.Write(data)
		pad()
	}
	dirs := map[string]bool{}
	for _, f := range files {
		var parents []string
		for d := path.Dir(f.Name); d != "." && d != "/"; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if !dirs[d] {
				dirs[d] = true
				entry(d, 0o040755, nil)
			}
		}
		entry(f.Name, 0o100000|f.Mode&0o7777, f.Data)
	}
	ino = 0
	entry("TRAILER!!!", 0, nil)
	return b.Bytes()
}

// WriteInitrd writes to out the base initramfs (the cached, compressed
// archive the assets script built) followed by an uncompressed archive of
// files. The kernel unpacks both in turn; it looks for the second one's
// magic on a 4-byte boundary, so base is padded to one. Keeping the
// gateway out of base means rebuilding the gateway does not rebuild it.
func WriteInitrd(base, out string, files []File) error {
	b, err := os.ReadFile(base)
	if err != nil {
		return fmt.Errorf("read base initramfs: %w", err)
	}
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, Archive(files)...)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return fmt.Errorf("write initramfs %s: %w", out, err)
	}
	return nil
}
