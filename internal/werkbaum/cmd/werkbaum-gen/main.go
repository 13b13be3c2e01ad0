// Command werkbaum-gen prints a generated Werkbaum plan (package gen): the benchmark plans,
// for tools outside Go such as the Node benchmark (testdata/bench/node-bench.js).
//
//	werkbaum-gen [-shape plan|flat|deep|coupled] [-seed N] [-depth D] [-width W] NODES
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"talkd/internal/werkbaum/gen"
)

var errUsage = errors.New("usage: werkbaum-gen [-shape plan|flat|deep|coupled] [-seed N] [-depth D] [-width W] NODES")

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "werkbaum-gen:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("werkbaum-gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shape := fs.String("shape", "plan", "plan (realistic), flat (one wide group), deep (long chains) or coupled (NODES two-way groups coupled by deps, issue 33)")
	seed := fs.Uint("seed", 1, "seed of the generator")
	depth := fs.Int("depth", 300, "levels of a deep plan")
	width := fs.Int("width", 20, "steps below each option of a coupled plan")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		return errUsage
	}
	n, err := strconv.Atoi(fs.Arg(0))
	if err != nil || n < 1 {
		return fmt.Errorf("NODES must be a positive number, not %q", fs.Arg(0))
	}
	var text string
	switch *shape {
	case "plan":
		text = gen.Plan(n, uint32(*seed))
	case "flat":
		text = gen.Flat(n, uint32(*seed))
	case "deep":
		if *depth < 1 {
			return fmt.Errorf("-depth must be positive, not %d", *depth)
		}
		text = gen.Deep(n, *depth, uint32(*seed))
	case "coupled":
		if *width < 0 || n > 30 {
			return fmt.Errorf("a coupled plan takes 1-30 groups as NODES and -width ≥ 0, not %d and %d", n, *width)
		}
		text = gen.Coupled(n, *width, uint32(*seed))
	default:
		return fmt.Errorf("unknown -shape %q (plan, flat, deep or coupled)", *shape)
	}
	_, err = io.WriteString(stdout, text)
	return err
}
