package main

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
)

// row is what one group of packages costs.
type row struct {
	name       string
	code, data int64
	share      int64 // code + data + its part of what no symbol names
}

// tally sums the symbols by group and shares out the rest of total in
// proportion to code.
func tally(syms []symbol, group func(pkg string) string, total int64) []row {
	byName := map[string]*row{}
	var named, code int64
	for _, s := range syms {
		pkg := packageOf(s.name)
		if pkg == "" {
			continue // the linker's own tables: shared out below
		}
		g := group(pkg)
		r := byName[g]
		if r == nil {
			r = &row{name: g}
			byName[g] = r
		}
		if s.code {
			r.code += s.size
			code += s.size
		} else {
			r.data += s.size
		}
		named += s.size
	}
	rest := max(total-named, 0)
	rows := make([]row, 0, len(byName))
	for _, r := range byName {
		r.share = r.code + r.data
		if code > 0 {
			r.share += rest * r.code / code
		}
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].share != rows[j].share {
			return rows[i].share > rows[j].share
		}
		return rows[i].name < rows[j].name
	})
	return rows
}

func printTable(w io.Writer, rows []row, total int64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "code\tdata\tshare\t%%\t  %s\n", "module, subsystem or part of std")
	var sum int64
	for _, r := range rows {
		sum += r.share
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.1f\t  %s\n", r.code, r.data, r.share, percent(r.share, total), r.name)
	}
	fmt.Fprintf(tw, "\t\t%d\t%.1f\t  %s\n", sum, percent(sum, total), "total")
	return tw.Flush()
}

func percent(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(n) / float64(total)
}
