// Package hostsetup wires talkd into the coding-agent hosts (Claude Code, Codex, Gemini
// CLI, Cursor): it merges the hooks that run `talk hook HOST` and the MCP entry that
// starts `talk mcp` into each host's own configuration files, and takes them out again.
//
// The files belong to the user and to the host, so every edit keeps every other key,
// hook and comment; a second setup changes nothing; the first edit of a file keeps a
// copy of it beside it (NAME.before-talk-setup); and a removal restores that copy byte
// for byte when nothing else changed since, else takes out exactly what setup added.
package hostsetup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// BackupSuffix names the copy of a file as it was before talk setup first changed it.
const BackupSuffix = ".before-talk-setup"

// MCPName is the key of talkd's MCP server in the hosts' configs (the README's name).
const MCPName = "talk"

// Options say whose files to change and what the entries run.
type Options struct {
	// Home is the user's home folder.
	Home string
	// Project, when set, is a project folder whose own config files are changed instead
	// of the user's (hosts that have project files).
	Project string
	// Talk is the absolute path of the talk binary the hooks and the MCP entry run.
	Talk string
	// CodexHome is $CODEX_HOME when set (Codex's config folder), else "".
	CodexHome string
}

// Change is what happened to one file.
type Change struct {
	Path   string
	What   string // what talkd's part of the file is: "hooks Stop, …", "MCP server talk"
	Action string // added, updated, unchanged, removed, restored, deleted, absent
	Notes  []string
}

// Host is one agent host talk setup knows.
type Host struct {
	Name    string // the argument of talk setup and talk hook
	Title   string // the host's own name
	Project bool   // whether the host reads project config files (--project)
	targets func(o Options) []target
}

// target is one file and the editor of talkd's part of it.
type target struct {
	path string
	what string
	ed   editor
}

// editor adds and removes talkd's part of one file's content. raw is nil for a file that
// does not exist.
type editor interface {
	add(raw []byte) (out []byte, changed bool, notes []string, err error)
	remove(raw []byte) (out []byte, changed bool, err error)
	// empty reports whether content holds nothing but what a fresh file would (so a
	// removal may delete a file that setup created).
	empty(raw []byte) bool
}

// Hosts lists the hosts in the order help shows them.
func Hosts() []Host {
	return []Host{claudeCode(), codex(), gemini(), cursor()}
}

