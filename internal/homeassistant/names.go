package homeassistant

import (
	"regexp"
	"strings"
)

// valueHint is a parenthesised note in a label that says what a value
// means: "(true = open)", "(0 = open)", "(true = at the end stop)". It
// is written for people reading the raw value (the CLI, the console);
// in Home Assistant the entity shows on/off, Open/Closed or a number
// with its unit, and the note in its name reads as noise ("Door contact
// (true = open)" on a card that already says Open). Other parentheses
// ("(DHT22)") are part of the name and stay.
var valueHint = regexp.MustCompile(`\s*\([^()]*=[^()]*\)`)

// spaces are runs of white space left where a hint was cut out.
var spaces = regexp.MustCompile(`\s{2,}`)

// entityName is a label without its value hints, for an entity's name.
// A label that is nothing but a hint keeps it (a name is better than
// none).
func entityName(label string) string {
	n := strings.TrimSpace(spaces.ReplaceAllString(valueHint.ReplaceAllString(label, ""), " "))
	if n == "" {
		return strings.TrimSpace(label)
	}
	return n
}
