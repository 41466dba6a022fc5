package console

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
)

// hashFiles returns a strong ETag for every file of files, made from its
// content, so that a browser revalidates each file with a conditional
// request and gets 304 until the binary changes. (Embedded files have no
// modification time to compare instead.)
func hashFiles(files fs.FS) (map[string]string, error) {
	etags := map[string]string{}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		sum := sha256.Sum256(b)
		etags[name] = `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
		return nil
	})
	return etags, err
}
