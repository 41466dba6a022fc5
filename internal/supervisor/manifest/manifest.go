// Package manifest reads, checks and installs adapters (adapter protocol
// v1, §2): an adapter is a folder with an executable and a manifest,
// adapter.json. Installing copies the folder into the state directory and
// records one SHA-256 over it, which the supervisor checks before every
// spawn, so that an adapter that changed on disk is refused as tampered
// instead of being run with the grant given to what was installed.
package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
)

// FileName is the manifest's name inside an adapter folder.
const FileName = "adapter.json"

// DefaultRequestMs is the request timeout of a manifest without
// timeouts.request_ms: the 10 s that the spec's example and the seed's
// initialize deadline use.
const DefaultRequestMs = 10000

// Manifest is an adapter's adapter.json.
type Manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Exec is the executable, a slash-separated path relative to the
	// adapter folder.
	Exec    string             `json:"exec"`
	Args    []string           `json:"args"`
	EnvPass []string           `json:"env_pass"`
	Grant   adapterproto.Grant `json:"grant"`
	// Devices are the devices the adapter provides, with their ids as the
	// manifest writes them (unprefixed); they are published as
	// "<name>.<id>".
	Devices  []device.Descriptor `json:"devices"`
	Timeouts Timeouts            `json:"timeouts"`
}

// Timeouts are the adapter's own deadlines.
type Timeouts struct {
	RequestMs int `json:"request_ms"`
}

// wire is adapter.json as it is read. The scope is kept raw, because
// adapterproto.ScopeList refuses a bad pattern while decoding, and an
// author must hear about every bad pattern (and every other fault) at
// once; request_ms is a pointer so that an absent one takes the default
// while an explicit 0 is an error.
type wire struct {
	Name     string              `json:"name"`
	Version  string              `json:"version"`
	Kind     string              `json:"kind"`
	Exec     string              `json:"exec"`
	Args     []string            `json:"args"`
	EnvPass  []string            `json:"env_pass"`
	Grant    *wireGrant          `json:"grant"`
	Devices  []device.Descriptor `json:"devices"`
	Timeouts *wireTimeouts       `json:"timeouts"`
}

type wireGrant struct {
	Level string          `json:"level"`
	Scope json.RawMessage `json:"scope"`
}

type wireTimeouts struct {
	RequestMs *int `json:"request_ms"`
}

// Parse decodes and checks a manifest, without looking at any folder: exec
// is only checked to stay inside one. The error is Errors, listing every
// fault.
func Parse(data []byte) (*Manifest, error) {
	m, errs := parse(data)
	if len(errs) > 0 {
		return nil, errs
	}
	return m, nil
}

// ReadDir reads dir/adapter.json and checks it against the folder too:
// exec must be a regular executable file inside it, and the folder may
// hold only regular files and directories (see Hash). The error is Errors
// when the folder is readable but wrong.
func ReadDir(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		return nil, fmt.Errorf("read adapter manifest: %w", err)
	}
	m, errs := parse(data)
	exec := execOf(data)
	if !hasPath(errs, "exec") {
		errs = append(errs, checkExec(dir, exec)...)
	}
	errs = append(errs, checkTree(dir, exec)...)
	if len(errs) > 0 {
		return nil, errs
	}
	return m, nil
}

func parse(data []byte) (*Manifest, Errors) {
	var errs Errors
	var doc json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		errs.Add("", "%s is not valid JSON: %v", FileName, err)
		return nil, errs
	}
	checkShape("", doc, reflect.TypeFor[wire](), &errs)
	shape := len(errs)
	// A value of the wrong type is skipped by Unmarshal, which decodes the
	// rest: checkShape has named it already, and the other fields are
	// still judged below, so that every fault is reported at once.
	var w wire
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(data, &w); err != nil && (shape == 0 || !errors.As(err, &typeErr)) {
		errs.Add("", "decode %s: %v", FileName, err)
		return nil, errs
	}
	m := &Manifest{
		Name:     w.Name,
		Version:  w.Version,
		Kind:     w.Kind,
		Exec:     w.Exec,
		Args:     w.Args,
		EnvPass:  w.EnvPass,
		Devices:  w.Devices,
		Timeouts: Timeouts{RequestMs: DefaultRequestMs},
	}
	v := validator{errs: &errs}
	v.name(m.Name)
	v.version(m.Version)
	v.kind(m.Kind)
	v.exec(m.Exec)
	v.envPass(m.EnvPass)
	m.Grant = v.grant(w.Grant)
	v.devices(m.Name, m.Devices)
	if w.Timeouts != nil && w.Timeouts.RequestMs != nil {
		m.Timeouts.RequestMs = *w.Timeouts.RequestMs
		if m.Timeouts.RequestMs <= 0 {
			errs.Add("timeouts.request_ms", "must be positive, got %d", m.Timeouts.RequestMs)
		}
	}
	if shape > 0 {
		errs = append(errs[:shape], under(errs[shape:], errs[:shape])...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return m, nil
}

// under drops the value faults at or below a path that has a shape fault:
// a kind of 3 is "want a string", not also "want service or tool, got """.
// A fault of the whole document (it is not an object) covers everything.
func under(values, shapes Errors) Errors {
	var out Errors
	for _, v := range values {
		covered := slices.ContainsFunc(shapes, func(s FieldError) bool {
			return s.Path == "" || (v.Path == s.Path || strings.HasPrefix(v.Path, s.Path+".") || strings.HasPrefix(v.Path, s.Path+"["))
		})
		if !covered {
			out = append(out, v)
		}
	}
	return out
}

func hasPath(errs Errors, p string) bool {
	return slices.ContainsFunc(errs, func(e FieldError) bool { return e.Path == p })
}

// execOf pulls exec out of a manifest that may be otherwise wrong, so that
// its file is checked together with the other faults.
func execOf(data []byte) string {
	var w struct {
		Exec json.RawMessage `json:"exec"`
	}
	if json.Unmarshal(data, &w) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(w.Exec, &s) != nil {
		return ""
	}
	return s
}

// checkExec checks that exec names an executable regular file inside dir.
// A path that is empty or leaves the folder has been reported by parse.
func checkExec(dir, exec string) Errors {
	var errs Errors
	if !localExec(exec) {
		return nil
	}
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(exec)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		errs.Add("exec", "not found in the folder")
	case err != nil:
		errs.Add("exec", "%v", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		errs.Add("exec", "is a symlink (copy the file into the folder)")
	case fi.IsDir():
		errs.Add("exec", "is a directory")
	case !fi.Mode().IsRegular():
		errs.Add("exec", "is not a regular file")
	case fi.Mode().Perm()&0o111 == 0:
		errs.Add("exec", "not executable")
	}
	return errs
}

// localExec reports whether exec is a clean-enough relative path that
// stays inside the adapter folder.
func localExec(exec string) bool {
	return exec != "" && !path.IsAbs(exec) && filepath.IsLocal(filepath.FromSlash(exec)) &&
		!strings.ContainsRune(exec, '\\')
}
