package main

import (
	"debug/buildinfo"
	"fmt"
	"sort"
	"strings"
)

// grouping puts a package in its row: its module, the main module's
// subsystem, or the part of the standard library it belongs to. It
// knows the modules from the build information the binary carries.
type grouping struct {
	main    string   // the main module's path
	mainPkg string   // the main package's path (package main's row)
	deps    []string // module paths, longest first
}

func readGrouping(path string) (grouping, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return grouping{}, fmt.Errorf("read the build information of %s: %w", path, err)
	}
	g := grouping{main: bi.Main.Path, mainPkg: bi.Path}
	for _, d := range bi.Deps {
		g.deps = append(g.deps, d.Path)
	}
	sort.Slice(g.deps, func(i, j int) bool { return len(g.deps[i]) > len(g.deps[j]) })
	return g, nil
}

// of returns pkg's row: "./internal/halhub" for a package of the main
// module, a module's path, or "std: PART" for the standard library.
func (g grouping) of(pkg string) string {
	if pkg == "main" {
		pkg = g.mainPkg
	}
	if within(pkg, g.main) {
		return subsystem(strings.TrimPrefix(pkg, g.main))
	}
	for _, d := range g.deps {
		if within(pkg, d) {
			return d
		}
	}
	return "std: " + stdPart(pkg)
}

// subsystem names the main module's package by its top folder, or by
// its folder under a folder of many (internal/, cmd/, adapters/,
// scripts/): "/internal/halhub/token" is "./internal/halhub",
// "/halclient" is "./halclient".
func subsystem(rel string) string {
	parts := strings.Split(strings.TrimPrefix(rel, "/"), "/")
	n := 1
	if len(parts) > 1 && manyFolders[parts[0]] {
		n = 2
	}
	return "./" + strings.Join(parts[:min(n, len(parts))], "/")
}

var manyFolders = map[string]bool{"internal": true, "cmd": true, "adapters": true, "scripts": true}

func within(pkg, module string) bool {
	return pkg == module || strings.HasPrefix(pkg, module+"/")
}

// stdParts group the standard library by what it gives the binary; the
// first prefix that matches wins.
var stdParts = []struct{ prefix, part string }{
	{"runtime", "runtime"},
	{"internal/runtime", "runtime"},
	{"internal/abi", "runtime"},
	{"internal/bytealg", "runtime"},
	{"internal/cpu", "runtime"},
	{"internal/sync", "runtime"},
	{"sync", "runtime"},
	{"crypto", "crypto and TLS"},
	{"vendor/golang.org/x/crypto", "crypto and TLS"},
	{"math/big", "crypto and TLS"},
	{"encoding/asn1", "crypto and TLS"},
	{"encoding/pem", "crypto and TLS"},
	{"net/http", "net/http"},
	{"vendor/golang.org/x/net/http", "net/http"},
	{"vendor/golang.org/x/net/http2", "net/http"},
	{"vendor/golang.org/x/net/idna", "net/http"},
	{"vendor/golang.org/x/text", "net/http"},
	{"mime", "net/http"},
	{"net/textproto", "net/http"},
	{"compress", "net/http"},
	{"net", "net"},
	{"vendor/golang.org/x/net", "net"},
	{"internal/poll", "net"},
	{"os", "os, syscall, time"},
	{"syscall", "os, syscall, time"},
	{"internal/syscall", "os, syscall, time"},
	{"time", "os, syscall, time"},
	{"reflect", "reflect, fmt, strconv"},
	{"internal/reflectlite", "reflect, fmt, strconv"},
	{"fmt", "reflect, fmt, strconv"},
	{"strconv", "reflect, fmt, strconv"},
	{"internal/strconv", "reflect, fmt, strconv"},
	{"internal/fmtsort", "reflect, fmt, strconv"},
	{"encoding/json", "encoding/json"},
	{"encoding/gob", "encoding/gob"},
	{"encoding", "encoding: binary, base64..."},
	{"unicode", "text: unicode, regexp, strings"},
	{"regexp", "text: unicode, regexp, strings"},
	{"strings", "text: unicode, regexp, strings"},
	{"bytes", "text: unicode, regexp, strings"},
	{"text", "text: unicode, regexp, strings"},
	{"slices", "generic: slices, maps, sort"},
	{"maps", "generic: slices, maps, sort"},
	{"sort", "generic: slices, maps, sort"},
	{"iter", "generic: slices, maps, sort"},
	{"log", "log, log/slog"},
}

func stdPart(pkg string) string {
	for _, p := range stdParts {
		if within(pkg, p.prefix) {
			return p.part
		}
	}
	return "other"
}
