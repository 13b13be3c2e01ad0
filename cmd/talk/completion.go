package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"talkd/internal/hostsetup"
)

func completionCommand() command {
	return command{
		name: "completion", usage: "completion bash|zsh|fish", summary: "print a shell completion script for talk",
		detail: `Load it in the running shell or install it:
  bash:  source <(talk completion bash)     or  talk completion bash > ~/.local/share/bash-completion/completions/talk
  zsh:   source <(talk completion zsh)      (after compinit)
  fish:  talk completion fish > ~/.config/fish/completions/talk.fish
The script completes the commands and each command's flags, as talk --help lists them.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(_ context.Context, args []string) int {
				cmd, _ := findCommand("completion")
				if len(args) != 1 {
					return a.usage(cmd, "give one shell: bash, zsh or fish")
				}
				spec := completionSpec()
				switch args[0] {
				case "bash":
					writeBash(a.stdout, spec)
				case "zsh":
					writeZsh(a.stdout, spec)
				case "fish":
					writeFish(a.stdout, spec)
				default:
					return a.usage(cmd, "unknown shell %q: give bash, zsh or fish", args[0])
				}
				return exitOK
			}
		},
	}
}

// completionCmd is one command with its flags as a shell sees them.
type completionCmd struct {
	name, summary string
	flags         []completionFlag
}

type completionFlag struct {
	name, usage string
}

// completionSpec reads the commands and their flags from the same definitions talk
// parses with, so completion never offers a flag that does not exist.
func completionSpec() []completionCmd {
	var out []completionCmd
	for _, c := range commands() {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		a := &app{opts: options{timeout: defaultTimeout}}
		c.define(fs, a)
		a.commonFlags(fs, c)
		cc := completionCmd{name: c.name, summary: c.summary}
		fs.VisitAll(func(f *flag.Flag) {
			_, usage := flag.UnquoteUsage(f)
			cc.flags = append(cc.flags, completionFlag{name: f.Name, usage: usage})
		})
		sort.Slice(cc.flags, func(i, j int) bool { return cc.flags[i].name < cc.flags[j].name })
		out = append(out, cc)
	}
	return out
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func writeBash(w io.Writer, spec []completionCmd) {
	var names []string
	fmt.Fprintln(w, "# bash completion for talk (talk completion bash)")
	fmt.Fprintln(w, "_talk() {")
	fmt.Fprintln(w, `  local cur="${COMP_WORDS[COMP_CWORD]}" cmd="" i`)
	fmt.Fprintln(w, `  for ((i = 1; i < COMP_CWORD; i++)); do case "${COMP_WORDS[i]}" in -*) ;; *) cmd="${COMP_WORDS[i]}"; break;; esac; done`)
	fmt.Fprintln(w, `  case "$cmd" in`)
	for _, c := range spec {
		names = append(names, c.name)
		var flags []string
		for _, f := range c.flags {
			flags = append(flags, dashed(f.name))
		}
		extra := ""
		switch c.name {
		case "help":
			extra = " " + strings.Join(commandNames(spec), " ")
		case "service":
			extra = " install uninstall status"
		case "completion":
			extra = " bash zsh fish"
		case "setup", "hook":
			extra = " " + strings.Join(hostsetup.Names(), " ")
		case "plan":
			extra = " show inspect set-status add move remove set-size open"
		}
		fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", c.name, strings.Join(flags, " ")+extra)
	}
	fmt.Fprintf(w, "    *) COMPREPLY=($(compgen -W %q -- \"$cur\"));;\n", strings.Join(names, " ")+" --url --timeout --json --version --help")
	fmt.Fprintln(w, "  esac")
	fmt.Fprintln(w, "}")
	fmt.Fprintln(w, "complete -F _talk talk")
}

func commandNames(spec []completionCmd) []string {
	var n []string
	for _, c := range spec {
		n = append(n, c.name)
	}
	return n
}

// zshQuote makes s safe inside single quotes and _arguments' [description].
func zshQuote(s string) string {
	return strings.NewReplacer("'", "'\\''", "[", "(", "]", ")", ":", " -").Replace(s)
}

func writeZsh(w io.Writer, spec []completionCmd) {
	fmt.Fprintln(w, "#compdef talk")
	fmt.Fprintln(w, "# zsh completion for talk (talk completion zsh)")
	fmt.Fprintln(w, "_talk() {")
	fmt.Fprintln(w, "  local -a cmds")
	fmt.Fprintln(w, "  cmds=(")
	for _, c := range spec {
		fmt.Fprintf(w, "    '%s:%s'\n", c.name, zshQuote(c.summary))
	}
	fmt.Fprintln(w, "  )")
	fmt.Fprintln(w, "  if (( CURRENT == 2 )); then _describe 'talk command' cmds; return; fi")
	fmt.Fprintln(w, `  case "${words[2]}" in`)
	for _, c := range spec {
		fmt.Fprintf(w, "    %s) _arguments", c.name)
		for _, f := range c.flags {
			fmt.Fprintf(w, " '%s[%s]'", dashed(f.name), zshQuote(f.usage))
		}
		fmt.Fprintln(w, " '*:argument:_default';;")
	}
	fmt.Fprintln(w, "  esac")
	fmt.Fprintln(w, "}")
	fmt.Fprintln(w, `if [[ "${funcstack[1]}" == _talk ]]; then _talk "$@"; else compdef _talk talk; fi`)
}

func writeFish(w io.Writer, spec []completionCmd) {
	fmt.Fprintln(w, "# fish completion for talk (talk completion fish)")
	fmt.Fprintln(w, "complete -c talk -f")
	names := strings.Join(commandNames(spec), " ")
	for _, c := range spec {
		fmt.Fprintf(w, "complete -c talk -n 'not __fish_seen_subcommand_from %s' -a %s -d '%s'\n", names, c.name, strings.ReplaceAll(c.summary, "'", "\\'"))
		for _, f := range c.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-s " + f.name
			}
			fmt.Fprintf(w, "complete -c talk -n '__fish_seen_subcommand_from %s' %s -d '%s'\n", c.name, opt, strings.ReplaceAll(f.usage, "'", "\\'"))
		}
	}
}
