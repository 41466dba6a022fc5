package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkStateDir refuses a directory that is not a gateway state
// directory, so that a mistyped --state-dir does not quietly make a new
// directory and a token no gateway accepts. The sign is tokens.json:
// `gateway run` writes it at its first start (with the first admin
// token), and `token add --init` makes it. init says the directory may
// be a new one; hint is told when it is not (how to make one), or "".
func checkStateDir(tokens Tokens, dir string, init bool, hint string) error {
	file := filepath.Base(tokens.Path())
	_, err := os.Stat(tokens.Path())
	switch {
	case err == nil, init && errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, fs.ErrNotExist) && hint != "":
		return fmt.Errorf("%s is not a gateway state directory (no %s); %s", dir, file, hint)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s is not a gateway state directory (no %s)", dir, file)
	}
	return fmt.Errorf("state directory %s: %w", dir, err)
}

// initHint is what checkStateDir tells the commands that take --init.
const initHint = "pass --init to make one"
