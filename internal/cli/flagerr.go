package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/openhal/gateway/halclient"
)

// badFlag is a dial's error that says the command line was wrong (a hub
// URL that is not one, a fingerprint that is not one) as the usage error
// it is (exit 2, with the usage: usage.go); nil for any other error,
// which is the gateway's or the network's (exit 1).
func (f *clientFlags) badFlag(err error) error {
	var ue *halclient.URLError
	var oe *halclient.OptionError
	if f.fs == nil || (!errors.As(err, &ue) && !errors.As(err, &oe)) {
		return nil
	}
	return Usagef(f.fs, "%v", err)
}

// positiveDuration is a duration flag that must be above zero: a
// --timeout of 0 or less would end the command before it began.
type positiveDuration struct{ d *time.Duration }

func (p positiveDuration) String() string {
	if p.d == nil {
		return ""
	}
	return p.d.String()
}

func (p positiveDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 10s or 1m")
	}
	if d <= 0 {
		return fmt.Errorf("want a duration above 0")
	}
	*p.d = d
	return nil
}
