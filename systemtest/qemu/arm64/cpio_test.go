package arm64_test

import (
	"bytes"
	"fmt"
	"os"
)

// cpioFile is one entry of a newc archive.
type cpioFile struct {
	name string // without a leading slash
	mode uint32 // type and permission bits (0o100755, 0o040755)
	data []byte
}

// writeCPIO returns a newc ("070701") archive of files with its trailer,
// the format the kernel unpacks as an initramfs.
func writeCPIO(files []cpioFile) []byte {
	var b bytes.Buffer
	pad := func() {
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
	}
	entry := func(ino int, f cpioFile) {
		fmt.Fprintf(&b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, f.mode, 0, 0, 1, 0, len(f.data), 0, 0, 0, 0, len(f.name)+1, 0)
		b.WriteString(f.name)
		b.WriteByte(0)
		pad()
		b.Write(f.data)
		pad()
	}
	for i, f := range files {
		entry(i+1, f)
	}
	entry(0, cpioFile{name: "TRAILER!!!"})
	return b.Bytes()
}

// buildInitrd writes base (the cached, compressed base initramfs) followed
// by an uncompressed archive of overlay to out. The kernel unpacks both in
// turn; the second starts on a 4-byte boundary as it requires.
func buildInitrd(base, out string, overlay []cpioFile) error {
	b, err := os.ReadFile(base)
	if err != nil {
		return fmt.Errorf("read base initramfs: %w", err)
	}
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, writeCPIO(overlay)...)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return fmt.Errorf("write initramfs %s: %w", out, err)
	}
	return nil
}
