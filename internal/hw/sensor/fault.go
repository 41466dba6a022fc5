package sensor

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCorrupt is matched (errors.Is) by a driver's error for a reading
// that arrived damaged: its checksum (a Sensirion CRC, say) does not
// match its data.
var ErrCorrupt = errors.New("corrupted reading")

// faultError is a driver's error told in words a person acts on: what
// happened and what to check, then the driver's own words, which errors.Is
// and errors.As still see.
type faultError struct {
	words string
	err   error
}

func (e *faultError) Error() string { return e.words + " (" + e.err.Error() + ")" }
func (e *faultError) Unwrap() error { return e.err }

// explain puts the faults of the bus a person can do something about into
// words: a sensor that does not acknowledge (isNAK) and a damaged
// reading. Other errors are the driver's own words already.
func explain(err error) error {
	switch {
	case err == nil:
		return nil
	case isNAK(err):
		return &faultError{"the sensor did not answer on the bus: check its wiring, power and address", err}
	case errors.Is(err, ErrCorrupt):
		return &faultError{"the reading arrived damaged: check the wiring, the cable's length and the pull-up resistors", err}
	}
	return err
}

// timeoutWords is what a measurement past its deadline says: nothing
// came back, which a sensor or a device holding the bus does.
func timeoutWords(after fmt.Stringer) string {
	return "no measurement within " + after.String() + ": the sensor or its bus is stuck (a device may be holding the bus); it is measured again at the next poll"
}

// nakWords are the texts of the errnos Linux's i2c-dev answers for a
// transfer nobody acknowledged: EREMOTEIO from most controllers, ENXIO
// or EIO from some. periph's sysfs bus formats the errno into its error
// ("sysfs-i2c: remote I/O error"), so only the words are left to match;
// the words, unlike the errno constants, exist on every system the
// client builds for.
var nakWords = []string{"remote I/O error", "no such device or address", "input/output error"}

// isNAK reports whether err is a transfer nobody acknowledged.
func isNAK(err error) bool {
	for _, w := range nakWords {
		if strings.HasSuffix(err.Error(), w) {
			return true
		}
	}
	return false
}

// IsNAK reports whether err is an I2C transfer nobody acknowledged, for
// the other chips on a bus (an expander) to say so in the same words.
func IsNAK(err error) bool { return isNAK(err) }
