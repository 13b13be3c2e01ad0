// Command vocabgen writes internal/werkbaum/vocab/notation_gen.go: the vocabulary the
// notation's scripts export (Werkbaum.vocabulary(), js/25_vocabulary.js), read from the
// same engine the daemon runs, as a Go value for programs that must not embed the engine.
// Run it through `go generate ./internal/werkbaum/vocab`.
//
//	vocabgen -o FILE
package main

import (
	"flag"
	"fmt"
	"os"

	"talkd/internal/werkbaum"
)

func main() {
	out := flag.String("o", "notation_gen.go", "the Go `file` to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "vocabgen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	e, err := werkbaum.NewEngine(werkbaum.Options{})
	if err != nil {
		return err
	}
	src, err := werkbaum.VocabularySource(e.Vocabulary())
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, src, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("replace %s: %w", out, err)
	}
	return nil
}
