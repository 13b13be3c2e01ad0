package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"talkd/internal/config"
	"talkd/internal/werkbaum/vocab"
)

// planDetail is plan's help text; its status words and boxes come from the notation's
// vocabulary (vocab.Notation, generated from the engine's scripts).
var planDetail = `SUBCOMMAND is show, inspect, set-status, add, move, remove or set-size:
  show KEY                      print the plan's text as stored (werkbaum_read); terminal
                                control characters in it are shown escaped (\x1b), as in
                                all human output; --json (exact text):
                                {"base":{"revision","checksum"},"lines","from","to","text"}
  inspect KEY [--id ID]         the notation's reading (werkbaum_inspect): the tree with
                                statuses, warnings with line numbers, the cheapest path's
                                stations and assignee loads; --id limits it to a subtree;
                                --json: {"base","nodes","warnings","path"}
  set-status KEY ID STATUS      set a node's status: a status key or a box code (below),
                                or ` + vocab.Notation.Neutral[0] + ` to remove the box; reads the base, writes
                                with a fresh request id, and re-applies on a fresh base up
                                to 3 times when another writer got in between. Refused by
                                the guards (new structural warnings, newly [^]) unless
                                --allow-warnings / --allow-prod. --json: the write result
                                {"base","revision","changed","warningCount","added","removed"}
  add KEY PARENT LINE [--after ID]
                                add a node line (e.g. "- [ ] #t: Token check (S) @anna",
                                without indentation) as the last child of PARENT (- for a
                                new root), or right after its child --after ID
  move KEY ID PARENT [--after ID]
                                move a node with its subtree under PARENT (- for the top
                                level), as the last child or after --after ID
  remove KEY ID [--discard]     delete a node with its subtree and description; --discard
                                marks it [-] instead (kept, hidden)
  set-size KEY ID SIZE          set a node's size (` + strings.Join(vocab.Notation.Sizes, ", ") + `), or - to remove it
  The writes (set-status and these) all read the base, write with a fresh request id,
  re-apply on a fresh base up to 3 times when another writer got in between, take
  --allow-warnings and --allow-prod, and with --json print the write result.
  open KEY [--browser] [--editor URL]
                                print the Werkbaum editor's link that edits the plan live
                                (<editor>?live=<its document URL>); --browser opens it.
                                The editor is --editor, else [editor] url of the talkd
                                config, else ` + config.DefaultEditorURL + `; its origin must be
                                in [editor] origins (talk says so when it is not).
                                --json: {"key","document","editor","url"}
Status boxes: ` + statusLegend(vocab.Notation) + `
A refused operation (unknown plan or id, conflict, guard) exits 4 with the daemon's text.
Plan text is anyone's input: in human output (and every message on stderr) control
characters other than tab and line breaks — ESC sequences, C1 codes, DEL, a lone CR —
are printed as escapes like \x1b, so a label cannot retitle, clear or hide your
terminal. --json output is JSON and carries the text unchanged.`

func planCommand() command {
	return command{
		name: "plan", usage: "plan SUBCOMMAND KEY …", summary: "read, inspect and update one Werkbaum plan, or open it in the editor",
		data: true, detail: planDetail,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var id string
			var allowWarnings, allowProd bool
			fs.StringVar(&id, "id", "", "inspect: show only the subtree of the node with this `ID`")
			var after string
			var discard bool
			fs.BoolVar(&allowWarnings, "allow-warnings", false, "writes: write even if the result has new structural warnings")
			fs.BoolVar(&allowProd, "allow-prod", false, "writes: allow a node to newly carry [^] (in production)")
			fs.StringVar(&after, "after", "", "add, move: place the node right after this sibling `ID`")
			fs.BoolVar(&discard, "discard", false, "remove: mark the node [-] (kept, hidden) instead of deleting it")
			open := defineOpenFlags(fs)
			return func(ctx context.Context, args []string) int {
				a.neutraliseTerminal()
				cmd, _ := findCommand("plan")
				if len(args) == 0 {
					return a.usage(cmd, "give a subcommand: show, inspect, set-status, add, move, remove, set-size or open")
				}
				sub, rest := args[0], args[1:]
				if id != "" && sub != "inspect" {
					return a.usage(cmd, "--id belongs to plan inspect")
				}
				write := planWriteGuards{allowWarnings: allowWarnings, allowProd: allowProd}
				if (allowWarnings || allowProd) && (sub == "show" || sub == "inspect") {
					return a.usage(cmd, "--allow-warnings and --allow-prod belong to the plan writes")
				}
				if after != "" && sub != "add" && sub != "move" {
					return a.usage(cmd, "--after belongs to plan add and plan move")
				}
				if discard && sub != "remove" {
					return a.usage(cmd, "--discard belongs to plan remove")
				}
				if open.used() && sub != "open" {
					return a.usage(cmd, "--browser and --editor belong to plan open")
				}
				if edit, ok := planEdits[sub]; ok {
					if len(rest) != edit.args {
						return a.usage(cmd, "plan %s takes %s", sub, edit.usage)
					}
					return a.planEdit(ctx, sub, rest, strings.TrimPrefix(after, "#"), discard, write)
				}
				switch sub {
				case "show":
					if len(rest) != 1 {
						return a.usage(cmd, "plan show takes exactly one plan KEY")
					}
					return a.planShow(ctx, rest[0])
				case "inspect":
					if len(rest) != 1 {
						return a.usage(cmd, "plan inspect takes exactly one plan KEY (and --id ID)")
					}
					return a.planInspect(ctx, rest[0], strings.TrimPrefix(id, "#"))
				case "set-status":
					if len(rest) != 3 {
						return a.usage(cmd, "plan set-status takes KEY ID STATUS")
					}
					id, status := strings.TrimPrefix(rest[1], "#"), rest[2]
					return a.planWrite(ctx, rest[0], "werkbaum_set_status", map[string]any{"id": id, "status": status}, write,
						func(wr writeResult) string {
							if wr.Changed {
								return fmt.Sprintf("#%s set to %s", id, status)
							}
							return fmt.Sprintf("#%s already had status %s, nothing changed", id, status)
						})
				case "open":
					if len(rest) != 1 {
						return a.usage(cmd, "plan open takes exactly one plan KEY")
					}
					return a.planOpen(ctx, rest[0], open)
				}
				return a.usage(cmd, "unknown subcommand %q: use show, inspect, set-status, add, move, remove, set-size or open", sub)
			}
		},
	}
}
