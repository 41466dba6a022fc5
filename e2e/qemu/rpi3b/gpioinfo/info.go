package main

import "strings"

// Chip is one GPIO chip as the kernel describes it.
type Chip struct {
	Path  string `json:"path"`
	Name  string `json:"name"`
	Label string `json:"label"`
	Lines []Line `json:"lines"`
}

// Line is one line's info. Direction is "input" or "output"; Bias
// "pull-up", "pull-down", "disabled" or "" (none requested); Edge
// "rising", "falling", "both" or "".
type Line struct {
	Offset    int    `json:"offset"`
	Name      string `json:"name"`
	Consumer  string `json:"consumer"`
	Used      bool   `json:"used"`
	Direction string `json:"direction"`
	Bias      string `json:"bias"`
	Edge      string `json:"edge"`
	ActiveLow bool   `json:"activeLow"`
	Drive     string `json:"drive"`
}

// The line info flags of the uAPI v2 (linux/gpio.h, enum
// gpio_v2_line_flag).
const (
	flagUsed          = 1 << 0
	flagActiveLow     = 1 << 1
	flagInput         = 1 << 2
	flagOutput        = 1 << 3
	flagEdgeRising    = 1 << 4
	flagEdgeFalling   = 1 << 5
	flagOpenDrain     = 1 << 6
	flagOpenSource    = 1 << 7
	flagBiasPullUp    = 1 << 8
	flagBiasPullDown  = 1 << 9
	flagBiasDisabled  = 1 << 10
	flagsEdgeBoth     = flagEdgeRising | flagEdgeFalling
	flagsOpenDrainSrc = flagOpenDrain | flagOpenSource
)

// decodeLine turns the kernel's flags into the words of Line.
func decodeLine(offset int, name, consumer string, flags uint64) Line {
	l := Line{
		Offset: offset, Name: name, Consumer: consumer,
		Used: flags&flagUsed != 0, ActiveLow: flags&flagActiveLow != 0,
		Direction: "input", Drive: "push-pull",
	}
	if flags&flagOutput != 0 {
		l.Direction = "output"
	}
	switch {
	case flags&flagBiasPullUp != 0:
		l.Bias = "pull-up"
	case flags&flagBiasPullDown != 0:
		l.Bias = "pull-down"
	case flags&flagBiasDisabled != 0:
		l.Bias = "disabled"
	}
	switch flags & flagsEdgeBoth {
	case flagsEdgeBoth:
		l.Edge = "both"
	case flagEdgeRising:
		l.Edge = "rising"
	case flagEdgeFalling:
		l.Edge = "falling"
	}
	switch flags & flagsOpenDrainSrc {
	case flagOpenDrain:
		l.Drive = "open-drain"
	case flagOpenSource:
		l.Drive = "open-source"
	}
	return l
}

// cString is a NUL-terminated C string of a fixed-size field.
func cString(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\x00")
	return s
}
