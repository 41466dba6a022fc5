package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/device"
)

// resourceMaxAge is how old a sensor's cached measurement may be for a
// resource read to return it instead of measuring again: a client that
// re-reads resources on every update must not make a sensor measure on
// each.
const resourceMaxAge = 5000

// deviceURI is a device's resource: openhal://<gateway>/devices/<id>.
func (b *Bridge) deviceURI(id string) string {
	return "openhal://" + url.PathEscape(b.gw) + "/devices/" + url.PathEscape(id)
}

// benchURI is the whole bench's resource.
func (b *Bridge) benchURI() string { return "openhal://" + url.PathEscape(b.gw) + "/bench" }

// addStaticResources registers the bench.
func (b *Bridge) addStaticResources() {
	b.server.AddResource(&mcp.Resource{
		URI: b.benchURI(), Name: "bench", Title: "The bench",
		Description: "Every device this agent sees with its descriptor and value, and the emergency stop. Subscribe to follow it.",
		MIMEType:    "application/json",
	}, b.readBench)
}

// refreshResources registers a resource per device in devs and removes
// those of devices gone. b.reg is held.
func (b *Bridge) refreshResources(devs []device.Descriptor) {
	now := map[string]bool{}
	for _, d := range devs {
		uri := b.deviceURI(d.ID)
		now[uri] = true
		if b.res[uri] {
			continue
		}
		title := d.Label
		if title == "" {
			title = d.ID
		}
		b.server.AddResource(&mcp.Resource{
			URI: uri, Name: d.ID, Title: title, MIMEType: "application/json",
			Description: fmt.Sprintf("%s %s: its descriptor and value. Subscribe to be told when it changes.", d.Kind, d.ID),
		}, b.readDevice)
		b.res[uri] = true
	}
	var gone []string
	for uri := range b.res {
		if !now[uri] {
			gone = append(gone, uri)
			delete(b.res, uri)
		}
	}
	if len(gone) > 0 {
		b.server.RemoveResources(gone...)
	}
}

// deviceDoc is a device resource's content.
type deviceDoc struct {
	Device    device.Descriptor `json:"device"`
	Value     any               `json:"value"`
	TS        *time.Time        `json:"ts,omitempty"`
	ReadError string            `json:"readError,omitempty"`
}

func (b *Bridge) readDevice(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, ok := b.deviceOf(req.Params.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	doc, err := b.deviceDoc(ctx, id)
	if err != nil {
		return nil, err
	}
	return jsonResource(req.Params.URI, doc)
}

// deviceOf is the id in a device resource's URI, when it is one of a
// device this token sees.
func (b *Bridge) deviceOf(uri string) (string, bool) {
	prefix := b.deviceURI("")
	if !strings.HasPrefix(uri, prefix) {
		return "", false
	}
	id, err := url.PathUnescape(uri[len(prefix):])
	if err != nil {
		return "", false
	}
	b.mu.Lock()
	_, ok := b.devices[id]
	b.mu.Unlock()
	return id, ok
}

// deviceDoc reads a device for its resource. A device that cannot be
// read now (write-only, in fault) is still shown, with why.
func (b *Bridge) deviceDoc(ctx context.Context, id string) (deviceDoc, error) {
	c, err := b.hub()
	if err != nil {
		return deviceDoc{}, err
	}
	b.mu.Lock()
	doc := deviceDoc{Device: b.devices[id]}
	b.mu.Unlock()
	if !doc.Device.Access.CanRead() {
		doc.ReadError = "write-only: its value is not read back"
		return doc, nil
	}
	v, err := c.Read(ctx, id, resourceMaxAge)
	if err != nil {
		doc.ReadError = b.toolError(err, "hal/read", id).Error()
		return doc, nil
	}
	doc.Value, doc.TS = v.Value, &v.TS
	return doc, nil
}

// benchDoc is the bench resource's content.
type benchDoc struct {
	Gateway string      `json:"gateway"`
	Stopped *stopView   `json:"stopped"`
	Devices []deviceDoc `json:"devices"`
}

func (b *Bridge) readBench(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	b.mu.Lock()
	devs := b.sortedDevices()
	doc := benchDoc{Gateway: b.gw, Stopped: viewStop(b.stopped), Devices: []deviceDoc{}}
	b.mu.Unlock()
	for _, d := range devs {
		dd, err := b.deviceDoc(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		doc.Devices = append(doc.Devices, dd)
	}
	return jsonResource(req.Params.URI, doc)
}

func jsonResource(uri string, doc any) (*mcp.ReadResourceResult, error) {
	text, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(text)}}}, nil
}

// subscribe accepts subscriptions to the resources this token has: the
// bench and its devices. The SDK keeps them; updates.changed sends.
func (b *Bridge) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if _, ok := b.deviceOf(uri); ok || uri == b.benchURI() {
		return nil
	}
	return mcp.ResourceNotFoundError(uri)
}
