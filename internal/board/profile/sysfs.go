package profile

import (
	"errors"
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
	if errors.Is(err, fs.ErrNotExist) {
		// Not "open class/pwm: no such file": say what is missing and
		// what to check.
		return nil, notExist(fmt.Sprintf("find %s device of %s: /%s does not exist: the kernel has no %s controller enabled (is the controller enabled in config.txt, and the machine rebooted since?)",
			class, controller, dir, class))
	}
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

// notExist is an error that says in its own words that something does
// not exist, and matches fs.ErrNotExist.
type notExist string

func (e notExist) Error() string        { return string(e) }
func (e notExist) Is(target error) bool { return target == fs.ErrNotExist }
