package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
)

var (
	namePattern   = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	envNamePatern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// reservedNames cannot be adapter names: the state directory keeps every
// adapter's own data under adapters/state/, beside the installed folders.
var reservedNames = map[string]bool{"state": true}

// daemonEnv are the variables the daemon always sets (seed 001): passing
// them through from the daemon's environment would override the adapter's
// cleared base, so a manifest cannot ask for them.
var daemonEnv = map[string]bool{"PATH": true, "LANG": true, "HOME": true, "OXIDEPM_ADAPTER_PROTOCOLS": true}

const levels = "read, control_low or control_high"

type validator struct{ errs *Errors }

func (v validator) add(path, format string, args ...any) { v.errs.Add(path, format, args...) }

func (v validator) name(n string) {
	switch {
	case !namePattern.MatchString(n):
		v.add("name", "must match %s, got %q", namePattern, n)
	case reservedNames[n]:
		v.add("name", "%q is reserved", n)
	}
}

func (v validator) version(s string) {
	switch {
	case s == "":
		v.add("version", "required")
	case len(s) > 64:
		v.add("version", "longer than 64 characters")
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		v.add("version", "%q has spaces or control characters", s)
	}
}

func (v validator) kind(k string) {
	if k != adapterproto.KindService && k != adapterproto.KindTool {
		v.add("kind", "want %s or %s, got %q", adapterproto.KindService, adapterproto.KindTool, k)
	}
}

func (v validator) exec(e string) {
	switch {
	case e == "":
		v.add("exec", "required")
	case !localExec(e):
		v.add("exec", "%q leaves the adapter folder", e)
	}
}

func (v validator) envPass(names []string) {
	seen := map[string]bool{}
	for i, n := range names {
		p := fmt.Sprintf("env_pass[%d]", i)
		switch {
		case !envNamePatern.MatchString(n):
			v.add(p, "%q is not an environment variable name", n)
		case daemonEnv[n]:
			v.add(p, "%q is always set by the daemon", n)
		case seen[n]:
			v.add(p, "%q is listed twice", n)
		}
		seen[n] = true
	}
}

// grant checks the level and reads the scope, every bad pattern named.
func (v validator) grant(g *wireGrant) adapterproto.Grant {
	if g == nil {
		v.add("grant", "required")
		return adapterproto.Grant{}
	}
	switch g.Level {
	case "read", "control_low", "control_high":
	case "":
		v.add("grant.level", "required (want %s)", levels)
	case "admin":
		v.add("grant.level", "admin is never granted (want %s)", levels)
	default:
		v.add("grant.level", "want %s, got %q", levels, g.Level)
	}
	out := adapterproto.Grant{Level: g.Level}
	raw := bytes.TrimSpace(g.Scope)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		v.add("grant.scope", `required ("all" or a list of device ids and prefix.* patterns)`)
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil || s != "all" {
			v.add("grant.scope", `want "all" or a list of device ids and prefix.* patterns, got %s`, describe(raw))
		}
		out.Scope = adapterproto.ScopeList{All: true}
	case raw[0] == '[':
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			v.add("grant.scope", "%s is not a list", describe(raw))
			break
		}
		pats := make([]string, 0, len(list))
		for i, e := range list {
			p := fmt.Sprintf("grant.scope[%d]", i)
			var s string
			if json.Unmarshal(e, &s) != nil {
				v.add(p, "want a string, got %s", describe(e))
				continue
			}
			if !adapterproto.ValidPattern(s) {
				v.add(p, "%q is not a device id or prefix.* pattern", s)
				continue
			}
			pats = append(pats, s)
		}
		out.Scope = adapterproto.ScopeList{Patterns: pats}
	default:
		v.add("grant.scope", `want "all" or a list of device ids and prefix.* patterns, got %s`, describe(raw))
	}
	return out
}

// devices checks the declared devices as the Hub will publish them:
// "<adapter>.<id>". The daemon owns source, state and fault (an adapter's
// devices are "adapter:<name>", and their state follows the adapter's), so
// a manifest that sets them is refused rather than silently overridden.
func (v validator) devices(adapter string, ds []device.Descriptor) {
	seen := map[string]int{}
	for i, d := range ds {
		v.device(fmt.Sprintf("devices[%d]", i), adapter, d)
		if d.ID != "" {
			if j, ok := seen[d.ID]; ok {
				v.add(fmt.Sprintf("devices[%d].id", i), "%q is declared twice (also devices[%d])", d.ID, j)
			} else {
				seen[d.ID] = i
			}
		}
	}
}

