package gateway_test

// What the gateway's client commands print, as these tests read it: the
// binary is a black box, so they hold their own copy of each format.

import (
	"os"
	"os/user"
	"regexp"
	"strconv"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// watchTS is the time that starts every line of `gateway watch`.
const watchTS = `^\d\d:\d\d:\d\d\.\d{3} `

// tokenLine is what `gateway token add` prints: the token alone.
var tokenLine = regexp.MustCompile(`^gw_[A-Za-z0-9_-]{43}\n$`)

// statusReport is what `gateway status --json` prints.
type statusReport struct {
	Version     string            `json:"version"`
	Commit      string            `json:"commit"`
	Board       string            `json:"board"`
	Name        string            `json:"name"`
	ID          string            `json:"id,omitempty"`
	Fingerprint string            `json:"fingerprint,omitempty"`
	StartedAt   time.Time         `json:"startedAt"`
	UptimeS     float64           `json:"uptimeSeconds"`
	BootID      string            `json:"bootId"`
	Principal   openhal.Principal `json:"principal"`
	Stopped     *openhal.StopInfo `json:"stopped"`
	Devices     struct {
		Total   int                  `json:"total"`
		ByState map[device.State]int `json:"byState"`
		Unwell  []struct {
			ID    string       `json:"id"`
			State device.State `json:"state"`
			Fault string       `json:"fault,omitempty"`
		} `json:"unwell"`
	} `json:"devices"`
	Confirmations struct {
		Pending int                    `json:"pending"`
		Newest  []openhal.Confirmation `json:"newest"`
	} `json:"confirmations"`
	Adapters []struct { // null: not shown to this token
		Name   string `json:"name"`
		State  string `json:"state"`
		Reason string `json:"reason,omitempty"`
		Detail string `json:"detail,omitempty"`
	} `json:"adapters"`
	Clients struct {
		Total   int                   `json:"total"`
		ByScope map[openhal.Scope]int `json:"byScope"`
	} `json:"clients"`
}

// cliOperator is the operator a client command run with --state-dir acts
// as: the login that ran it, or under sudo the login that ran sudo.
func cliOperator() string {
	name := "uid " + strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if su := os.Getenv("SUDO_USER"); su != "" && os.Geteuid() == 0 {
		name = su
	}
	return name
}
