package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// knownValues are the devices' last known values as the table shows them,
// with their unit and age ("21.5 °C (4s ago)"), "-" for none. They come
// from the Hub's memory (gatewayext.MethodValues): listing reads no device, starts no
// adapter and waits for none. A gateway without the method shows "-".
func knownValues(ctx context.Context, c *halclient.Conn, devs []device.Descriptor) []string {
	out := make([]string, len(devs))
	for i := range out {
		out[i] = "-"
	}
	var res gatewayext.ValuesResult
	if err := c.Call(ctx, gatewayext.MethodValues, nil, &res); err != nil {
		return out
	}
	byID := make(map[string]gatewayext.LastValue, len(res.Values))
	for _, v := range res.Values {
		byID[v.Device] = v
	}
	for i, d := range devs {
		if v, ok := byID[d.ID]; ok {
			out[i] = valueWithUnit(d.Schema, v.Value) + " (" + ageWords(time.Duration(v.AgeMs)*time.Millisecond) + ")"
		}
	}
	return out
}

// ageWords says how old a value is, to the unit that matters: "just now",
// "4s ago", "3m ago", "2h ago", "5d ago".
func ageWords(age time.Duration) string {
	switch {
	case age < time.Second:
		return "just now"
	case age < time.Minute:
		return fmt.Sprintf("%ds ago", int(age/time.Second))
	case age < time.Hour:
		return fmt.Sprintf("%dm ago", int(age/time.Minute))
	case age < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(age/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(age/(24*time.Hour)))
}