// CheckDevice checks one descriptor that adapter provides, as the manifest
// declares it or as devices.add sends it at run time (with its unprefixed
// id). The supervisor uses it for both, so that the two ways of adding a
// device follow the same rules. It returns nil or Errors, paths under
// path.
func CheckDevice(path, adapter string, d device.Descriptor) error {
	var errs Errors
	validator{errs: &errs}.device(path, adapter, d)
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func (v validator) device(p, adapter string, d device.Descriptor) {
	switch {
	case d.ID == "":
		v.add(p+".id", "required")
	case !device.ValidID(d.ID):
		v.add(p+".id", "%q is not a device id (want ^[a-z0-9][a-z0-9_.-]{0,63}$)", d.ID)
	case namePattern.MatchString(adapter) && !device.ValidID(adapter+"."+d.ID):
		v.add(p+".id", "published as %q, longer than a device id may be (64)", adapter+"."+d.ID)
	}
	switch d.Kind {
	case device.KindGPIOInput, device.KindGPIOOutput, device.KindPWM, device.KindSensor, device.KindSerial:
	default:
		if rest, ok := strings.CutPrefix(d.Kind, "x."); !ok || !device.ValidID(rest) {
			v.add(p+".kind", "want gpio.input, gpio.output, pwm, sensor, serial or x.<name>, got %q", d.Kind)
		}
	}
	if d.Source != "" {
		v.add(p+".source", "set by the daemon (adapter:%s); leave it out", adapter)
	}
	if d.State != "" {
		v.add(p+".state", "set by the daemon; leave it out")
	}
	if d.Fault != "" {
		v.add(p+".fault", "set by the daemon; leave it out")
	}
	switch d.Access {
	case device.AccessRead, device.AccessWrite, device.AccessReadWrite:
	default:
		v.add(p+".access", "want r, w or rw, got %q", d.Access)
	}
	switch d.Risk {
	case device.RiskLow, device.RiskHigh:
	default:
		v.add(p+".risk", "want low or high, got %q", d.Risk)
	}
	schemaOK := v.schema(p+".schema", d.Schema)
	if d.Safe != nil {
		switch {
		case !d.Access.CanWrite():
			v.add(p+".safe", "a device that cannot be written has no safe value")
		case schemaOK:
			if err := d.Schema.Validate(d.Safe); err != nil {
				v.add(p+".safe", "does not fit the schema: %v", err)
			}
		}
	}
	for i, t := range d.Tags {
		if t == "" {
			v.add(fmt.Sprintf("%s.tags[%d]", p, i), "empty")
		}
	}
}

// schema checks the openhal-0.1 §6 subset: each keyword only where its
// type gives it a meaning, so that a bound on a string, say, is not
// silently ignored. It reports whether the schema can check values.
func (v validator) schema(p string, s device.Schema) bool {
	n := len(*v.errs)
	numeric := s.Type == device.TypeNumber || s.Type == device.TypeInteger
	switch s.Type {
	case device.TypeBoolean, device.TypeInteger, device.TypeNumber, device.TypeString, device.TypeObject:
	case "":
		v.add(p+".type", "required (want boolean, integer, number, string or object)")
		return false // which keywords fit depends on the type
	default:
		v.add(p+".type", "want boolean, integer, number, string or object, got %q", s.Type)
		return false
	}
	for _, b := range []struct {
		name string
		v    *float64
	}{{"minimum", s.Minimum}, {"maximum", s.Maximum}} {
		switch {
		case b.v == nil:
		case !numeric:
			v.add(p+"."+b.name, "only for number and integer")
		case s.Type == device.TypeInteger && *b.v != math.Trunc(*b.v):
			v.add(p+"."+b.name, "%v is not an integer", *b.v)
		}
	}
	if numeric && s.Minimum != nil && s.Maximum != nil && *s.Minimum > *s.Maximum {
		v.add(p+".maximum", "%v is below minimum %v", *s.Maximum, *s.Minimum)
	}
	if s.MaxLength != nil {
		switch {
		case s.Type != device.TypeString:
			v.add(p+".maxLength", "only for string")
		case *s.MaxLength < 0:
			v.add(p+".maxLength", "must not be negative")
		}
	}
	if s.Properties != nil && s.Type != device.TypeObject {
		v.add(p+".properties", "only for object")
	}
	if s.Type == device.TypeObject {
		if len(s.Properties) == 0 {
			v.add(p+".properties", "an object needs at least one property")
		}
		if len(s.Enum) > 0 {
			v.add(p+".enum", "not for object")
		}
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v.schema(p+".properties."+k, s.Properties[k])
		}
	}
	if len(*v.errs) == n && s.Type != device.TypeObject {
		plain := s
		plain.Enum = nil
		for i, e := range s.Enum {
			if err := plain.Validate(e); err != nil {
				v.add(fmt.Sprintf("%s.enum[%d]", p, i), "does not fit the schema: %v", err)
			}
		}
	}
	return len(*v.errs) == n
}
