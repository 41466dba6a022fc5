package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/supervisor/conn"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/jsonrpc"
)

// deviceSet is an adapter's devices in the Hub: those its manifest
// declares, registered for its whole life (offline while it is down), and
// those a run added (removed when the run ends). Keys are the adapter's own
// ids, without the prefix.
type deviceSet struct {
	mu       sync.Mutex
	declared map[string]*adapterDevice
	runtime  map[string]*adapterDevice
}

func (ds *deviceSet) init() {
	ds.declared = map[string]*adapterDevice{}
	ds.runtime = map[string]*adapterDevice{}
}

// own finds one of the adapter's devices by its own id, or by its prefixed
// id when no own id matches.
func (ds *deviceSet) own(prefix, id string) *adapterDevice {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for _, try := range []string{id, strings.TrimPrefix(id, prefix)} {
		if d := ds.declared[try]; d != nil {
			return d
		}
		if d := ds.runtime[try]; d != nil {
			return d
		}
	}
	return nil
}

// adapterDevice is a Hub device whose reads and writes are requests to its
// adapter.
type adapterDevice struct {
	a    *adapter
	id   string // the adapter's own id
	desc device.Descriptor
	rep  device.Reporter
}

func (d *adapterDevice) Descriptor() device.Descriptor { return d.desc }

// Timeout is the deadline the Hub gives a request for this device: the
// adapter's request_ms, plus the handshake for a tool that may have to be
// started first (section 4: "the request's deadline starts once the
// handshake is done").
func (d *adapterDevice) Timeout() time.Duration {
	t := d.a.connTiming()
	if d.a.isTool() {
		return t.Handshake + t.Request
	}
	return t.Request
}

// readResult is device.read's answer, and device.write's.
type readResult struct {
	Value json.RawMessage `json:"value"`
	TS    *time.Time      `json:"ts"`
}

func (d *adapterDevice) Read(ctx context.Context) (device.Reading, error) {
	raw, err := d.a.call(ctx, adapterproto.MethodDeviceRead, map[string]any{"device": d.id})
	if err != nil {
		return device.Reading{}, err
	}
	var r readResult
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Value) == 0 {
		return device.Reading{}, adapterErr("device.read result is not {value, ts?}: %s", clip(raw))
	}
	v, err := d.value(r.Value)
	if err != nil {
		return device.Reading{}, err
	}
	rd := device.Reading{Value: v}
	if r.TS != nil {
		rd.TS = *r.TS
	}
	return rd, nil
}

// Write asks the adapter to apply a value that passed every check of the
// Hub. The value the Hub publishes is the one written: an adapter's answer
// {value?, ts?} confirms it.
func (d *adapterDevice) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	_, err := d.a.call(ctx, adapterproto.MethodDeviceWrite, map[string]any{"device": d.id, "value": req.Value})
	return device.WriteResult{}, err
}

// value decodes a value from the adapter and checks it against the
// device's schema: what the Hub publishes must fit what it describes.
func (d *adapterDevice) value(raw json.RawMessage) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, adapterErr("value %s: %v", clip(raw), err)
	}
	if err := d.desc.Schema.Validate(v); err != nil {
		return nil, adapterErr("value %s does not fit %s's schema: %v", clip(raw), d.desc.ID, err)
	}
	return v, nil
}

// call sends one request for a device and turns its failures into the
// codes of section 5.
func (a *adapter) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c, err := a.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer a.release()
	res, err := c.Call(ctx, method, params, 0)
	var ae *conn.AdapterError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &ae):
		return nil, &device.CodedError{Code: adapterproto.EAdapterError, Msg: ae.Error(), Object: ae.Err}
	case errors.Is(err, conn.ErrCrashed):
		return nil, &device.CodedError{Code: adapterproto.EAdapterCrashed, Msg: "adapter " + a.name + ": " + err.Error()}
	case errors.Is(err, conn.ErrTimeout):
		return nil, fmt.Errorf("adapter %s: %w (%v)", a.name, context.DeadlineExceeded, err)
	}
	return nil, err
}

func adapterErr(format string, args ...any) error {
	return &device.CodedError{Code: adapterproto.EAdapterError, Msg: fmt.Sprintf(format, args...)}
}

// newDevice makes the Hub device for one of the adapter's descriptors.
func (a *adapter) newDevice(d device.Descriptor) *adapterDevice {
	own := d.ID
	d.ID = a.name + "." + own
	d.Source = "adapter:" + a.name
	d.State, d.Fault = "", ""
	return &adapterDevice{a: a, id: own, desc: d}
}

// registerDeclared adds the manifest's devices. If any id is taken, none
// is added: an adapter whose ids collide is refused (section 2).
func (a *adapter) registerDeclared() error {
	reg := a.s.opt.Registry
	var added []string
	for _, desc := range a.man.Devices {
		d := a.newDevice(desc)
		rep, err := reg.Add(d)
		if err != nil {
			for _, id := range added {
				reg.Remove(id, "adapter refused")
			}
			return fmt.Errorf("device %s: %w; the adapter is refused", d.desc.ID, err)
		}
		d.rep = rep
		added = append(added, d.desc.ID)
		a.devices.declared[d.id] = d
	}
	a.devicesDown("adapter " + a.name + " is not running")
	return nil
}

