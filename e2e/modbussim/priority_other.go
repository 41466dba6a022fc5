//go:build !unix

package modbussim

// prioritize does nothing where there is no nice value.
func prioritize(int) error { return nil }
