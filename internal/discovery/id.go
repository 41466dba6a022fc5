package discovery

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/openhal/gateway/internal/atomicfile"
)

// IDFile is the file in the state directory that holds the gateway id.
const IDFile = "gateway.id"

// GatewayID returns the gateway's id: 16 random bytes in hex, made on
// the first start and kept in the state directory, so that a client tells
// one gateway from another when both are renamed or move addresses.
func GatewayID(stateDir string) (string, error) {
	path := filepath.Join(stateDir, IDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(b))
		if !validID(id) {
			return "", fmt.Errorf("gateway id in %s: want 32 hex digits, got %q (remove the file to make a new one)", path, id)
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read gateway id: %w", err)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("make gateway id: %w", err)
	}
	id := hex.EncodeToString(raw[:])
	if err := atomicfile.Write(path, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write gateway id: %w", err)
	}
	return id, nil
}

func validID(id string) bool {
	_, err := hex.DecodeString(id)
	return err == nil && len(id) == 32
}
