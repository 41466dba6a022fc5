package qemutest

import (
	"fmt"
	"os"
	"path/filepath"
)

// Enabled reports whether GATEWAY_QEMU=1 asks for the QEMU tests, which
// boot kernels under emulation and are skipped otherwise.
func Enabled() bool { return os.Getenv("GATEWAY_QEMU") == "1" }

// CacheDir is where the assets scripts cache what a guest of arch boots:
// ${XDG_CACHE_HOME:-~/.cache}/gateway-qemu/ARCH, as common/debs.sh's
// qemu_cache_root has it.
func CacheDir(arch string) (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the asset cache: %w", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "gateway-qemu", arch), nil
}
