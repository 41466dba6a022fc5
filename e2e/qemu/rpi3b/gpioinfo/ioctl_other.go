//go:build !linux

package main

import "errors"

func readChip(path string) (Chip, error) {
	return Chip{}, errors.New("the GPIO character device is Linux's")
}
