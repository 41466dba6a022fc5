package profile

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// FindByController returns the entries of /sys/class/<class> (for example
// "pwm", "tty", "i2c-dev") whose device lives under the named platform
// controller, sorted: FindByController(fsys, "pwm", "1f00098000.pwm")
// gives ["pwmchip2"] on an early Pi 5 kernel and ["pwmchip0"] on a later
// one. It reads the class directory's symbolic links
// (../../devices/platform/.../1f00098000.pwm/pwm/pwmchip2), so fsys must
// be rooted at "/" and support fs.ReadLink (os.DirFS does). A controller
// with nothing bound, such as a PWM block whose overlay is not loaded, is
// an error that says so.
func FindByController(fsys fs.FS, class, controller string) ([]string, error) {
	if class == "" || controller == "" || strings.Contains(class, "/") {
		return nil, fmt.Errorf("find %q device of %q: want a class and a controller", class, controller)
	}
	dir := path.Join("sys/class", class)
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("find %s device of %s: %w", class, controller, err)
	}
	var found []string
	for _, e := range entries {
		target, err := fs.ReadLink(fsys, path.Join(dir, e.Name()))
		if err != nil {
			continue // not a link to a device: nothing to match
		}
		if slices.Contains(strings.Split(target, "/"), controller) {
			found = append(found, e.Name())
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("find %s device of %s: none under /%s (is the controller enabled in config.txt?)", class, controller, dir)
	}
	slices.Sort(found)
	return found, nil
}
