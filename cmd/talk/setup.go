package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"talkd/internal/hostsetup"
)

func setupCommand() command {
	return command{
		name: "setup", usage: "setup [--remove] [HOST…]",
		summary: "wire talkd into an agent host: its hooks speak when the agent is done or needs you",
		detail: `HOST is one or more of: ` + strings.Join(hostsetup.Names(), ", ") + `. talk setup merges into the
host's own files, keeping every other key, hook and comment:
  claude-code  hooks Stop, SubagentStop, Notification in ~/.claude/settings.json;
               MCP server talk in ~/.claude.json
               (--project DIR: DIR/.claude/settings.json and DIR/.mcp.json)
  codex        notify = [talk, "hook", "codex"] and [mcp_servers.talk] in
               ~/.codex/config.toml ($CODEX_HOME); refuses when another notify program
               is set, since Codex runs only one
  gemini       hooks AfterAgent, Notification and MCP server talk in
               ~/.gemini/settings.json (--project DIR: DIR/.gemini/settings.json)
  cursor       hooks afterAgentResponse, stop in ~/.cursor/hooks.json; MCP server talk
               in ~/.cursor/mcp.json (--project DIR: DIR/.cursor/…)
The hooks run talk hook HOST (see talk help hook) and the MCP entry runs talk mcp, both
with this talk's absolute path (--talk PATH to name another). A second setup changes
nothing. The first change of a file keeps it as it was in NAME` + hostsetup.BackupSuffix + `;
--remove puts that copy back byte for byte when the file is as setup left it, else takes
out only talkd's entries (your later changes stay). An MCP entry called talk that you
wrote yourself (e.g. over HTTP) is kept. Exit 1 when a file cannot be read or merged
(nothing of that host is written then). Without HOST, talk setup changes nothing and
shows for every host whether its files carry talkd's entries.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var remove bool
			var project, talk string
			fs.BoolVar(&remove, "remove", false, "take talkd's hooks and MCP entry out again")
			fs.StringVar(&project, "project", "", "change the project `DIR`'s config files instead of yours")
			fs.StringVar(&talk, "talk", "", "the talk binary the hooks run (`PATH`; default: this one)")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("setup")
				if len(args) == 0 {
					if remove {
						return a.usage(cmd, "name the host(s) to remove: %s", strings.Join(hostsetup.Names(), ", "))
					}
					return a.setupStatus(project, talk)
				}
				var hosts []hostsetup.Host
				for _, name := range args {
					h, ok := hostsetup.Find(name)
					if !ok {
						return a.usage(cmd, "unknown host %q: use %s", name, strings.Join(hostsetup.Names(), ", "))
					}
					hosts = append(hosts, h)
				}
				o, err := a.setupOptions(project, talk)
				if err != nil {
					a.warnf("%v", err)
					return exitFailure
				}
				code := exitOK
				for _, h := range hosts {
					var changes []hostsetup.Change
					if remove {
						changes, err = h.Remove(o)
					} else {
						changes, err = h.Setup(o)
					}
					a.printChanges(h, changes, o.Home)
					if err != nil {
						a.warnf("%s: %v", h.Title, err)
						code = exitFailure
						continue
					}
					if !remove {
						fmt.Fprintf(a.stdout, "%s: talkd now speaks when the agent finishes or needs you (restart %s if it runs); undo with: talk setup --remove %s\n",
							h.Title, h.Title, h.Name)
					}
				}
				return code
			}
		},
	}
}

// setupStatus shows, for every host, whether talkd's entries are in its files.
func (a *app) setupStatus(project, talk string) int {
	o, err := a.setupOptions(project, talk)
	if err != nil {
		a.warnf("%v", err)
		return exitFailure
	}
	for _, h := range hostsetup.Hosts() {
		if o.Project != "" && !h.Project {
			continue
		}
		changes, err := h.Status(o)
		if err != nil {
			a.warnf("%s: %v", h.Title, err)
			continue
		}
		fmt.Fprintf(a.stdout, "%s (talk setup %s):\n", h.Title, h.Name)
		a.printChanges(h, changes, o.Home)
	}
	return exitOK
}

func (a *app) setupOptions(project, talk string) (hostsetup.Options, error) {
	o := hostsetup.Options{Home: a.getenv("HOME"), CodexHome: a.getenv("CODEX_HOME")}
	if talk == "" {
		self, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("cannot tell where this talk is (%v); pass --talk PATH", err)
		}
		talk = self
	}
	abs, err := filepath.Abs(talk)
	if err != nil {
		return o, fmt.Errorf("--talk %s: %w", talk, err)
	}
	if !isFile(abs) {
		return o, fmt.Errorf("--talk %s: not a file", talk)
	}
	o.Talk = abs
	if project != "" {
		p, err := filepath.Abs(project)
		if err != nil {
			return o, fmt.Errorf("--project %s: %w", project, err)
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return o, fmt.Errorf("--project %s: not a folder", project)
		}
		o.Project = p
	}
	return o, nil
}

// printChanges says per file what happened, with ~ for the home folder.
func (a *app) printChanges(h hostsetup.Host, changes []hostsetup.Change, home string) {
	short := func(p string) string {
		if home != "" && strings.HasPrefix(p, home+string(filepath.Separator)) {
			return "~" + p[len(home):]
		}
		return p
	}
	for _, c := range changes {
		fmt.Fprintf(a.stdout, "%-9s %s (%s)\n", c.Action, short(c.Path), c.What)
		for _, n := range c.Notes {
			if i := strings.LastIndex(n, " "+home+string(filepath.Separator)); home != "" && i >= 0 {
				n = n[:i+1] + short(n[i+1:])
			}
			fmt.Fprintf(a.stdout, "          %s\n", n)
		}
	}
}
