// Binsize prints what each dependency costs a Go binary: the bytes of
// its code and data in the symbol table, and its estimated share of the
// stripped binary. It is `make size`'s table (docs/size.md).
//
// Usage:
//
//	binsize [-packages] [-stripped FILE] [-budget BYTES] BINARY
//
// BINARY is a build with its symbol table (without -ldflags '-s -w');
// FILE is the same build stripped, whose size the shares add up to and
// which -budget checks. Without -stripped the shares add up to BINARY's
// loaded sections.
//
// Rows are modules; the standard library is grouped by what it gives the
// binary (runtime, crypto and TLS, net/http...), and the main module by
// subsystem (./internal/halhub, ./cmd/gateway...). -packages gives one
// row per package instead.
//
// A row's code is exact: the sizes of its functions. Its data is its
// named variables and tables. What the symbol table does not name (the
// function table .gopclntab, the funcdata in go:func.*, type descriptors,
// string data) is shared out in proportion to code, which is how most of
// it grows: per function. The share is an estimate; building without a
// dependency measures it (docs/size.md says which were measured so).
//
// It lives in scripts/ beside the other programs that make runs for the
// developer: it is not shipped, and reads no more than the two files.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("binsize", flag.ContinueOnError)
	packages := fs.Bool("packages", false, "one row per package rather than per module")
	stripped := fs.String("stripped", "", "the same build with -ldflags '-s -w', whose size the shares add up to")
	budget := fs.Int64("budget", 0, "the most bytes the stripped build may have (0: no check)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: binsize [-packages] [-stripped FILE] [-budget BYTES] BINARY")
	}
	if *budget > 0 && *stripped == "" {
		return errors.New("-budget checks the stripped build: give it with -stripped")
	}
	bin := fs.Arg(0)
	syms, loaded, err := readSymbols(bin)
	if err != nil {
		return err
	}
	if len(syms) == 0 {
		return fmt.Errorf("%s has no symbol table: build it without -ldflags '-s -w'", bin)
	}
	g, err := readGrouping(bin)
	if err != nil {
		return err
	}
	total := loaded
	if *stripped != "" {
		st, err := os.Stat(*stripped)
		if err != nil {
			return fmt.Errorf("size of the stripped build: %w", err)
		}
		total = st.Size()
	}
	group := g.of
	if *packages {
		group = func(pkg string) string { return pkg }
	}
	if err := printTable(stdout, tally(syms, group, total), total); err != nil {
		return err
	}
	if *budget > 0 {
		return checkBudget(stdout, *stripped, total, *budget)
	}
	return nil
}

// checkBudget says how far the stripped build is under its budget, and
// fails when it is over.
func checkBudget(w io.Writer, name string, size, budget int64) error {
	if size > budget {
		return fmt.Errorf("%s is %d bytes, %d over its budget of %d (%.2f MiB)", name, size, size-budget, budget, mib(budget))
	}
	_, err := fmt.Fprintf(w, "\n%s: %d bytes (%.2f MiB), %d under its budget of %d (%.2f MiB)\n",
		name, size, mib(size), budget-size, budget, mib(budget))
	return err
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
