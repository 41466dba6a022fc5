package homeassistant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"

	"github.com/openhal/gateway/device"
)

// MaxPayload bounds one discovery message. Home Assistant sets no limit of
// its own, but the whole bench goes in one retained message, which every
// subscriber of the discovery prefix receives again on each connect: a
// payload that outgrows this is a bench for several gateways, and an
// error here is better than a broker or client that drops it. The sim
// bench takes about 4 KiB.
const MaxPayload = 256 << 10

// Origin is the software that publishes the discovery: "o" is required in
// a device discovery payload (core's mqtt schemas.py,
// DEVICE_DISCOVERY_SCHEMA, with a required name); Home Assistant logs it
// and links support_url ("url") from the device page.
const (
	OriginName = "openhal-gateway"
	OriginURL  = "https://github.com/openhal/gateway"
)

// Manufacturer and Model are what the device page shows.
const (
	Manufacturer = "OpenHAL"
	Model        = "gateway"
)

// message is the device discovery message. Abbreviations are those of
// Home Assistant's documentation example: dev, o, cmps at the top, and in
// dev and o the device and origin ones (ids, mf, mdl, sw, cu; name, sw,
// url).
type message struct {
	Device     deviceInfo     `json:"dev"`
	Origin     originInfo     `json:"o"`
	Components map[string]any `json:"cmps"`
}

type deviceInfo struct {
	IDs          []string `json:"ids"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"mf"`
	Model        string   `json:"mdl"`
	SWVersion    string   `json:"sw,omitempty"`
	ConfigURL    string   `json:"cu,omitempty"`
}

type originInfo struct {
	Name       string `json:"name"`
	SWVersion  string `json:"sw,omitempty"`
	SupportURL string `json:"url"`
}

// Skip says why a device has no entity.
type Skip struct{ Device, Reason string }

// Config is the discovery message of a gateway and its devices: the topic
// and the payload to publish retained. Devices that map to no platform are
// left out (Unmapped says why); the gateway's diagnostics are always there.
func Config(t Topics, gw Gateway, devs []device.Descriptor) (topic string, payload []byte, err error) {
	topic, payload, _, err = Update(t, gw, nil, devs)
	return topic, payload, err
}

// Update is the discovery message for devs that also removes from Home
// Assistant the components that prev (the devices of the config published
// before) had and devs has not: each such component is an entry with only
// its platform, and removed lists their keys. Home Assistant's documented
// sequence is that update, then one more without those entries: publish
// this payload, then Config's when removed is not empty.
func Update(t Topics, gw Gateway, prev, devs []device.Descriptor) (topic string, data []byte, removed []string, err error) {
	if err := gw.check(); err != nil {
		return "", nil, nil, err
	}
	now, _ := plan(t, gw.ID, devs)
	cmps := make(map[string]any, len(now))
	for _, c := range now {
		cmps[c.key] = c
	}
	if prev != nil {
		before, _ := plan(t, gw.ID, prev)
		for _, c := range before {
			if _, ok := cmps[c.key]; !ok {
				cmps[c.key] = tombstone{c.Platform}
				removed = append(removed, c.key)
			}
		}
		sort.Strings(removed)
	}
	data, err = encode(message{Device: gw.info(), Origin: gw.origin(), Components: cmps})
	if err != nil {
		return "", nil, nil, fmt.Errorf("discovery config of gateway %s: %w", gw.ID, err)
	}
	return t.DeviceConfig(gw.ID), data, removed, nil
}

// Removal is the retained empty payload that removes the whole device:
// Home Assistant then removes every component it discovered from this
// topic and the device entry ("To remove the components, publish an empty
// (retained) string payload to the discovery topic": mqtt integration
// docs, "Device discovery payload"; core's discovery.py turns it into a
// removal of each component).
func Removal(t Topics, gw Gateway) (topic string, payload []byte) {
	return t.DeviceConfig(gw.ID), []byte{}
}

// Unmapped lists the devices that have no entity, and why, so that the
// bridge can say so once.
func Unmapped(devs []device.Descriptor) []Skip {
	_, skips := plan(Topics{}, "gw", devs)
	return skips
}

// plan maps devices and the gateway to components with settled ids.
func plan(t Topics, gw string, devs []device.Descriptor) ([]component, []Skip) {
	m := mapper{t: t, gw: gw}
	var out []component
	var skips []Skip
	for _, d := range devs {
		cs, why := m.device(d)
		if why != "" {
			skips = append(skips, Skip{d.ID, why})
			continue
		}
		out = append(out, cs...)
	}
	settle(out)
	gwc := m.gateway()
	out = append(out, gwc...)
	for i := range out {
		c := &out[i]
		c.UniqueID = uniqueID(gw, c.local)
		c.DefaultEntityID = defaultEntityID(c.Platform, c.UniqueID)
		c.key = c.Platform + "_" + c.local
	}
	return out, skips
}

// settle gives every device component whose readable local id another
// one shares a suffix of its own (see ids.go).
func settle(cs []component) {
	n := map[string]int{}
	for _, c := range cs {
		n[c.local]++
	}
	for i := range cs {
		if n[cs[i].local] > 1 {
			cs[i].local += disambiguator(cs[i].dev, cs[i].prop)
		}
	}
}

var gatewayID = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// ValidID reports whether id is a gateway id of the layout: 1 to 64 of
// [a-z0-9-], what Slug makes (see Slug for why "_" is not one).
func ValidID(id string) bool { return gatewayID.MatchString(id) }

// check refuses what Home Assistant would refuse: a gateway id outside
// the discovery topic's [a-zA-Z0-9_-] (the layout allows lower case only),
// and a configuration_url that is not http(s) (core's
// cv.configuration_url: a device with another URL fails the whole
// discovery message).
func (g Gateway) check() error {
	if !ValidID(g.ID) {
		return fmt.Errorf("gateway id %q: want 1 to 64 of [a-z0-9-] (see Slug)", g.ID)
	}
	if g.ConfigURL != "" {
		u, err := url.Parse(g.ConfigURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("gateway %s: configuration URL %q: want an http:// or https:// URL", g.ID, g.ConfigURL)
		}
	}
	return nil
}

func (g Gateway) info() deviceInfo {
	name := g.Name
	if name == "" {
		name = g.ID
	}
	return deviceInfo{
		IDs:          []string{"openhal_" + g.ID},
		Name:         name,
		Manufacturer: Manufacturer,
		Model:        Model,
		SWVersion:    g.Version,
		ConfigURL:    g.ConfigURL,
	}
}

func (g Gateway) origin() originInfo {
	return originInfo{Name: OriginName, SWVersion: g.Version, SupportURL: OriginURL}
}

// encode is compact JSON without HTML escaping (templates and names stay
// readable in a broker's tools), bounded by MaxPayload.
func encode(p message) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	data := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if len(data) > MaxPayload {
		return nil, fmt.Errorf("%d bytes is more than the %d of one discovery message", len(data), MaxPayload)
	}
	return data, nil
}
