package manifest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openhal/gateway/adapterproto"
)

const validManifest = `{"name":"notifier","version":"0.1.0","kind":"service",
 "exec":"bin/notifier","args":[],
 "env_pass":["NOTIFIER_URL"],
 "grant":{"level":"read","scope":"all"},
 "devices":[{"id":"temp","kind":"sensor","access":"r","risk":"low",
   "schema":{"type":"number","minimum":-40,"maximum":125,"unit":"Cel"}},
  {"id":"relay","kind":"gpio.output","access":"rw","risk":"high",
   "schema":{"type":"boolean"},"safe":false,"tags":["bench"]}],
 "timeouts":{"request_ms":10000}}`

// writeFolder makes an adapter folder with the manifest text and an
// executable bin/notifier.
func writeFolder(t *testing.T, manifest string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "bin/notifier", "#!/bin/sh\nexec ./notifier.py\n", 0o755)
	writeFile(t, dir, "notifier.py", "print('hi')\n", 0o644)
	writeFile(t, dir, FileName, manifest, 0o644)
	return dir
}

func writeFile(t *testing.T, dir, rel, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

// edit returns validManifest with f applied to its decoded form.
func edit(t *testing.T, f func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(validManifest), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dev(m map[string]any, i int) map[string]any { return m["devices"].([]any)[i].(map[string]any) }

func schema(m map[string]any, i int) map[string]any { return dev(m, i)["schema"].(map[string]any) }

func TestReadDirValid(t *testing.T) {
	m, err := ReadDir(writeFolder(t, validManifest))
	if err != nil {
		t.Fatalf("ReadDir: %v", err)
	}
	if m.Name != "notifier" || m.Kind != adapterproto.KindService || m.Exec != "bin/notifier" {
		t.Errorf("manifest = %+v", m)
	}
	if !m.Grant.Scope.All || m.Grant.Level != "read" {
		t.Errorf("grant = %+v", m.Grant)
	}
	if len(m.Devices) != 2 || m.Devices[1].Safe != false || m.Timeouts.RequestMs != 10000 {
		t.Errorf("devices/timeouts = %+v %+v", m.Devices, m.Timeouts)
	}
	if !reflect.DeepEqual(m.EnvPass, []string{"NOTIFIER_URL"}) {
		t.Errorf("env_pass = %v", m.EnvPass)
	}
}

func TestDefaultsAndScopeList(t *testing.T) {
	text := edit(t, func(m map[string]any) {
		delete(m, "timeouts")
		m["grant"] = map[string]any{"level": "control_low", "scope": []any{"notifier.relay", "sim.*"}}
	})
	m, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if m.Timeouts.RequestMs != DefaultRequestMs {
		t.Errorf("request_ms = %d, want default %d", m.Timeouts.RequestMs, DefaultRequestMs)
	}
	if m.Grant.Scope.All || !reflect.DeepEqual(m.Grant.Scope.Patterns, []string{"notifier.relay", "sim.*"}) {
		t.Errorf("scope = %+v", m.Grant.Scope)
	}
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(m map[string]any)
		files func(t *testing.T, dir string)
		want  FieldError
	}{
		{"name case", func(m map[string]any) { m["name"] = "Notifier" }, nil,
			FieldError{Path: "name", Msg: `must match ^[a-z][a-z0-9-]{0,31}$, got "Notifier"`}},
		{"name missing", func(m map[string]any) { delete(m, "name") }, nil,
			FieldError{Path: "name", Msg: `must match ^[a-z][a-z0-9-]{0,31}$, got ""`}},
		{"name too long", func(m map[string]any) { m["name"] = strings.Repeat("a", 33) }, nil,
			FieldError{Path: "name", Msg: `must match ^[a-z][a-z0-9-]{0,31}$, got "` + strings.Repeat("a", 33) + `"`}},
		{"name reserved", func(m map[string]any) { m["name"] = "state" }, nil,
			FieldError{Path: "name", Msg: `"state" is reserved`}},
		{"version missing", func(m map[string]any) { delete(m, "version") }, nil,
			FieldError{Path: "version", Msg: "required"}},
		{"version space", func(m map[string]any) { m["version"] = "1 0" }, nil,
			FieldError{Path: "version", Msg: `"1 0" has spaces or control characters`}},
		{"kind", func(m map[string]any) { m["kind"] = "daemon" }, nil,
			FieldError{Path: "kind", Msg: `want service or tool, got "daemon"`}},
		{"kind type", func(m map[string]any) { m["kind"] = 3 }, nil,
			FieldError{Path: "kind", Msg: `want a string, got 3`}},
		{"unknown field", func(m map[string]any) { m["extra"] = true }, nil,
			FieldError{Path: "extra", Msg: "unknown field"}},
		{"unknown case", func(m map[string]any) { m["Name"] = "notifier" }, nil,
			FieldError{Path: "Name", Msg: "unknown field"}},
		{"unknown nested", func(m map[string]any) { m["grant"].(map[string]any)["until"] = 1 }, nil,
			FieldError{Path: "grant.until", Msg: "unknown field"}},
		{"unknown in device", func(m map[string]any) { dev(m, 1)["initial"] = true }, nil,
			FieldError{Path: "devices[1].initial", Msg: "unknown field"}},
		{"unknown in schema", func(m map[string]any) { schema(m, 0)["format"] = "x" }, nil,
			FieldError{Path: "devices[0].schema.format", Msg: "unknown field"}},
		{"unknown in timeouts", func(m map[string]any) { m["timeouts"].(map[string]any)["ping_ms"] = 1 }, nil,
			FieldError{Path: "timeouts.ping_ms", Msg: "unknown field"}},
		{"args type", func(m map[string]any) { m["args"] = []any{"a", 2} }, nil,
			FieldError{Path: "args[1]", Msg: "want a string, got 2"}},
		{"devices type", func(m map[string]any) { m["devices"] = "none" }, nil,
			FieldError{Path: "devices", Msg: `want a list, got "none"`}},
		{"grant missing", func(m map[string]any) { delete(m, "grant") }, nil,
			FieldError{Path: "grant", Msg: "required"}},
		{"grant admin", func(m map[string]any) { m["grant"].(map[string]any)["level"] = "admin" }, nil,
			FieldError{Path: "grant.level", Msg: "admin is never granted (want read, control_low or control_high)"}},
		{"grant level other", func(m map[string]any) { m["grant"].(map[string]any)["level"] = "write" }, nil,
			FieldError{Path: "grant.level", Msg: `want read, control_low or control_high, got "write"`}},
		{"grant level missing", func(m map[string]any) { delete(m["grant"].(map[string]any), "level") }, nil,
			FieldError{Path: "grant.level", Msg: "required (want read, control_low or control_high)"}},
		{"scope pattern", func(m map[string]any) { m["grant"].(map[string]any)["scope"] = []any{"sim.*", "bad id"} }, nil,
			FieldError{Path: "grant.scope[1]", Msg: `"bad id" is not a device id or prefix.* pattern`}},
		{"scope string", func(m map[string]any) { m["grant"].(map[string]any)["scope"] = "some" }, nil,
			FieldError{Path: "grant.scope", Msg: `want "all" or a list of device ids and prefix.* patterns, got "some"`}},
		{"scope item type", func(m map[string]any) { m["grant"].(map[string]any)["scope"] = []any{1} }, nil,
			FieldError{Path: "grant.scope[0]", Msg: "want a string, got 1"}},
		{"scope missing", func(m map[string]any) { delete(m["grant"].(map[string]any), "scope") }, nil,
			FieldError{Path: "grant.scope", Msg: `required ("all" or a list of device ids and prefix.* patterns)`}},
		{"exec leaves", func(m map[string]any) { m["exec"] = "../x" }, nil,
			FieldError{Path: "exec", Msg: `"../x" leaves the adapter folder`}},
		{"exec absolute", func(m map[string]any) { m["exec"] = "/bin/sh" }, nil,
			FieldError{Path: "exec", Msg: `"/bin/sh" leaves the adapter folder`}},
		{"exec missing", func(m map[string]any) { delete(m, "exec") }, nil,
			FieldError{Path: "exec", Msg: "required"}},
		{"exec not found", func(m map[string]any) { m["exec"] = "bin/other" }, nil,
			FieldError{Path: "exec", Msg: "not found in the folder"}},
		{"exec not executable", func(m map[string]any) { m["exec"] = "notifier.py" }, nil,
			FieldError{Path: "exec", Msg: "not executable"}},
		{"exec directory", func(m map[string]any) { m["exec"] = "bin" }, nil,
			FieldError{Path: "exec", Msg: "is a directory"}},
		{"exec symlink", nil, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "bin/notifier"))
			if err := os.Symlink("/bin/sh", filepath.Join(dir, "bin/notifier")); err != nil {
				t.Fatal(err)
			}
		}, FieldError{Path: "exec", Msg: "is a symlink (copy the file into the folder)"}},
		{"symlink elsewhere", nil, func(t *testing.T, dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "data")); err != nil {
				t.Fatal(err)
			}
		}, FieldError{Path: "", Msg: `"data" is a symlink: symlinks are refused, copy the file into the folder`}},
		{"env PATH", func(m map[string]any) { m["env_pass"] = []any{"PATH"} }, nil,
			FieldError{Path: "env_pass[0]", Msg: `"PATH" is always set by the daemon`}},
		{"env protocols", func(m map[string]any) { m["env_pass"] = []any{"A", "OXIDEPM_ADAPTER_PROTOCOLS"} }, nil,
			FieldError{Path: "env_pass[1]", Msg: `"OXIDEPM_ADAPTER_PROTOCOLS" is always set by the daemon`}},
		{"env name", func(m map[string]any) { m["env_pass"] = []any{"A=B"} }, nil,
			FieldError{Path: "env_pass[0]", Msg: `"A=B" is not an environment variable name`}},
		{"env twice", func(m map[string]any) { m["env_pass"] = []any{"A", "B", "A"} }, nil,
			FieldError{Path: "env_pass[2]", Msg: `"A" is listed twice`}},
		{"device id", func(m map[string]any) { dev(m, 0)["id"] = "Temp" }, nil,
			FieldError{Path: "devices[0].id", Msg: `"Temp" is not a device id (want ^[a-z0-9][a-z0-9_.-]{0,63}$)`}},
		{"device id missing", func(m map[string]any) { delete(dev(m, 0), "id") }, nil,
			FieldError{Path: "devices[0].id", Msg: "required"}},
		{"device id too long once prefixed", func(m map[string]any) { dev(m, 0)["id"] = strings.Repeat("a", 60) }, nil,
			FieldError{Path: "devices[0].id", Msg: `published as "notifier.` + strings.Repeat("a", 60) + `", longer than a device id may be (64)`}},
		{"device id twice", func(m map[string]any) { dev(m, 1)["id"] = "temp" }, nil,
			FieldError{Path: "devices[1].id", Msg: `"temp" is declared twice (also devices[0])`}},
		{"device kind", func(m map[string]any) { dev(m, 0)["kind"] = "thermometer" }, nil,
			FieldError{Path: "devices[0].kind", Msg: `want gpio.input, gpio.output, pwm, sensor, serial or x.<name>, got "thermometer"`}},
		{"device source", func(m map[string]any) { dev(m, 0)["source"] = "board" }, nil,
			FieldError{Path: "devices[0].source", Msg: "set by the daemon (adapter:notifier); leave it out"}},
		{"device state", func(m map[string]any) { dev(m, 0)["state"] = "ok" }, nil,
			FieldError{Path: "devices[0].state", Msg: "set by the daemon; leave it out"}},
		{"device access", func(m map[string]any) { dev(m, 0)["access"] = "x" }, nil,
			FieldError{Path: "devices[0].access", Msg: `want r, w or rw, got "x"`}},
		{"device risk", func(m map[string]any) { delete(dev(m, 0), "risk") }, nil,
			FieldError{Path: "devices[0].risk", Msg: `want low or high, got ""`}},
		{"device safe read-only", func(m map[string]any) { dev(m, 0)["safe"] = 0 }, nil,
			FieldError{Path: "devices[0].safe", Msg: "a device that cannot be written has no safe value"}},
		{"device safe type", func(m map[string]any) { dev(m, 1)["safe"] = "off" }, nil,
			FieldError{Path: "devices[1].safe", Msg: "does not fit the schema: want a boolean, got a string"}},
		{"device tag", func(m map[string]any) { dev(m, 1)["tags"] = []any{""} }, nil,
			FieldError{Path: "devices[1].tags[0]", Msg: "empty"}},
		{"schema type", func(m map[string]any) { schema(m, 0)["type"] = "float" }, nil,
			FieldError{Path: "devices[0].schema.type", Msg: `want boolean, integer, number, string or object, got "float"`}},
		{"schema type missing", func(m map[string]any) { delete(schema(m, 1), "type") }, nil,
			FieldError{Path: "devices[1].schema.type", Msg: "required (want boolean, integer, number, string or object)"}},
		{"schema bounds", func(m map[string]any) { schema(m, 0)["maximum"] = -50 }, nil,
			FieldError{Path: "devices[0].schema.maximum", Msg: "-50 is below minimum -40"}},
		{"schema bound on bool", func(m map[string]any) { schema(m, 1)["minimum"] = 0 }, nil,
			FieldError{Path: "devices[1].schema.minimum", Msg: "only for number and integer"}},
		{"schema bound type", func(m map[string]any) { schema(m, 0)["minimum"] = "low" }, nil,
			FieldError{Path: "devices[0].schema.minimum", Msg: `want a number, got "low"`}},
		{"schema maxLength", func(m map[string]any) { schema(m, 1)["maxLength"] = 3 }, nil,
			FieldError{Path: "devices[1].schema.maxLength", Msg: "only for string"}},
		{"schema enum", func(m map[string]any) { schema(m, 0)["enum"] = []any{1, "x"} }, nil,
			FieldError{Path: "devices[0].schema.enum[1]", Msg: "does not fit the schema: want a number, got a string"}},
		{"schema object empty", func(m map[string]any) {
			schema(m, 0)["type"] = "object"
			delete(schema(m, 0), "minimum")
			delete(schema(m, 0), "maximum")
		}, nil,
			FieldError{Path: "devices[0].schema.properties", Msg: "an object needs at least one property"}},
		{"schema nested", func(m map[string]any) {
			dev(m, 0)["schema"] = map[string]any{"type": "object", "properties": map[string]any{
				"t": map[string]any{"type": "number"}, "h": map[string]any{"type": "percent"}}}
		}, nil, FieldError{Path: "devices[0].schema.properties.h.type", Msg: `want boolean, integer, number, string or object, got "percent"`}},
		{"request_ms zero", func(m map[string]any) { m["timeouts"] = map[string]any{"request_ms": 0} }, nil,
			FieldError{Path: "timeouts.request_ms", Msg: "must be positive, got 0"}},
		{"request_ms fraction", func(m map[string]any) { m["timeouts"] = map[string]any{"request_ms": 1.5} }, nil,
			FieldError{Path: "timeouts.request_ms", Msg: "want an integer, got 1.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := validManifest
			if tt.edit != nil {
				text = edit(t, tt.edit)
			}
			dir := writeFolder(t, text)
			if tt.files != nil {
				tt.files(t, dir)
			}
			_, err := ReadDir(dir)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("ReadDir error = %v, want Errors", err)
			}
			if len(errs) != 1 || errs[0] != tt.want {
				t.Errorf("errors:\n%v\nwant:\n%v", errs, tt.want)
			}
		})
	}
}

