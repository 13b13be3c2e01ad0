// Command werkbaum-inspect prints what the talkd notation engine sees in a plan file: the
// MCP inspect view by default, or the full analysis of NOTATION.md §28 (-analyze), the
// format of the shared examples' *.expected.json. It is a debugging aid for people and a
// fixture generator for tests; it runs exactly the engine the daemon runs.
//
//	werkbaum-inspect [-analyze] [-id ID] [-include tree,warnings,path] [-discarded] PLAN
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"talkd/internal/werkbaum"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "werkbaum-inspect:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: werkbaum-inspect [-analyze] [-id ID] [-include tree,warnings,path] [-discarded] PLAN")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("werkbaum-inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	analyze := fs.Bool("analyze", false, "print the full §28 analysis instead of the inspect view")
	id := fs.String("id", "", "limit the inspect view to the subtree of this node id")
	include := fs.String("include", "", "comma-separated parts of the inspect view: tree, warnings, path")
	discarded := fs.Bool("discarded", false, "with -analyze: keep discarded root trees in view")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		return errUsage
	}
	path := fs.Arg(0)
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	eng, err := werkbaum.NewEngine(werkbaum.Options{Runtimes: 1, CacheEntries: -1})
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if *analyze {
		raw, err = eng.Analyze(ctx, string(text), werkbaum.AnalyzeOptions{File: filepath.Base(path), ShowDiscarded: *discarded})
	} else {
		opts := werkbaum.InspectOptions{ID: *id}
		if *include != "" {
			opts.Include = strings.Split(*include, ",")
		}
		raw, err = eng.InspectJSON(ctx, string(text), opts)
	}
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return fmt.Errorf("engine answer is not JSON: %w", err)
	}
	out.WriteByte('\n')
	_, err = stdout.Write(out.Bytes())
	return err
}
