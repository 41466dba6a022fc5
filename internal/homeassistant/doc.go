// Package homeassistant turns a gateway's bench into Home Assistant MQTT
// discovery: one retained device-based discovery message (Home Assistant
// 2024.12 and later) at "<discovery>/device/<gateway>/config", whose
// components are the bench's devices and the gateway's own diagnostics.
// It knows the topic layout of issue 16 but nothing of MQTT: the bridge
// publishes what it returns.
//
// # The message
//
// "dev" is the gateway (ids openhal_<gateway>, name, manufacturer, model,
// sw version, configuration URL); "o" the origin, required by Home
// Assistant (name, sw, url = support URL); "cmps" one entry per entity,
// keyed <platform>_<local id>, each with its platform "p". Unique ids,
// keys and default_entity_id are described in ids.go.
//
// # Mapping (descriptor → component)
//
//	gpio.output, boolean, writable   switch: payload_on/off and state_on/off "true"/"false"
//	gpio.output, boolean, read-only  binary_sensor, no device class
//	gpio.input, boolean              binary_sensor: payload_on/off "true"/"false"; a device
//	                                 class only when tags/label make it certain (binaryClass)
//	sensor, object                   one sensor per numeric property: device_class and
//	                                 unit_of_measurement from its SenML unit (units),
//	                                 state_class measurement, value_template
//	                                 {{ value_json.<prop> }}; other properties: none
//	sensor, chip "counter"           as an object; its count is a total: state_class
//	                                 total_increasing, device class from totals.go
//	sensor, number                   one sensor, as a property
//	sensor or serial, string         writable: text (max from maxLength, at most 255;
//	                                 command_template {{ value | tojson }}); read-only:
//	                                 sensor without unit; both read {{ value_json[:max] }}
//	pwm, number with min < max       number: min, max, step, unit, mode slider
//	pwm, read-only                   sensor with unit
//	x.servo, number                  as pwm: min, max its angles, unit "°" (SenML "deg")
//	x.modbus, boolean                writable (a coil): switch; read (a discrete input):
//	                                 binary_sensor, its class as a gpio.input's
//	x.modbus, number, read           sensor, as a sensor's number
//	x.modbus, number, writable       number: min, max from the schema (slider), else the
//	                                 integer register's range scaled (box); step one raw
//	                                 unit scaled (≥ 0.001), a float's as pwm (modbus.go)
//	x.modbus, string with enum       read: sensor, device_class enum, options; writable:
//	                                 select, options; {{ value_json }}, {{ value | tojson }}
//	anything else (x.*, odd schema)  nothing: skipped, never guessed (Unmapped says why)
//
// A high-risk device that may be written keeps its platform, and its name
// ends with "(waits for approval)": a command from Home Assistant becomes a
// confirmation request, the state topic keeps the real value, and the
// entity shows it until an operator approves. Its json_attributes_topic,
// <base>/<device>/approval, says "waiting for approval" (with the request)
// meanwhile, and is {} otherwise (approval.go).
//
// An entity's name is the device's label without its value hints
// ("Door contact (true = open)" is "Door contact": names.go); the hint
// still gives a binary sensor its device class.
//
// Every device component has the device's state topic (and, if written,
// its set topic) and two availability topics, the gateway's status and the
// device's availability, with availability_mode "all": the entity is
// available only while both say online, so a dead gateway never leaves
// entities that look alive.
//
// The gateway adds three components: "Emergency stop engaged"
// (binary_sensor on <base>/_stop/state, value_template on stopped,
// device_class safety, entity_category diagnostic), "Emergency stop" (a
// button publishing STOP to <base>/_stop/set: a control, not a diagnostic)
// and "Adapters up" (sensor on <base>/_bridge/state, {{ value_json.adapters
// }}, diagnostic), and for confirmation requests (approval.go) "Pending
// approvals" (sensor on <base>/_approvals/state: the count, the newest
// request as attributes) and "Approval requests" (event on
// <base>/_approvals/event, one per request and resolution). Their
// availability is the gateway's status alone.
//
// # Removal
//
// Removal is the retained empty payload that removes the device and all
// its entities. A device that goes away is absent from the next Config;
// Update also removes its entities from Home Assistant with entries that
// hold only "p", as Home Assistant's documentation asks.
//
// # Sources
//
// Checked in the stored copies of Home Assistant's own documentation and
// code (home-assistant/home-assistant.io, source/_integrations/
// mqtt.markdown, "Device discovery payload", and the platform pages
// binary_sensor.mqtt, sensor.mqtt, switch.mqtt, number.mqtt, text.mqtt,
// button.mqtt, select.mqtt, event.mqtt; home-assistant/core, homeassistant/components/mqtt/
// schemas.py, discovery.py, abbreviations.py, text.py):
//
//   - the device message: "dev" and "o" required at the root, components
//     under "cmps", each with "p" and a unique_id (DEVICE_DISCOVERY_SCHEMA,
//     check_unique_id); origin requires name, takes sw and url;
//   - removal: an empty retained payload removes every component and the
//     device; a component entry with only "p" removes that component, and
//     the docs ask for a further update without it;
//   - default_entity_id is "<domain>.<object id>", replaces object_id
//     (deprecated, warned since 2025.10), used when the entity is first
//     added;
//   - availability is a list of {topic, payload_available,
//     payload_not_available, value_template}, exclusive with
//     availability_topic; availability_mode all/any/latest, default
//     latest; payloads default to online/offline;
//   - entity_category: "When set, the entity category must be diagnostic
//     for sensors"; the text platform's max is at most 255 and min < max;
//   - a sensor's options go with device_class enum only, and without
//     unit_of_measurement or state_class (core's mqtt sensor.py refuses
//     the component otherwise); a select requires options;
//   - abbreviations are expanded by Home Assistant, full names are taken
//     as they are; unknown options are ignored silently, which is why the
//     tests check every option against the platform's documented list.
package homeassistant
