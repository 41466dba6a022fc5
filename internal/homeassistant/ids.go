package homeassistant

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The ids of a component. Home Assistant keeps an entity by its
// unique_id for ever (the entity registry links the user's names, areas
// and history to it), so unique ids must be stable across restarts and
// unique across everything one broker's Home Assistant sees:
//
//	unique_id          openhal_<gw>_<local>
//	local (a device)   <device with every character outside [a-z0-9-] as "_">[_<property, likewise>]
//	local (gateway)    _stop, _stop_button, _adapters (a leading "_" no device id can have)
//	cmps key           <platform>_<local>
//	default_entity_id  <platform>.<unique_id as an entity id slug>
//
// "sim.led" on gateway "bench" is openhal_bench_sim_led, the switch's key
// switch_sim_led, its entity switch.openhal_bench_sim_led.
//
// The mapping of "." to "_" is the layout's readable form, but not
// one-to-one: "a.b" and "a_b", or the property "b" of sensor "a" and a
// device "a.b", would share a unique id. When two components of one
// config would, each of them gets "_" and 8 hex digits of the SHA-256 of
// its own device id and property, so that they are unique and the same
// in every config that holds both. (The price: the first of them changes
// its unique id when the second appears; Home Assistant then sees a new
// entity. Ids that need this are rare: the Hub's own are "board.name"
// and "adapter.name".)
//
// The cmps key carries the platform: Home Assistant identifies a
// discovered component by (platform, "<gw> <key>"), so a device that
// changes platform (a read-only output becoming writable) must change
// key, or its old entity could not be removed (see Update).
//
// default_entity_id is "<domain>.<object id>" (it replaced the deprecated
// object_id, which warns since 2025.10 and stops working in 2026.4: the
// deprecation notice quoted in SAIC-iSmart-API/saic-python-mqtt-gateway
// #376). Home Assistant uses it only when the entity is first added
// (sensor.mqtt docs, "default_entity_id"). An entity id's object id is
// [a-z0-9_] without "__" or a "_" at either end (core's valid_entity_id),
// hence the slug; two slugs that meet are told apart by Home Assistant
// itself with a "_2" suffix, which is harmless because unique_id, not
// the entity id, is the permanent link.

// uniqueID is the unique_id of a component with the given local id.
func uniqueID(gw, local string) string { return "openhal_" + gw + "_" + local }

// localPart maps a device id or property name to the readable form.
func localPart(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// deviceLocal is the readable local id of a device, or of one property.
func deviceLocal(dev, prop string) string {
	if prop == "" {
		return localPart(dev)
	}
	return localPart(dev) + "_" + localPart(prop)
}

// disambiguator is the suffix of a local id that collided.
func disambiguator(dev, prop string) string {
	sum := sha256.Sum256([]byte(dev + "\x00" + prop))
	return "_" + hex.EncodeToString(sum[:4])
}

// entitySlug turns s into the object id part of an entity id.
func entitySlug(s string) string {
	var b strings.Builder
	under := true // drops leading "_"
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// defaultEntityID is the entity id Home Assistant is asked to use.
func defaultEntityID(platform, unique string) string {
	return platform + "." + entitySlug(unique)
}
