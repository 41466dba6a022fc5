package homeassistant

import (
	"maps"
	"slices"
)

// The options each platform documents, as Home Assistant's MQTT pages list
// them in their configuration blocks (home-assistant/home-assistant.io,
// source/_integrations/<platform>.mqtt.markdown), and the common entity
// options of core's mqtt schemas.py (MQTT_ENTITY_COMMON_SCHEMA and the
// availability schemas, which include default_entity_id). Home Assistant
// ignores an option it does not know without a word, so a misspelt one
// would silently do nothing: every option a component carries must be in
// its platform's list. object_id is left out on purpose: it is deprecated
// (default_entity_id replaces it).
//
// required is what the page marks "required: true" (core's mqtt config.py:
// MQTT_RW_SCHEMA, of switch, number and text, requires command_topic;
// MQTT_RO_SCHEMA, of sensor and binary_sensor, state_topic; button.mqtt
// marks command_topic required), plus unique_id, which device-based
// discovery requires of every entity (check_unique_id in schemas.py:
// "Required when used with device-based discovery").
type platformSchema struct {
	required []string
	allowed  []string
}

// common are the options every entity platform takes.
var common = []string{
	"p", // platform: "Only allowed and required in MQTT auto discovery device messages"
	"availability", "availability_mode", "availability_template", "availability_topic",
	"payload_available", "payload_not_available",
	"default_entity_id", "device", "enabled_by_default", "encoding",
	"entity_category", "entity_picture", "icon",
	"json_attributes_template", "json_attributes_topic",
	"name", "origin", "qos", "unique_id",
}

var platforms = map[string]platformSchema{
	// switch.mqtt: command_topic is required (MQTT_RW_SCHEMA).
	PlatformSwitch: {
		required: []string{"p", "unique_id", "command_topic"},
		allowed: []string{"command_template", "command_topic", "device_class", "optimistic",
			"payload_off", "payload_on", "retain", "state_off", "state_on", "state_topic",
			"value_template"},
	},
	// binary_sensor.mqtt: state_topic is required.
	PlatformBinarySensor: {
		required: []string{"p", "unique_id", "state_topic"},
		allowed: []string{"device_class", "expire_after", "force_update", "off_delay",
			"payload_off", "payload_on", "state_topic", "value_template"},
	},
	// sensor.mqtt: state_topic is required.
	PlatformSensor: {
		required: []string{"p", "unique_id", "state_topic"},
		allowed: []string{"device_class", "expire_after", "force_update",
			"last_reset_value_template", "options", "suggested_display_precision",
			"state_class", "state_topic", "unit_of_measurement", "value_template"},
	},
	// number.mqtt: command_topic is required.
	PlatformNumber: {
		required: []string{"p", "unique_id", "command_topic"},
		allowed: []string{"command_template", "command_topic", "device_class", "max", "min",
			"mode", "optimistic", "payload_reset", "retain", "state_topic", "step",
			"unit_of_measurement", "value_template"},
	},
	// text.mqtt: command_topic is required.
	PlatformText: {
		required: []string{"p", "unique_id", "command_topic"},
		allowed: []string{"command_template", "command_topic", "max", "min", "mode",
			"pattern", "retain", "state_topic", "value_template"},
	},
	// select.mqtt: command_topic (MQTT_RW_SCHEMA) and options are required.
	PlatformSelect: {
		required: []string{"p", "unique_id", "command_topic", "options"},
		allowed:  []string{"command_template", "command_topic", "optimistic", "options", "retain", "state_topic", "value_template"},
	},
	// event.mqtt: state_topic and event_types are required (core's mqtt
	// event.py: MQTT_RO_SCHEMA, vol.Required(CONF_EVENT_TYPES)).
	PlatformEvent: {
		required: []string{"p", "unique_id", "state_topic", "event_types"},
		allowed:  []string{"device_class", "state_topic", "value_template"},
	},
	// button.mqtt: command_topic is required.
	PlatformButton: {
		required: []string{"p", "unique_id", "command_topic"},
		allowed: []string{"command_template", "command_topic", "device_class",
			"payload_press", "retain"},
	},
}

// allowedKeys is a platform's whole list of options.
func allowedKeys(platform string) map[string]bool {
	s, ok := platforms[platform]
	if !ok {
		return nil
	}
	keys := map[string]bool{}
	for _, k := range slices.Concat(common, s.allowed, s.required) {
		keys[k] = true
	}
	return keys
}

// The top-level keys of a device discovery message (core's
// DEVICE_DISCOVERY_SCHEMA, with its documented abbreviations), and of its
// "dev" (device registry options, abbreviated as in the docs' example) and
// "o" (MQTT_ORIGIN_INFO_SCHEMA: name required, sw, url).
var (
	topRequired    = []string{"dev", "o", "cmps"}
	topAllowed     = []string{"dev", "o", "cmps", "availability", "availability_mode", "availability_template", "availability_topic", "payload_available", "payload_not_available", "state_topic", "command_topic", "qos", "encoding", "message_expiry_interval"}
	deviceAllowed  = []string{"ids", "cns", "name", "mf", "mdl", "mdl_id", "sw", "hw", "sn", "sa", "cu", "via_device"}
	originRequired = []string{"name"}
	originAllowed  = []string{"name", "sw", "url"}
)

// missingAndUnknown compares the keys of an object with a schema.
func missingAndUnknown(obj map[string]any, required []string, allowed map[string]bool) (missing, unknown []string) {
	for _, k := range required {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !allowed[k] {
			unknown = append(unknown, k)
		}
	}
	return missing, unknown
}

func setOf(keys []string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}
