package gatewayd

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/openhal/gateway/internal/supervisor/manifest"
)

// installShipped installs, from dir (adapters.shipped), each enabled
// adapter that the gateway ships there (the .deb's mqtt) and that is not
// installed, or was installed from another build (its hash differs): an
// upgrade of the package then upgrades its adapters at the restart that
// follows, instead of leaving the old copy to run, or the new binary to be
// refused as tampered. The folder is root's, written by the package
// manager, which is why what is there is trusted to replace what the
// state directory holds. The names of shipped adapters are theirs: an
// adapter of the same name installed by hand is replaced. A failure is
// logged and leaves the adapter as it was: the supervisor then shows it.
func installShipped(dir, stateDir string, enabled []string, log *slog.Logger) {
	if dir == "" {
		return
	}
	for _, name := range enabled {
		src := filepath.Join(dir, name)
		if _, err := os.Stat(filepath.Join(src, manifest.FileName)); errors.Is(err, fs.ErrNotExist) {
			continue // not one of ours: installed by hand, or not at all
		}
		want, err := manifest.Hash(src)
		if err != nil {
			log.Warn("shipped adapter unreadable; left as installed", "adapter", name, "dir", src, "err", err)
			continue
		}
		if rec, _, err := manifest.Load(stateDir, name); err == nil && rec.Hash == want {
			continue // installed from this very build
		}
		rec, err := manifest.Install(src, stateDir)
		if err != nil {
			log.Warn("shipped adapter not installed", "adapter", name, "dir", src, "err", err)
			continue
		}
		log.Info("installed the shipped adapter", "adapter", rec.Name, "version", rec.Version, "from", src)
	}
}
