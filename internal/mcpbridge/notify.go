package mcpbridge

import (
	"encoding/json"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// handle follows one notification of the Hub: values wake the waiters and
// become resource updates, devices that come and go change the tools and
// resources, the stop and its lifting change the bench.
func (b *Bridge) handle(n halclient.Notification) {
	switch n.Method {
	case "hal/value":
		var p struct {
			Device string `json:"device"`
		}
		if json.Unmarshal(n.Params, &p) == nil {
			b.watch.send("value:"+p.Device, n.Params)
			b.notify.changed(b.deviceURI(p.Device), b.benchURI())
		}
	case "hal/deviceState":
		var p openhal.DeviceStateParams
		if json.Unmarshal(n.Params, &p) == nil {
			b.setState(p)
			b.notify.changed(b.deviceURI(p.Device), b.benchURI())
		}
	case "hal/deviceAdded":
		var p openhal.DeviceAddedParams
		if json.Unmarshal(n.Params, &p) == nil {
			b.mu.Lock()
			b.devices[p.Device.ID] = p.Device
			b.mu.Unlock()
			b.refresh()
			b.notify.changed(b.benchURI())
		}
	case "hal/deviceRemoved":
		var p openhal.DeviceRemovedParams
		if json.Unmarshal(n.Params, &p) == nil {
			b.mu.Lock()
			delete(b.devices, p.Device)
			b.mu.Unlock()
			b.refresh()
			b.notify.changed(b.benchURI())
		}
	case "hal/stopped":
		var p openhal.StoppedParams
		if json.Unmarshal(n.Params, &p) == nil {
			b.mu.Lock()
			b.stopped = &openhal.StopInfo{Principal: p.Principal, Reason: p.Reason, TS: p.TS, Failed: p.Failed, LeftAsIs: p.LeftAsIs}
			b.mu.Unlock()
			b.notify.changed(b.benchURI())
		}
	case "hal/resumed":
		b.mu.Lock()
		b.stopped = nil
		b.mu.Unlock()
		b.notify.changed(b.benchURI())
	case "hal/confirmationResolved":
		var p openhal.ConfirmationNotice
		if json.Unmarshal(n.Params, &p) == nil {
			b.watch.send("confirmation:"+p.Confirmation.ID, n.Params)
		}
	}
}

// setState records a device's state and fault from hal/deviceState.
func (b *Bridge) setState(p openhal.DeviceStateParams) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d, ok := b.devices[p.Device]; ok {
		d.State, d.Fault = p.State, p.Fault
		b.devices[p.Device] = d
	}
}
