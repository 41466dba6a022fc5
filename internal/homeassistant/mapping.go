package homeassistant

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"

	"github.com/openhal/gateway/device"
)

// maxState is Home Assistant's longest state (MAX_LENGTH_STATE_STATE, 255
// characters); the text platform refuses a larger max (core's mqtt
// text.py, valid_text_size_configuration), and a longer state is an
// error, so string values are cut to it by their value template.
const maxState = 255

// approvalNote ends the name of a high-risk writable device: a write from
// Home Assistant becomes a confirmation request that an operator approves
// in the console, and the entity keeps showing the real value until then.
const approvalNote = " (waits for approval)"

// mapper builds the components of one gateway's devices.
type mapper struct {
	t  Topics
	gw string
}

// device returns the components of one device, or why it has none.
func (m mapper) device(d device.Descriptor) ([]component, string) {
	if !device.ValidID(d.ID) {
		return nil, fmt.Sprintf("device id %q is not a valid id", d.ID)
	}
	s := d.Schema
	switch {
	case d.Kind == device.KindGPIOOutput && s.Type == device.TypeBoolean && d.Access.CanWrite():
		return []component{m.switchOf(d)}, ""
	case (d.Kind == device.KindGPIOOutput || d.Kind == device.KindGPIOInput) && s.Type == device.TypeBoolean:
		return []component{m.binarySensorOf(d)}, ""
	case d.Kind == device.KindSensor && s.Type == device.TypeObject:
		return m.sensorsOf(d)
	case d.Kind == device.KindSensor && isNumeric(s.Type):
		return []component{m.numericSensor(d, "", s, entityName(d.Label), "")}, ""
	case d.Kind == device.KindPWM && isNumeric(s.Type):
		return m.pwmOf(d)
	case d.Kind == device.KindServo && isNumeric(s.Type):
		return m.pwmOf(d) // a number from minAngle to maxAngle, in °
	case d.Kind == device.KindModbus:
		return m.modbusOf(d)
	case (d.Kind == device.KindSerial || d.Kind == device.KindSensor) && s.Type == device.TypeString:
		return m.stringOf(d)
	case d.Kind == device.KindGPIOOutput || d.Kind == device.KindGPIOInput ||
		d.Kind == device.KindSensor || d.Kind == device.KindPWM || d.Kind == device.KindSerial:
		return nil, fmt.Sprintf("a %s with a %q value has no entity", d.Kind, s.Type)
	}
	return nil, fmt.Sprintf("kind %q has no entity", d.Kind)
}

func isNumeric(t string) bool { return t == device.TypeNumber || t == device.TypeInteger }

// base is what every component of a device has: its ids (settled later),
// its name, and its availability, the gateway's AND the device's.
func (m mapper) base(platform string, d device.Descriptor, prop, name string) component {
	local := deviceLocal(d.ID, prop)
	attrs := ""
	if WaitsForApproval(d) {
		attrs = m.t.Approval(m.gw, d.ID)
	}
	return component{
		Platform:        platform,
		Name:            name,
		local:           local,
		dev:             d.ID,
		prop:            prop,
		Availability:    []availability{{m.t.Status(m.gw)}, {m.t.Availability(m.gw, d.ID)}},
		AvailabilityAll: "all",
		StateTopic:      m.t.State(m.gw, d.ID),
		AttrTopic:       attrs,
	}
}

// nameOf is the label without its value hints (entityName), else the
// id; a high-risk device that Home Assistant may write says that a write
// waits for an operator.
func nameOf(d device.Descriptor) string {
	n := entityName(d.Label)
	if n == "" {
		n = d.ID
	}
	if WaitsForApproval(d) {
		n += approvalNote
	}
	return n
}

// WaitsForApproval says whether a write from Home Assistant to d becomes
// a confirmation request (the bridge's grant is control_low): such a
// device's entities carry the approval attributes (approval.go).
func WaitsForApproval(d device.Descriptor) bool {
	return d.Risk == device.RiskHigh && d.Access.CanWrite()
}

func (m mapper) switchOf(d device.Descriptor) component {
	c := m.base(PlatformSwitch, d, "", nameOf(d))
	c.CommandTopic = m.t.Set(m.gw, d.ID)
	c.PayloadOn, c.PayloadOff = "true", "false"
	c.StateOn, c.StateOff = "true", "false"
	return c
}

func (m mapper) binarySensorOf(d device.Descriptor) component {
	c := m.base(PlatformBinarySensor, d, "", nameOf(d))
	c.PayloadOn, c.PayloadOff = "true", "false"
	if d.Kind == device.KindGPIOInput || d.Kind == device.KindModbus {
		c.DeviceClass = binaryClass(d)
	}
	return c
}

// sensorsOf makes one sensor per numeric property, in property order.
func (m mapper) sensorsOf(d device.Descriptor) ([]component, string) {
	var props []string
	for p, ps := range d.Schema.Properties {
		if isNumeric(ps.Type) {
			props = append(props, p)
		}
	}
	if len(props) == 0 {
		return nil, "a sensor without a numeric property has no entity"
	}
	sort.Strings(props)
	out := make([]component, 0, len(props))
	for _, p := range props {
		name := nameOf(d)
		if len(props) > 1 {
			name += " " + p
		}
		out = append(out, m.numericSensor(d, p, d.Schema.Properties[p], name, valueOf(p)))
	}
	return out, ""
}

