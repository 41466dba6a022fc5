package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// The uAPI's structures (linux/gpio.h) and ioctl numbers: _IOR(0xB4, 1,
// struct gpiochip_info) and _IOWR(0xB4, 5, struct gpio_v2_line_info), in
// the generic encoding arm64 and amd64 share.
type chipInfo struct {
	name, label [32]byte
	lines       uint32
}

type lineAttr struct {
	id, _ uint32
	value uint64
}

type lineInfo struct {
	name, consumer [32]byte
	offset         uint32
	numAttrs       uint32
	flags          uint64
	attrs          [10]lineAttr
	_              [4]uint32
}

const (
	ioctlChipInfo = 2<<30 | uintptr(unsafe.Sizeof(chipInfo{}))<<16 | 0xB4<<8 | 0x01
	ioctlLineInfo = 3<<30 | uintptr(unsafe.Sizeof(lineInfo{}))<<16 | 0xB4<<8 | 0x05
)

func ioctl(fd uintptr, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

// readChip reads a chip's info and each of its lines' info.
func readChip(path string) (Chip, error) {
	f, err := os.Open(path)
	if err != nil {
		return Chip{}, err
	}
	defer f.Close()
	var ci chipInfo
	if err := ioctl(f.Fd(), ioctlChipInfo, unsafe.Pointer(&ci)); err != nil {
		return Chip{}, fmt.Errorf("%s: chip info: %w", path, err)
	}
	c := Chip{Path: path, Name: cString(ci.name[:]), Label: cString(ci.label[:]), Lines: []Line{}}
	if c.Name == "" {
		c.Name = filepath.Base(path)
	}
	for off := uint32(0); off < ci.lines; off++ {
		li := lineInfo{offset: off}
		if err := ioctl(f.Fd(), ioctlLineInfo, unsafe.Pointer(&li)); err != nil {
			return Chip{}, fmt.Errorf("%s: line %d info: %w", path, off, err)
		}
		c.Lines = append(c.Lines, decodeLine(int(off), cString(li.name[:]), cString(li.consumer[:]), li.flags))
	}
	return c, nil
}
