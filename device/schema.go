package device

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"unicode/utf8"
)

// Schema is the small JSON-Schema subset of openhal-0.1 §6 that describes a
// device's value.
type Schema struct {
	Type       string            `json:"type"`
	Minimum    *float64          `json:"minimum,omitempty"`
	Maximum    *float64          `json:"maximum,omitempty"`
	Enum       []any             `json:"enum,omitempty"`
	MaxLength  *int              `json:"maxLength,omitempty"`
	Properties map[string]Schema `json:"properties,omitempty"`
	Unit       string            `json:"unit,omitempty"`
}

// Schema types.
const (
	TypeBoolean = "boolean"
	TypeInteger = "integer"
	TypeNumber  = "number"
	TypeString  = "string"
	TypeObject  = "object"
)

// ValueError says why a value does not fit a schema. Path is empty for the
// value itself and names the property otherwise.
type ValueError struct {
	Path   string
	Reason string // machine-readable: "wrong_type", "out_of_range", ...
	Detail string
}

func (e *ValueError) Error() string {
	if e.Path == "" {
		return e.Detail
	}
	return e.Path + ": " + e.Detail
}

// Validate checks v, a value as encoding/json decodes it into any, against
// the schema. It returns nil or a *ValueError.
func (s Schema) Validate(v any) error { return s.validate("", v) }

func (s Schema) validate(path string, v any) error {
	bad := func(reason, format string, args ...any) error {
		return &ValueError{Path: path, Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	switch s.Type {
	case TypeBoolean:
		if _, ok := v.(bool); !ok {
			return bad("wrong_type", "want a boolean, got %s", typeName(v))
		}
	case TypeInteger, TypeNumber:
		f, ok := v.(float64)
		if !ok {
			return bad("wrong_type", "want %s, got %s", map[string]string{TypeInteger: "an integer", TypeNumber: "a number"}[s.Type], typeName(v))
		}
		if s.Type == TypeInteger && (f != math.Trunc(f) || math.IsInf(f, 0)) {
			return bad("wrong_type", "want an integer, got %v", f)
		}
		if s.Minimum != nil && f < *s.Minimum {
			return bad("out_of_range", "%v is below the minimum %v", f, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return bad("out_of_range", "%v is above the maximum %v", f, *s.Maximum)
		}
	case TypeString:
		str, ok := v.(string)
		if !ok {
			return bad("wrong_type", "want a string, got %s", typeName(v))
		}
		if s.MaxLength != nil && utf8.RuneCountInString(str) > *s.MaxLength {
			return bad("too_long", "string of %d characters is longer than %d", utf8.RuneCountInString(str), *s.MaxLength)
		}
	case TypeObject:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("wrong_type", "want an object, got %s", typeName(v))
		}
		if err := s.validateProperties(path, m); err != nil {
			return err
		}
	default:
		return bad("bad_schema", "schema type %q is not supported", s.Type)
	}
	if len(s.Enum) > 0 && !s.inEnum(v) {
		return bad("not_in_enum", "%v is not one of %v", v, s.Enum)
	}
	return nil
}

func (s Schema) validateProperties(path string, m map[string]any) error {
	if s.Properties == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first error named is the same every time
	for _, k := range keys {
		ps, ok := s.Properties[k]
		if !ok {
			return &ValueError{Path: join(path, k), Reason: "unknown_property", Detail: "no such property"}
		}
		if err := ps.validate(join(path, k), m[k]); err != nil {
			return err
		}
	}
	return nil
}

func (s Schema) inEnum(v any) bool {
	for _, e := range s.Enum {
		if reflect.DeepEqual(normalize(e), normalize(v)) {
			return true
		}
	}
	return false
}

// normalize turns the integer types a Go literal may use in an enum into
// the float64 that encoding/json decodes.
func normalize(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return v
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}
