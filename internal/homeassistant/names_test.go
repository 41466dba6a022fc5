package homeassistant

import "testing"

// A label's value hints are left out of the entity's name; other
// parentheses stay.
func TestEntityName(t *testing.T) {
	tests := []struct{ label, want string }{
		{"Door contact (true = open)", "Door contact"},
		{"Button (true = pressed)", "Button"},
		{"Window (TRUE=open)", "Window"},
		{"Gripper (0 = open)", "Gripper"},
		{"Shoulder limit (true = at the end stop)", "Shoulder limit"},
		{"Valve (true = open) north", "Valve north"},
		{"Air temperature and humidity (DHT22)", "Air temperature and humidity (DHT22)"},
		{"Heater relay", "Heater relay"},
		{"(true = open)", "(true = open)"}, // nothing else: better than no name
		{"", ""},
	}
	for _, tt := range tests {
		if got := entityName(tt.label); got != tt.want {
			t.Errorf("entityName(%q) = %q, want %q", tt.label, got, tt.want)
		}
	}
}