// unregister removes every device of the adapter from the Hub, once its
// loop has returned (a reload).
func (a *adapter) unregister() {
	a.devicesDown("adapter " + a.name + " reloaded")
	for _, d := range a.declaredList() {
		a.s.opt.Registry.Remove(d.desc.ID, "adapter "+a.name+" reloaded")
	}
	a.devices.mu.Lock()
	a.devices.declared = map[string]*adapterDevice{}
	a.devices.mu.Unlock()
}

// devicesUp marks the declared devices ok once a run is ready.
func (a *adapter) devicesUp() {
	for _, d := range a.declaredList() {
		a.s.opt.Registry.SetState(d.desc.ID, device.StateOK, "")
	}
}

// devicesDown follows the end of a run: a service's declared devices go
// offline; a tool's stay as they are unless it failed, since its next
// request starts it; run-time devices are removed.
func (a *adapter) devicesDown(why string) {
	a.mu.Lock()
	failed := a.state == restart.Failed
	a.mu.Unlock()
	a.takeDevicesDown(why, !a.isTool() || failed)
}

// takeDevicesDown removes the run-time devices and, when offline is set,
// marks the declared ones offline with why. It returns once the Hub's
// registry holds the change.
func (a *adapter) takeDevicesDown(why string, offline bool) {
	if offline {
		for _, d := range a.declaredList() {
			a.s.opt.Registry.SetState(d.desc.ID, device.StateOffline, why)
		}
	}
	a.devices.mu.Lock()
	runtime := a.devices.runtime
	a.devices.runtime = map[string]*adapterDevice{}
	a.devices.mu.Unlock()
	for _, d := range runtime {
		a.s.opt.Registry.Remove(d.desc.ID, why)
	}
}

func (a *adapter) declaredList() []*adapterDevice {
	a.devices.mu.Lock()
	defer a.devices.mu.Unlock()
	out := make([]*adapterDevice, 0, len(a.devices.declared))
	for _, d := range a.devices.declared {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// deviceIDs lists the adapter's devices in the Hub, for status.
func (a *adapter) deviceIDs() []string {
	a.devices.mu.Lock()
	defer a.devices.mu.Unlock()
	var ids []string
	for _, m := range []map[string]*adapterDevice{a.devices.declared, a.devices.runtime} {
		for _, d := range m {
			ids = append(ids, d.desc.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// addRuntime serves devices.add: the descriptor is checked as a declared
// one is, and its prefixed id must be free.
func (a *adapter) addRuntime(params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Device device.Descriptor `json:"device"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("params.device: %v", err)
	}
	if err := manifest.CheckDevice("params.device", a.name, p.Device); err != nil {
		return nil, invalidParams("%v", err)
	}
	d := a.newDevice(p.Device)
	a.devices.mu.Lock()
	defer a.devices.mu.Unlock()
	if a.devices.declared[d.id] != nil || a.devices.runtime[d.id] != nil {
		return nil, invalidParams("device %s exists", d.desc.ID)
	}
	rep, err := a.s.opt.Registry.Add(d)
	if err != nil {
		return nil, invalidParams("device %s: %v", d.desc.ID, err)
	}
	d.rep = rep
	a.devices.runtime[d.id] = d
	return map[string]string{"id": d.desc.ID}, nil
}

// removeRuntime serves devices.remove: only a device the adapter added.
func (a *adapter) removeRuntime(params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Device string `json:"device"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Device == "" {
		return nil, invalidParams("params.device: want the id of a device this adapter added")
	}
	d := a.devices.own(a.name+".", p.Device)
	a.devices.mu.Lock()
	if d == nil || a.devices.runtime[d.id] != d {
		a.devices.mu.Unlock()
		return nil, denied(p.Device, "adapter %s may only remove devices it added; %s is not one", a.name, p.Device)
	}
	delete(a.devices.runtime, d.id)
	a.devices.mu.Unlock()
	if err := a.s.opt.Registry.Remove(d.desc.ID, "removed by adapter "+a.name); err != nil {
		return nil, invalidParams("%v", err)
	}
	return struct{}{}, nil
}

// publish takes value.publish: a value of one of the adapter's own
// devices, checked against its schema, becomes hal/value. Anything else is
// dropped and logged: a notification has no answer to carry an error.
func (a *adapter) publish(params json.RawMessage) {
	var p struct {
		Device string          `json:"device"`
		Value  json.RawMessage `json:"value"`
		TS     *time.Time      `json:"ts"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Device == "" || len(p.Value) == 0 {
		a.log.Warn("value.publish dropped: params are not {device, value, ts?}", "params", clip(params))
		return
	}
	d := a.devices.own(a.name+".", p.Device)
	if d == nil {
		a.log.Warn("value.publish dropped: not one of the adapter's devices", "device", p.Device)
		return
	}
	v, err := d.value(p.Value)
	if err != nil {
		a.log.Warn("value.publish dropped", "device", d.desc.ID, "err", err)
		return
	}
	var ts time.Time
	if p.TS != nil {
		ts = *p.TS
	}
	d.rep.Value(v, ts)
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