// Find returns the host called name.
func Find(name string) (Host, bool) {
	for _, h := range Hosts() {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// Names lists the hosts' names.
func Names() []string {
	var n []string
	for _, h := range Hosts() {
		n = append(n, h.Name)
	}
	return n
}

func (h Host) check(o Options) error {
	if o.Project != "" && !h.Project {
		return fmt.Errorf("%s has no project config file that talk setup can write; run it without --project", h.Title)
	}
	if !filepath.IsAbs(o.Talk) {
		return fmt.Errorf("the talk binary's path %q is not absolute", o.Talk)
	}
	if o.Home == "" && o.Project == "" {
		return errors.New("HOME is not set")
	}
	return nil
}

// Setup merges talkd's hooks and MCP entry into the host's files. Every file is checked
// before any is written, so a file talk setup cannot read leaves all of them untouched.
func (h Host) Setup(o Options) ([]Change, error) {
	if err := h.check(o); err != nil {
		return nil, err
	}
	type planned struct {
		t       target
		raw     []byte
		exists  bool
		out     []byte
		changed bool
		notes   []string
	}
	var plan []planned
	for _, t := range h.targets(o) {
		raw, exists, err := readFile(t.path)
		if err != nil {
			return nil, err
		}
		out, changed, notes, err := t.ed.add(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w; nothing was changed", t.path, err)
		}
		plan = append(plan, planned{t, raw, exists, out, changed, notes})
	}
	var changes []Change
	for _, p := range plan {
		c := Change{Path: p.t.path, What: p.t.what, Action: "unchanged", Notes: p.notes}
		if p.changed {
			c.Action = "added"
			if p.exists {
				c.Action = "updated"
				backup := p.t.path + BackupSuffix
				if _, err := os.Stat(backup); errors.Is(err, fs.ErrNotExist) {
					if err := writeFile(backup, p.raw, p.t.path); err != nil {
						return changes, err
					}
					c.Notes = append(c.Notes, "the file as it was: "+backup)
				}
			}
			if err := writeFile(p.t.path, p.out, p.t.path); err != nil {
				return changes, err
			}
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// Status reports per file whether talkd's entries are in it as setup would write them:
// Action "set up", "not set up" (or "absent" for a missing file), "unreadable" with the
// reason in Notes. It changes nothing.
func (h Host) Status(o Options) ([]Change, error) {
	if err := h.check(o); err != nil {
		return nil, err
	}
	var out []Change
	for _, t := range h.targets(o) {
		c := Change{Path: t.path, What: t.what}
		raw, exists, err := readFile(t.path)
		switch {
		case err != nil:
			c.Action, c.Notes = "unreadable", []string{err.Error()}
		case !exists:
			c.Action = "absent"
		default:
			_, changed, notes, err := t.ed.add(raw)
			switch {
			case err != nil:
				c.Action, c.Notes = "unreadable", []string{err.Error()}
			case changed:
				c.Action = "not set up"
			default:
				c.Action, c.Notes = "set up", notes
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// Remove takes talkd's entries out of the host's files: a file unchanged since setup gets
// its backup back byte for byte (or is deleted when setup created it); otherwise only
// talkd's entries are removed and the rest stays as it is now.
func (h Host) Remove(o Options) ([]Change, error) {
	if err := h.check(o); err != nil {
		return nil, err
	}
	var changes []Change
	for _, t := range h.targets(o) {
		c := Change{Path: t.path, What: t.what}
		raw, exists, err := readFile(t.path)
		if err != nil {
			return changes, err
		}
		backupPath := t.path + BackupSuffix
		backup, hasBackup, err := readFile(backupPath)
		if err != nil {
			return changes, err
		}
		if !exists {
			c.Action = "absent"
			if hasBackup {
				c.Notes = append(c.Notes, "the file is gone; its copy from before talk setup is "+backupPath)
			}
			changes = append(changes, c)
			continue
		}
		// Unchanged since setup: what setup makes of the original (nil when setup created
		// the file) is exactly what is there.
		if out, _, _, err := t.ed.add(backup); err == nil && bytes.Equal(out, raw) {
			if hasBackup {
				if err := writeFile(t.path, backup, backupPath); err != nil {
					return changes, err
				}
				if err := os.Remove(backupPath); err != nil {
					return changes, fmt.Errorf("remove %s: %w", backupPath, err)
				}
				c.Action = "restored"
			} else {
				if err := os.Remove(t.path); err != nil {
					return changes, fmt.Errorf("remove %s: %w", t.path, err)
				}
				c.Action = "deleted"
				c.Notes = append(c.Notes, "talk setup had created it")
			}
			changes = append(changes, c)
			continue
		}
		out, changed, err := t.ed.remove(raw)
		if err != nil {
			return changes, fmt.Errorf("%s: %w; nothing was changed", t.path, err)
		}
		switch {
		case !changed:
			c.Action = "unchanged"
			c.Notes = append(c.Notes, "holds nothing of talkd's")
		case !hasBackup && t.ed.empty(out):
			if err := os.Remove(t.path); err != nil {
				return changes, fmt.Errorf("remove %s: %w", t.path, err)
			}
			c.Action = "deleted"
		default:
			if err := writeFile(t.path, out, t.path); err != nil {
				return changes, err
			}
			c.Action = "removed"
		}
		if hasBackup && changed {
			c.Notes = append(c.Notes, "changed since talk setup, so only talkd's entries were taken out; the file as it was before: "+backupPath)
		}
		changes = append(changes, c)
	}
	return changes, nil
}

func readFile(path string) ([]byte, bool, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return raw, true, nil
}

// writeFile replaces path atomically (a host reading it meanwhile sees the old or the new
// file, never half of one), with the permissions of modeOf when that exists (~/.claude.json
// is private), else 0600: these files can hold tokens.
func writeFile(path string, content []byte, modeOf string) error {
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(modeOf); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.Write(content)
	if werr == nil {
		werr = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// hookCommand is the shell command line a host runs for talkd's hook.
func hookCommand(talk, host string) string {
	return shellQuote(talk) + " hook " + host
}

// shellQuote quotes a path for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`&|;<>()*?[]{}!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isTalkHook reports whether a command line is talkd's hook for host (from any talk
// binary: a setup after talk moved replaces the old path).
func isTalkHook(cmd, host string) bool {
	prog, ok := strings.CutSuffix(strings.TrimSpace(cmd), " hook "+host)
	if !ok {
		return false
	}
	return isTalkProgram(strings.Trim(prog, `'"`))
}

// isTalkProgram reports whether argv[0] of an MCP entry or notify program is a talk.
func isTalkProgram(p string) bool {
	return p == "talk" || strings.HasSuffix(p, "/talk") || strings.HasSuffix(p, `\talk.exe`)
}
