package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

type waitIn struct {
	Device         string `json:"device" jsonschema:"the device's id"`
	Op             string `json:"op" jsonschema:"the condition: eq, ne, lt, le, gt, ge against value, or changes (any new value)"`
	Value          any    `json:"value,omitempty" jsonschema:"what the device's value is compared with (not for changes)"`
	Quantity       string `json:"quantity,omitempty" jsonschema:"for a sensor of several quantities: which one"`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty" jsonschema:"how long to wait, 1 to 55 seconds (default 30)"`
}

type waitOut struct {
	Met      bool      `json:"met" jsonschema:"whether the condition held before the timeout"`
	Device   string    `json:"device"`
	Value    any       `json:"value" jsonschema:"the value that met the condition, or the last one seen"`
	TS       time.Time `json:"ts"`
	WaitedMs int64     `json:"waitedMs"`
}

// defaultWait is how long wait_for_value waits when not told.
const defaultWait = 30

func (b *Bridge) waitTool(devs []device.Descriptor) toolDef {
	in := inputSchema[waitIn](devs)
	in.Properties["op"].Enum = []any{"eq", "ne", "lt", "le", "gt", "ge", "changes"}
	in.Properties["timeoutSeconds"].Minimum = jsonschema.Ptr(1.0)
	in.Properties["timeoutSeconds"].Maximum = jsonschema.Ptr(float64(maxWait))
	t := &mcp.Tool{
		Name:  toolWait,
		Title: "Wait for a value",
		Description: "Waits until a device's value meets a condition (eq, ne, lt, le, gt, ge against value; or changes), " +
			"at most timeoutSeconds (up to 55). It answers at once when the value already meets it. met=false with the " +
			"last value seen means it did not happen in time: not an error. Devices:" + deviceList(devs),
		InputSchema: in,
		Annotations: &mcp.ToolAnnotations{Title: "Wait for a value", ReadOnlyHint: true, DestructiveHint: jsonschema.Ptr(false), IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}
	return def(t, b.wait)
}

func (b *Bridge) wait(ctx context.Context, _ *mcp.CallToolRequest, in waitIn) (*mcp.CallToolResult, waitOut, error) {
	if in.Op != "changes" && in.Value == nil {
		return nil, waitOut{}, fmt.Errorf("op %q needs a value to compare with", in.Op)
	}
	c, err := b.hub()
	if err != nil {
		return nil, waitOut{}, err
	}
	secs := in.TimeoutSeconds
	if secs == 0 {
		secs = defaultWait
	}
	start := time.Now()
	ch, done := b.watch.add("value:" + in.Device) // before the read: no value falls between
	defer done()
	first, err := c.Read(ctx, in.Device, -1)
	if err != nil {
		return nil, waitOut{}, b.toolError(err, openhal.MethodRead, in.Device)
	}
	cond := condition{op: in.Op, want: in.Value, quantity: in.Quantity, base: first.Value}
	last := first
	if in.Op != "changes" {
		if met, err := cond.holds(first.Value); err != nil || met {
			return b.waited(start, met, first, err)
		}
	}
	timer := time.NewTimer(time.Duration(secs) * time.Second)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, waitOut{}, ctx.Err()
		case <-timer.C:
			return b.waited(start, false, last, nil)
		case raw := <-ch:
			if raw == nil {
				return nil, waitOut{}, errors.New("the connection to the gateway was lost while waiting; try again")
			}
			var v openhal.ValueResult
			if json.Unmarshal(raw, &v) != nil {
				continue
			}
			last = v
			if met, err := cond.holds(v.Value); err != nil || met {
				return b.waited(start, met, v, err)
			}
		}
	}
}

// waited is wait_for_value's answer.
func (b *Bridge) waited(start time.Time, met bool, v openhal.ValueResult, err error) (*mcp.CallToolResult, waitOut, error) {
	if err != nil {
		return nil, waitOut{}, err
	}
	out := waitOut{Met: met, Device: v.Device, Value: v.Value, TS: v.TS, WaitedMs: time.Since(start).Milliseconds()}
	if met {
		return nil, out, nil
	}
	return textResult(fmt.Sprintf("Not met within the timeout: the last value of %s was %s (at %s). Nothing failed; wait again or act on it.",
		v.Device, jsonWords(v.Value), v.TS.Format(time.RFC3339))), out, nil
}

// condition is what wait_for_value waits for.
type condition struct {
	op       string
	want     any
	quantity string
	base     any // the first value, for "changes"
}

// holds reports whether value meets the condition; an error says why the
// condition cannot be decided at all (a quantity the sensor has not, an
// order between things that are not numbers).
func (c condition) holds(value any) (bool, error) {
	if c.op == "changes" {
		return !reflect.DeepEqual(value, c.base), nil
	}
	got, err := c.pick(value)
	if err != nil {
		return false, err
	}
	switch c.op {
	case "eq":
		return reflect.DeepEqual(got, c.want), nil
	case "ne":
		return !reflect.DeepEqual(got, c.want), nil
	}
	g, ok1 := got.(float64)
	w, ok2 := c.want.(float64)
	if !ok1 || !ok2 {
		return false, fmt.Errorf("%s compares numbers; the value is %s and the condition's is %s", c.op, jsonWords(got), jsonWords(c.want))
	}
	switch c.op {
	case "lt":
		return g < w, nil
	case "le":
		return g <= w, nil
	case "gt":
		return g > w, nil
	case "ge":
		return g >= w, nil
	}
	return false, fmt.Errorf("unknown op %q", c.op)
}

// pick is the quantity compared: the value itself, or one property of a
// sensor's object (the only one when there is one and none was named).
func (c condition) pick(value any) (any, error) {
	m, ok := value.(map[string]any)
	if !ok {
		if c.quantity != "" {
			return nil, fmt.Errorf("the value %s has no quantity %q", jsonWords(value), c.quantity)
		}
		return value, nil
	}
	if c.quantity == "" && len(m) == 1 {
		for _, v := range m {
			return v, nil
		}
	}
	if v, ok := m[c.quantity]; ok {
		return v, nil
	}
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("name the quantity to compare: one of %s", strings.Join(names, ", "))
}