// numericSensor is a measurement with the device class its unit makes
// certain.
func (m mapper) numericSensor(d device.Descriptor, prop string, s device.Schema, name, tmpl string) component {
	if name == "" {
		name = nameOf(d)
	}
	c := m.base(PlatformSensor, d, prop, name)
	q := quantityOf(s.Unit)
	c.DeviceClass, c.Unit = q.class, q.unit
	c.StateClass = "measurement"
	c.ValueTemplate = tmpl
	counterTotal(d, prop, s, &c)
	return c
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// valueOf is the template that takes one property of a JSON object:
// value_json.<prop> when prop is a name Jinja reads as one, else
// value_json["<prop>"] (a JSON string is a valid Jinja string literal).
func valueOf(prop string) string {
	if identifier.MatchString(prop) {
		return "{{ value_json." + prop + " }}"
	}
	return "{{ value_json[" + strconv.Quote(prop) + "] }}"
}

// pwmOf is a number with the schema's range, or a sensor when Home
// Assistant may not write it. A range is required: the brief's and the
// protocol's PWM is 0–100, but a device that does not say so is not
// guessed.
func (m mapper) pwmOf(d device.Descriptor) ([]component, string) {
	s := d.Schema
	if !d.Access.CanWrite() {
		return []component{m.numericSensor(d, "", s, "", "")}, ""
	}
	if s.Minimum == nil || s.Maximum == nil || *s.Minimum >= *s.Maximum {
		return nil, "a pwm without a range (minimum < maximum) has no entity"
	}
	c := m.base(PlatformNumber, d, "", nameOf(d))
	c.CommandTopic = m.t.Set(m.gw, d.ID)
	c.Min, c.Max = ptr(*s.Minimum), ptr(*s.Maximum)
	c.Step = ptr(stepOf(s))
	c.Unit = quantityOf(s.Unit).unit
	c.Mode = "slider"
	return []component{c}, ""
}

// stepOf is 1 for integers; for numbers a hundredth of the range, rounded
// down to a power of ten (0–100 steps by 1, 0–1 by 0.01), at least 0.001,
// Home Assistant's smallest step (number.mqtt docs). The steps are
// literals, so that none is a division's 0.0009999….
func stepOf(s device.Schema) float64 {
	if s.Type == device.TypeInteger {
		return 1
	}
	span := *s.Maximum - *s.Minimum
	for _, step := range []float64{1000, 100, 10, 1, 0.1, 0.01} {
		if step <= span/100 {
			return step
		}
	}
	return 0.001
}

// stringOf is a text when Home Assistant may write the device (a line
// instrument: writing sends a line), else a sensor without unit. Values are
// JSON strings: the state is read with value_json, a command is sent with
// tojson, and both are cut to what Home Assistant holds.
func (m mapper) stringOf(d device.Descriptor) ([]component, string) {
	limit := maxState
	if ml := d.Schema.MaxLength; ml != nil && *ml < limit {
		limit = *ml
	}
	if limit < 1 {
		return nil, "a string of at most 0 characters has no entity"
	}
	read := "{{ value_json[:" + strconv.Itoa(limit) + "] }}"
	if !d.Access.CanWrite() {
		c := m.base(PlatformSensor, d, "", nameOf(d))
		c.ValueTemplate = read
		return []component{c}, ""
	}
	c := m.base(PlatformText, d, "", nameOf(d))
	c.ValueTemplate = read
	c.CommandTopic = m.t.Set(m.gw, d.ID)
	c.CommandTemplate = "{{ value | tojson }}"
	c.Max = ptr(float64(limit))
	return []component{c}, ""
}

// gateway returns the diagnostic components of the gateway itself. Their
// availability is the gateway's alone.
func (m mapper) gateway() []component {
	avail := []availability{{m.t.Status(m.gw)}}
	return []component{{
		Platform:       PlatformBinarySensor,
		Name:           "Emergency stop engaged",
		local:          "_stop",
		EntityCategory: "diagnostic",
		DeviceClass:    "safety",
		StateTopic:     m.t.StopState(m.gw),
		ValueTemplate:  "{{ 'on' if value_json.stopped else 'off' }}",
		PayloadOn:      "on",
		PayloadOff:     "off",
		Availability:   avail,
	}, {
		Platform:     PlatformButton,
		Name:         "Emergency stop",
		local:        "_stop_button",
		CommandTopic: m.t.StopSet(m.gw),
		PayloadPress: "STOP",
		Availability: avail,
	}, {
		Platform:       PlatformSensor,
		Name:           "Adapters up",
		local:          "_adapters",
		EntityCategory: "diagnostic",
		StateTopic:     m.t.BridgeState(m.gw),
		ValueTemplate:  "{{ value_json.adapters }}",
		Availability:   avail,
	}, m.pendingSensor(avail), m.approvalEvents(avail)}
}
