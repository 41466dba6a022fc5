package board

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
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
	// left is how many more values the decoder may visit. An alias
	// (*name) is followed where it stands, so a file of a few lines
	// whose anchors nest aliases ("billion laughs") would otherwise be
	// walked for ever.
	left int
}

// maxValues bounds the values of one file, aliases expanded: far more
// than any board has, far less than takes a noticeable time.
const maxValues = 100_000

type fault struct {
	FieldError
	line int
}

func newDecoder() *decoder {
	return &decoder{lines: map[string]int{}, bad: map[string]bool{}, left: maxValues}
}

// errTooMany is the fault of a file past maxValues.
var errTooMany = fmt.Errorf("more than %d values once its aliases (*name) are expanded: refused rather than read for ever", maxValues)

// spend counts one value against maxValues; past it, the first value
// refused carries the fault and the rest are skipped.
func (d *decoder) spend(path string, n *yaml.Node) bool {
	d.left--
	if d.left == -1 {
		d.fail(path, n.Line, "%v", errTooMany)
	}
	return d.left >= 0
}

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
// without a line (a required field that is missing) come first, or just
// after the line of the section that lacks them.
func (d *decoder) result(values Errors) Errors {
	var kept []fault
	for _, e := range values {
		if !d.spoilt(e.Path) {
			kept = append(kept, fault{e, d.lineOf(e.Path)})
		}
	}
	d.faults = append(d.faults, kept...)
	sort.SliceStable(d.faults, func(i, j int) bool { return d.faults[i].line < d.faults[j].line })
	var out Errors
	for _, f := range d.faults {
		out = append(out, f.FieldError)
	}
	return out
}

// lineOf returns the line of path in the file, or of the nearest section
// holding it, or 0.
func (d *decoder) lineOf(path string) int {
	for p := path; p != ""; p = parent(p) {
		if line, ok := d.lines[p]; ok {
			return line
		}
	}
	return 0
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
	for p := path; p != ""; p = parent(p) {
		if d.bad[p] {
			return true
		}
	}
	return false
}

// parent returns the path of the section or list holding path:
// "devices.sim.heater.rules.interlock[0]" is held by
// "devices.sim.heater.rules.interlock". A device id has dots of its own,
// so its parents include paths that name nothing; they are never bad.
func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func (d *decoder) fail(path string, line int, format string, args ...any) {
	d.bad[path] = true
	d.faults = append(d.faults, fault{FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}, line})
}

var durationType = reflect.TypeOf(time.Duration(0))

// nodeDecoder is a type with a form of its own in the file, such as a
// field that is either a word or a mapping; it reports its faults to d.
type nodeDecoder interface {
	decodeNode(d *decoder, path string, n *yaml.Node)
}

// value decodes n into v, whose field path is path.
func (d *decoder) value(path string, n *yaml.Node, v reflect.Value) {
	if !d.spend(path, n) {
		return
	}
	d.lines[path] = n.Line
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if v.CanAddr() {
		if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
			nd.decodeNode(d, path, n)
			return
		}
	}
	switch {
	case v.Type() == durationType:
		d.duration(path, n, v)
	case v.Kind() == reflect.Pointer:
		d.pointer(path, n, v)
	case v.Kind() == reflect.Map:
		d.dict(path, n, v)
	case v.Kind() == reflect.Slice:
		d.list(path, n, v)
	case v.Kind() == reflect.Interface:
		d.plain(path, n, v)
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

// pointer decodes an optional field: it stays nil when the file leaves
// it out, and when its value has a fault. A null is judged by the type
// pointed to (a number must be given, a string may be empty).
func (d *decoder) pointer(path string, n *yaml.Node, v reflect.Value) {
	p := reflect.New(v.Type().Elem())
	before := len(d.faults)
	d.value(path, n, p.Elem())
	if len(d.faults) == before {
		v.Set(p)
	}
}

// dict decodes a mapping whose keys are names of the user's choosing
// (device ids) into a map from string. A null leaves it as it was.
func (d *decoder) dict(path string, n *yaml.Node, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "want a mapping, got %s", describe(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			d.fail(path, key.Line, "want a name as key, got %s", describe(key))
			continue
		}
		p := join(path, key.Value)
		if first, ok := seen[key.Value]; ok {
			d.fail(p, key.Line, "set twice (first on line %d)", first)
			continue
		}
		seen[key.Value] = key.Line
		k := reflect.ValueOf(key.Value)
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(k); old.IsValid() {
			elem.Set(old)
		}
		d.value(p, val, elem)
		v.SetMapIndex(k, elem)
	}
}

// list decodes a sequence; item i has the path "path[i]". A null is a
// fault: "nothing" could mean either "none" or "keep the default", and a
// safety setting must not be guessed.
func (d *decoder) list(path string, n *yaml.Node, v reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		d.fail(path, n.Line, "want a list ([] for none), got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.value(fmt.Sprintf("%s[%d]", path, i), item, s.Index(i))
	}
	v.Set(s)
}

// plain decodes a device value, whose type only the device's schema
// tells, into what encoding/json would make of the same value in JSON:
// bool, float64, string, map[string]any, []any. Null is refused: a
// device value is never nothing.
func (d *decoder) plain(path string, n *yaml.Node, v reflect.Value) {
	x, err := plainValue(n, &d.left)
	switch {
	case err != nil:
		d.fail(path, n.Line, "%v", err)
	case x == nil:
		d.fail(path, n.Line, "want a value, got nothing")
	default:
		v.Set(reflect.ValueOf(x))
	}
}

// plainValue converts n, counting each value against *left.
func plainValue(n *yaml.Node, left *int) (any, error) {
	if *left--; *left < 0 {
		return nil, errTooMany
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			x, err := plainValue(item, left)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			if key.Kind != yaml.ScalarNode || key.ShortTag() != "!!str" {
				return nil, fmt.Errorf("line %d: want a name as key, got %s", key.Line, describe(key))
			}
			if _, dup := out[key.Value]; dup {
				return nil, fmt.Errorf("line %d: %s set twice", key.Line, key.Value)
			}
			x, err := plainValue(n.Content[i+1], left)
			if err != nil {
				return nil, err
			}
			out[key.Value] = x
		}
		return out, nil
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		err := n.Decode(&b)
		return b, err
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("want a finite number, got %s", n.Value)
		}
		return f, nil
	}
	return n.Value, nil // a string, or text YAML would read as a timestamp
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

// suggest names the field a misspelt key was meant to be: one that
// differs only in case (maxInflight), else the one closest in spelling
// when it is close enough and no other is as close (htp, boad).
func suggest(key string, fields map[string]int) string {
	names := slices.Sorted(maps.Keys(fields))
	for _, name := range names {
		if strings.EqualFold(name, key) {
			return fmt.Sprintf(" (did you mean %s?)", name)
		}
	}
	best, bestDist, ties := "", 0, 0
	for _, name := range names {
		dist := editDistance(strings.ToLower(key), strings.ToLower(name))
		switch {
		case best == "" || dist < bestDist:
			best, bestDist, ties = name, dist, 0
		case dist == bestDist:
			ties++
		}
	}
	// One edit in a short name, two in a longer one: further than that
	// the guess is more likely wrong than helpful.
	if best == "" || ties > 0 || bestDist > max(1, min(2, len(key)/4)) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// editDistance is the Levenshtein distance of a and b, in bytes (field
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
