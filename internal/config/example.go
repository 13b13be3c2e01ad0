package config

import _ "embed"

//go:embed example.toml
var example string

// Example is a config file that documents every key with its default value. It is what
// `talkd --print-config-example` prints and what the README copies, and a test loads it,
// so the documentation cannot drift from the code.
func Example() string { return example }
