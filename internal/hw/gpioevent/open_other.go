//go:build !linux

package gpioevent

import "errors"

// Open fails: GPIO lines' events come through Linux's character device.
func Open(path string, offset int, cfg Config) (*Line, error) {
	if _, err := cfg.request(offset); err != nil {
		return nil, err
	}
	return nil, errors.New("gpioevent: GPIO character devices are Linux's")
}
