package homeassistant

// Platforms used here (Home Assistant's MQTT platform names, the values of
// a component's "p").
const (
	PlatformSwitch       = "switch"
	PlatformBinarySensor = "binary_sensor"
	PlatformSensor       = "sensor"
	PlatformNumber       = "number"
	PlatformText         = "text"
	PlatformButton       = "button"
	PlatformSelect       = "select"
	PlatformEvent        = "event"
)

// component is one entry of the discovery payload's "cmps": the options of
// one Home Assistant entity, with the full option names of each platform's
// documentation (Home Assistant expands abbreviations but takes full names
// as they are; only the platform uses its short key "p", as in the
// documentation's own device discovery example). Fields that are empty
// are left out: Home Assistant then applies its documented default.
//
// Min, Max and Step are pointers because 0 is a meaningful range end.
type component struct {
	Platform        string         `json:"p"`
	Name            string         `json:"name,omitempty"`
	UniqueID        string         `json:"unique_id,omitempty"`
	DefaultEntityID string         `json:"default_entity_id,omitempty"`
	EntityCategory  string         `json:"entity_category,omitempty"`
	DeviceClass     string         `json:"device_class,omitempty"`
	StateClass      string         `json:"state_class,omitempty"`
	Unit            string         `json:"unit_of_measurement,omitempty"`
	StateTopic      string         `json:"state_topic,omitempty"`
	ValueTemplate   string         `json:"value_template,omitempty"`
	CommandTopic    string         `json:"command_topic,omitempty"`
	CommandTemplate string         `json:"command_template,omitempty"`
	PayloadOn       string         `json:"payload_on,omitempty"`
	PayloadOff      string         `json:"payload_off,omitempty"`
	StateOn         string         `json:"state_on,omitempty"`
	StateOff        string         `json:"state_off,omitempty"`
	PayloadPress    string         `json:"payload_press,omitempty"`
	Min             *float64       `json:"min,omitempty"`
	Max             *float64       `json:"max,omitempty"`
	Step            *float64       `json:"step,omitempty"`
	Mode            string         `json:"mode,omitempty"`
	Options         []string       `json:"options,omitempty"`
	EventTypes      []string       `json:"event_types,omitempty"`
	Icon            string         `json:"icon,omitempty"`
	AttrTopic       string         `json:"json_attributes_topic,omitempty"`
	AttrTemplate    string         `json:"json_attributes_template,omitempty"`
	Availability    []availability `json:"availability,omitempty"`
	AvailabilityAll string         `json:"availability_mode,omitempty"`

	// key is the component's key under "cmps"; local its local id
	// (see ids.go), dev and prop what it shows. Not encoded.
	key, local, dev, prop string
}

// availability is one entry of a component's availability list. Its
// payloads are Home Assistant's defaults, "online" and "offline"
// (DEFAULT_PAYLOAD_AVAILABLE / _NOT_AVAILABLE in core's mqtt schemas.py),
// which are the layout's, so they are not repeated.
type availability struct {
	Topic string `json:"topic"`
}

// tombstone is the entry that removes a component from a device: only its
// platform ("An empty config can be published as an update to remove a
// single component from the device discovery. Note that adding the
// platform (p) option is still required": mqtt integration docs, "Device
// discovery payload").
type tombstone struct {
	Platform string `json:"p"`
}

func ptr(f float64) *float64 { return &f }