func TestManyFaultsAtOnce(t *testing.T) {
	text := edit(t, func(m map[string]any) {
		m["name"] = "Notifier"
		m["kind"] = "daemon"
		m["grant"] = map[string]any{"level": "admin", "scope": []any{"ok.*", "bad id"}}
		m["exec"] = "../x"
		m["env_pass"] = []any{"PATH"}
		dev(m, 0)["id"] = "Bad"
		schema(m, 1)["type"] = "bit"
		m["timeouts"] = map[string]any{"request_ms": -1}
	})
	_, err := ReadDir(writeFolder(t, text))
	want := strings.Join([]string{
		`name: must match ^[a-z][a-z0-9-]{0,31}$, got "Notifier"`,
		`kind: want service or tool, got "daemon"`,
		`exec: "../x" leaves the adapter folder`,
		`env_pass[0]: "PATH" is always set by the daemon`,
		`grant.level: admin is never granted (want read, control_low or control_high)`,
		`grant.scope[1]: "bad id" is not a device id or prefix.* pattern`,
		`devices[0].id: "Bad" is not a device id (want ^[a-z0-9][a-z0-9_.-]{0,63}$)`,
		`devices[1].schema.type: want boolean, integer, number, string or object, got "bit"`,
		`timeouts.request_ms: must be positive, got -1`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

func TestShapeFaultsAtOnce(t *testing.T) {
	// Unknown fields and wrong types anywhere are all named, first, and
	// the values of the other fields are still judged; a field of the
	// wrong type is not judged again as a value.
	text := edit(t, func(m map[string]any) {
		m["extra"] = 1
		m["args"] = "x"
		m["kind"] = 3
		m["name"] = "Notifier"
		dev(m, 0)["colour"] = "red"
		schema(m, 1)["maxLength"] = "3"
		schema(m, 1)["type"] = "bit"
	})
	_, err := Parse([]byte(text))
	want := strings.Join([]string{
		`args: want a list, got "x"`,
		`devices[0].colour: unknown field`,
		`devices[1].schema.maxLength: want an integer, got "3"`,
		`extra: unknown field`,
		`kind: want a string, got 3`,
		`name: must match ^[a-z][a-z0-9-]{0,31}$, got "Notifier"`,
		`devices[1].schema.type: want boolean, integer, number, string or object, got "bit"`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

func TestDuplicateKeys(t *testing.T) {
	text := strings.Replace(validManifest, `"kind":"service",`, `"kind":"service","kind":"tool",`, 1)
	text = strings.Replace(text, `"id":"temp",`, `"id":"temp","id":"t2",`, 1)
	_, err := Parse([]byte(text))
	want := "kind: given twice\ndevices[0].id: given twice"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

func TestSyntaxError(t *testing.T) {
	for _, text := range []string{`{"name":`, `[]`, `"x"`, `{"name":"a"} {}`} {
		_, err := Parse([]byte(text))
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Path != "" {
			t.Errorf("Parse(%s) = %v, want one fault of the whole file", text, err)
		}
	}
}

func TestCheckDevice(t *testing.T) {
	var m Manifest
	if err := json.Unmarshal([]byte(validManifest), &m); err != nil {
		t.Fatal(err)
	}
	if err := CheckDevice("device", "notifier", m.Devices[0]); err != nil {
		t.Errorf("CheckDevice(valid) = %v", err)
	}
	d := m.Devices[0]
	d.ID = ""
	if err := CheckDevice("device", "notifier", d); err == nil || err.Error() != "device.id: required" {
		t.Errorf("CheckDevice(no id) = %v", err)
	}
}
