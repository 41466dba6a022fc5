package manifest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// checkShape walks raw JSON against the Go type it will be decoded into
// and reports, with their paths, every unknown field and every value of
// the wrong JSON type. encoding/json stops at the first fault and names
// neither an unknown field's place nor an array index; an author needs
// both. Field names must match their json tags exactly: encoding/json's
// case-insensitive match would accept "Name" for "name", which a strict
// manifest does not.
//
// Types that decode themselves (json.Unmarshaler) and interfaces are
// leaves: they are decoded alone, and a failure is reported at their path.
func checkShape(path string, raw json.RawMessage, t reflect.Type, errs *Errors) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return // encoding/json leaves the zero value; validation judges it
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		leaf(path, raw, t, errs)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := members(path, raw, errs)
		if !ok {
			return
		}
		fields := jsonFields(t)
		for _, m := range obj {
			f, ok := fields[m.key]
			if !ok {
				errs.Add(join(path, m.key), "unknown field")
				continue
			}
			checkShape(join(path, m.key), m.value, f.Type, errs)
		}
	case reflect.Slice:
		var list []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
			errs.Add(path, "want a list, got %s", describe(raw))
			return
		}
		for i, e := range list {
			checkShape(path+"["+strconv.Itoa(i)+"]", e, t.Elem(), errs)
		}
	case reflect.Map:
		obj, ok := members(path, raw, errs)
		if !ok {
			return
		}
		for _, m := range obj {
			checkShape(join(path, m.key), m.value, t.Elem(), errs)
		}
	default:
		leaf(path, raw, t, errs)
	}
}

type member struct {
	key   string
	value json.RawMessage
}

// members reads a JSON object's members sorted by key, so that faults come
// in a stable order. A key given twice is a fault: encoding/json would
// silently keep the last, and a manifest whose meaning depends on which
// copy a reader keeps is ambiguous.
func members(path string, raw json.RawMessage, errs *Errors) ([]member, bool) {
	if raw[0] != '{' {
		errs.Add(path, "want an object, got %s", describe(raw))
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		errs.Add(path, "%v", err)
		return nil, false
	}
	var list []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			errs.Add(path, "%v", err)
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			errs.Add(join(path, key), "%v", err)
			return nil, false
		}
		if seen[key] {
			errs.Add(join(path, key), "given twice")
			continue
		}
		seen[key] = true
		list = append(list, member{key, v})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].key < list[j].key })
	return list, true
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func leaf(path string, raw json.RawMessage, t reflect.Type, errs *Errors) {
	v := reflect.New(t).Interface()
	if err := json.Unmarshal(raw, v); err != nil {
		switch t.Kind() {
		case reflect.String:
			errs.Add(path, "want a string, got %s", describe(raw))
		case reflect.Int, reflect.Int64, reflect.Int32:
			errs.Add(path, "want an integer, got %s", describe(raw))
		case reflect.Float64:
			errs.Add(path, "want a number, got %s", describe(raw))
		case reflect.Bool:
			errs.Add(path, "want true or false, got %s", describe(raw))
		default:
			errs.Add(path, "%v", err)
		}
	}
}

// jsonFields maps the json names of t's exported fields to the fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	m := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f
	}
	return m
}

// describe names a JSON value briefly for a message: its text when short,
// its kind otherwise.
func describe(raw json.RawMessage) string {
	if len(raw) <= 40 {
		return string(raw)
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a long string"
	}
	return "a long value"
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
