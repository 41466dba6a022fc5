package board

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder fills a struct from a YAML document itself rather than through
// yaml.Unmarshal, so that it can go on after a fault and name every one by
// its path. A field with a fault keeps its default. The decoder remembers
// the line of each field it saw, so that faults found later, in the
// values, are sorted into the order of the file.
type decoder struct {
	faults []fault
	lines  map[string]int  // path -> line of its value in the file
	bad    map[string]bool // paths with a fault of form
}

type fault struct {
	FieldError
	line int
}

func newDecoder() *decoder { return &decoder{lines: map[string]int{}, bad: map[string]bool{}} }

// decode parses data onto the defaults already in c, collecting the faults
// of form. It returns an error only when data is not YAML at all.
func (d *decoder) decode(data []byte, c *Config) error {
	root, err := parseDocument(data)
	if err != nil {
		return err
	}
	if root != nil {
		d.value("", root, reflect.ValueOf(c).Elem())
	}
	return nil
}

// result adds the faults of value found after decoding, except for fields
// whose form was already wrong (they hold a default, not the user's
// value), and returns every fault in the order of the file; faults
// without a line (a required field that is missing) come first.
func (d *decoder) result(values Errors) Errors {
	for _, e := range values {
		if !d.spoilt(e.Path) {
			d.fail(e.Path, d.lines[e.Path], "%s", e.Msg)
		}
	}
	sort.SliceStable(d.faults, func(i, j int) bool { return d.faults[i].line < d.faults[j].line })
	var out Errors
	for _, f := range d.faults {
		out = append(out, f.FieldError)
	}
	return out
}

// parseDocument returns the one YAML document in data, or nil for an empty
// file.
func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("line %d: a configuration file holds one YAML document", next.Line)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// spoilt reports whether path or a section holding it had a fault of form.
func (d *decoder) spoilt(path string) bool {
	if d.bad[""] {
		return true
	}
	for p := path; p != ""; {
		if d.bad[p] {
			return true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return false
}

func (d *decoder) fail(path string, line int, format string, args ...any) {
	d.bad[path] = true
	d.faults = append(d.faults, fault{FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}, line})
}

var durationType = reflect.TypeOf(time.Duration(0))

// value decodes n into v, whose field path is path.
func (d *decoder) value(path string, n *yaml.Node, v reflect.Value) {
	d.lines[path] = n.Line
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch {
	case v.Type() == durationType:
		d.duration(path, n, v)
	case v.Kind() == reflect.Struct:
		d.mapping(path, n, v)
	case v.Kind() == reflect.String:
		d.str(path, n, v)
	case v.Kind() == reflect.Bool:
		d.scalar(path, n, v, "a boolean (true or false)", "!!bool")
	case v.CanInt():
		d.scalar(path, n, v, "an integer", "!!int")
	case v.CanFloat():
		d.scalar(path, n, v, "a number", "!!int", "!!float")
	default:
		panic(fmt.Sprintf("board: no decoding for %s (%s)", path, v.Type()))
	}
}

// mapping decodes a YAML mapping into the struct v, field by field. A
// null (a key with nothing after it) leaves every field at its default.
func (d *decoder) mapping(path string, n *yaml.Node, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "want a mapping of settings, got %s", describe(n))
		return
	}
	fields := fieldsOf(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		p := join(path, key.Value)
		if first, ok := seen[key.Value]; ok {
			d.fail(p, key.Line, "set twice (first on line %d)", first)
			continue
		}
		seen[key.Value] = key.Line
		fi, ok := fields[key.Value]
		if !ok {
			d.fail(p, key.Line, "unknown field%s", suggest(key.Value, fields))
			continue
		}
		d.value(p, val, v.Field(fi))
	}
}

// str decodes any scalar as its text: `port: 7751` is the string "7751",
// which the value checks then judge. A null is the empty string.
func (d *decoder) str(path string, n *yaml.Node, v reflect.Value) {
	switch {
	case isNull(n):
		v.SetString("")
	case n.Kind == yaml.ScalarNode:
		v.SetString(n.Value)
	default:
		d.fail(path, n.Line, "want a string, got %s", describe(n))
	}
}

// scalar decodes a boolean, integer or number whose YAML tag is one of tags.
func (d *decoder) scalar(path string, n *yaml.Node, v reflect.Value, want string, tags ...string) {
	ok := n.Kind == yaml.ScalarNode && slices.Contains(tags, n.ShortTag())
	if !ok {
		d.fail(path, n.Line, "want %s, got %s", want, describe(n))
		return
	}
	if v.CanInt() {
		var i int64
		if err := n.Decode(&i); err != nil || v.OverflowInt(i) {
			d.fail(path, n.Line, "%s is out of range", n.Value)
			return
		}
		v.SetInt(i)
		return
	}
	p := reflect.New(v.Type())
	if err := n.Decode(p.Interface()); err != nil {
		d.fail(path, n.Line, "want %s, got %s", want, describe(n))
		return
	}
	v.Set(p.Elem())
}

// duration decodes Go duration text ("10s", "1m30s"). A bare number is
// refused rather than read as nanoseconds.
func (d *decoder) duration(path string, n *yaml.Node, v reflect.Value) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.fail(path, n.Line, "want a duration such as \"10s\" or \"1m30s\", got %s", describe(n))
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.fail(path, n.Line, "want a duration such as \"10s\" or \"1m30s\", got %s", describe(n))
		return
	}
	v.SetInt(int64(dur))
}

// fieldsOf maps a struct's YAML names to field indexes.
func fieldsOf(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			out[name] = i
		}
	}
	return out
}

// suggest names the field a misspelt key was meant to be, when the two
// differ only in case.
func suggest(key string, fields map[string]int) string {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return fmt.Sprintf(" (did you mean %s?)", name)
		}
	}
	return ""
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describe names what a node holds, for "want X, got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing"
	case "!!str":
		return strconv.Quote(n.Value)
	}
	return n.Value
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
