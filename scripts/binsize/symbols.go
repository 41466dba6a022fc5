package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"strings"
)

// symbol is a sized symbol in a loaded, file-backed section.
type symbol struct {
	name string
	size int64
	code bool
}

// readSymbols returns the binary's symbols that take room in the file
// (not .bss) and the size of its loaded, file-backed sections.
func readSymbols(path string) ([]symbol, int64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w (binsize reads ELF binaries)", path, err)
	}
	defer f.Close()
	var loaded int64
	for _, s := range f.Sections {
		if inFile(s) {
			loaded += int64(s.Size)
		}
	}
	all, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, 0, fmt.Errorf("read the symbols of %s: %w", path, err)
	}
	var syms []symbol
	for _, s := range all {
		if s.Size == 0 || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		if !inFile(sec) {
			continue
		}
		syms = append(syms, symbol{name: s.Name, size: int64(s.Size), code: sec.Flags&elf.SHF_EXECINSTR != 0})
	}
	return syms, loaded, nil
}

// inFile reports whether a section is loaded and takes room in the file.
func inFile(s *elf.Section) bool {
	return s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS
}

// packageOf returns the import path of the package a symbol belongs to,
// or "" for the linker's own tables (go:func.*, go:string.*, type:*...).
// An itab is its concrete type's: "go:itab.*net/http.conn,io.Reader" is
// net/http's. A generic function's instances are its package's, whatever
// their type arguments.
func packageOf(name string) string {
	if rest, ok := strings.CutPrefix(name, "go:itab."); ok {
		concrete, _, _ := strings.Cut(rest, ",")
		name = strings.TrimPrefix(concrete, "*")
	}
	if strings.HasPrefix(name, "go:") || strings.HasPrefix(name, "type:") || strings.HasPrefix(name, "$") {
		return ""
	}
	// The path ends at the first dot after its last slash; a slash inside
	// a receiver or a type argument ("(*T)", "[...]") is not the path's.
	end := len(name)
	if i := strings.IndexAny(name, "(["); i >= 0 {
		end = i
	}
	start := strings.LastIndexByte(name[:end], '/') + 1
	dot := strings.IndexByte(name[start:end], '.')
	if dot < 0 {
		return ""
	}
	return name[:start+dot]
}
