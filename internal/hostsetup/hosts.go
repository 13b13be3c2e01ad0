package hostsetup

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The hosts' files and formats, from their documentation (2026-12):
//   - Claude Code: hooks in ~/.claude/settings.json or <project>/.claude/settings.json,
//     {"hooks": {EVENT: [{"matcher"?, "hooks": [{"type": "command", "command", "timeout" (s)}]}]}};
//     MCP servers of the user in ~/.claude.json, of a project in <project>/.mcp.json.
//   - Gemini CLI: ~/.gemini/settings.json or <project>/.gemini/settings.json, the same
//     hook shape with "name" and a timeout in milliseconds, events AfterAgent and
//     Notification; MCP servers under "mcpServers".
//   - Cursor: ~/.cursor/hooks.json or <project>/.cursor/hooks.json,
//     {"version": 1, "hooks": {EVENT: [{"command"}]}}, events afterAgentResponse and stop;
//     MCP servers in mcp.json beside it.
//   - Codex CLI: notify = [argv…] and [mcp_servers.NAME] in ~/.codex/config.toml (codex.go).

func claudeCode() Host {
	return Host{Name: "claude-code", Title: "Claude Code", Project: true, targets: func(o Options) []target {
		dir, mcpPath := filepath.Join(o.Home, ".claude"), filepath.Join(o.Home, ".claude.json")
		if o.Project != "" {
			dir, mcpPath = filepath.Join(o.Project, ".claude"), filepath.Join(o.Project, ".mcp.json")
		}
		cmd := hookCommand(o.Talk, "claude-code")
		hook := func() *object {
			h := newObject()
			h.set("type", "command")
			h.set("command", cmd)
			h.set("timeout", 10)
			return h
		}
		events := []string{"Stop", "SubagentStop", "Notification"}
		return []target{
			{path: filepath.Join(dir, "settings.json"), what: "hooks " + strings.Join(events, ", "),
				ed: jsonEditor{parts: []jsonPart{groupedHooks{host: "claude-code", events: events, hook: hook}}}},
			{path: mcpPath, what: "MCP server " + MCPName,
				ed: jsonEditor{parts: []jsonPart{mcpServer{talk: o.Talk, typed: true}}}},
		}
	}}
}

func gemini() Host {
	return Host{Name: "gemini", Title: "Gemini CLI", Project: true, targets: func(o Options) []target {
		dir := filepath.Join(o.Home, ".gemini")
		if o.Project != "" {
			dir = filepath.Join(o.Project, ".gemini")
		}
		cmd := hookCommand(o.Talk, "gemini")
		hook := func() *object {
			h := newObject()
			h.set("name", "talkd")
			h.set("type", "command")
			h.set("command", cmd)
			h.set("timeout", 10000)
			return h
		}
		events := []string{"AfterAgent", "Notification"}
		return []target{{path: filepath.Join(dir, "settings.json"), what: "hooks " + strings.Join(events, ", ") + " and MCP server " + MCPName,
			ed: jsonEditor{parts: []jsonPart{groupedHooks{host: "gemini", events: events, hook: hook, matcher: "*"}, mcpServer{talk: o.Talk}}}}}
	}}
}

func cursor() Host {
	return Host{Name: "cursor", Title: "Cursor", Project: true, targets: func(o Options) []target {
		dir := filepath.Join(o.Home, ".cursor")
		if o.Project != "" {
			dir = filepath.Join(o.Project, ".cursor")
		}
		events := []string{"afterAgentResponse", "stop"}
		return []target{
			{path: filepath.Join(dir, "hooks.json"), what: "hooks " + strings.Join(events, ", "),
				ed: jsonEditor{parts: []jsonPart{flatHooks{host: "cursor", events: events, cmd: hookCommand(o.Talk, "cursor")}}}},
			{path: filepath.Join(dir, "mcp.json"), what: "MCP server " + MCPName,
				ed: jsonEditor{parts: []jsonPart{mcpServer{talk: o.Talk}}}},
		}
	}}
}

// jsonPart is one of talkd's entries in a JSON file.
type jsonPart interface {
	add(doc *object) (changed bool, notes []string, err error)
	remove(doc *object) (changed bool, err error)
}

// jsonEditor edits a JSON settings file through its parts.
type jsonEditor struct{ parts []jsonPart }

func (e jsonEditor) add(raw []byte) ([]byte, bool, []string, error) {
	doc, err := parseObject(raw)
	if err != nil {
		return nil, false, nil, fmt.Errorf("not valid JSON (%v)", err)
	}
	changed := raw == nil // a new file is written even when empty of talkd's parts
	var notes []string
	for _, p := range e.parts {
		c, n, err := p.add(doc)
		if err != nil {
			return nil, false, nil, err
		}
		changed = changed || c
		notes = append(notes, n...)
	}
	if !changed {
		return raw, false, notes, nil
	}
	return encode(doc), true, notes, nil
}

func (e jsonEditor) remove(raw []byte) ([]byte, bool, error) {
	doc, err := parseObject(raw)
	if err != nil {
		return nil, false, fmt.Errorf("not valid JSON (%v)", err)
	}
	changed := false
	for _, p := range e.parts {
		c, err := p.remove(doc)
		if err != nil {
			return nil, false, err
		}
		changed = changed || c
	}
	if !changed {
		return raw, false, nil
	}
	return encode(doc), true, nil
}

func (jsonEditor) empty(raw []byte) bool {
	doc, err := parseObject(raw)
	if err != nil {
		return false
	}
	// Cursor's hooks.json carries a format version beside the hooks.
	return len(doc.keys) == 0 || (len(doc.keys) == 1 && doc.keys[0] == "version")
}

// groupedHooks are Claude Code's and Gemini CLI's hooks: per event a list of groups, each
// with an optional matcher and its hooks.
type groupedHooks struct {
	host    string
	events  []string
	hook    func() *object
	matcher string // "" = no matcher field
}

func (g groupedHooks) add(doc *object) (bool, []string, error) {
	hooks, err := doc.child("hooks", "")
	if err != nil {
		return false, nil, err
	}
	changed := false
	for _, ev := range g.events {
		v, _ := hooks.get(ev)
		groups, ok := v.([]any)
		if v != nil && !ok {
			return false, nil, fmt.Errorf(`"hooks".%q is not a list`, ev)
		}
		found := false
		for _, gv := range groups {
			group, ok := gv.(*object)
			if !ok {
				continue
			}
			inner, _ := group.get("hooks")
			list, _ := inner.([]any)
			for i, hv := range list {
				h, ok := hv.(*object)
				if !ok {
					continue
				}
				cmd, _ := h.get("command")
				if s, ok := cmd.(string); ok && isTalkHook(s, g.host) {
					found = true
					if want := g.hook(); !equal(h, want) {
						list[i] = want
						changed = true
					}
				}
			}
		}
		if !found {
			group := newObject()
			if g.matcher != "" {
				group.set("matcher", g.matcher)
			}
			group.set("hooks", []any{g.hook()})
			hooks.set(ev, append(groups, group))
			changed = true
		}
	}
	return changed, nil, nil
}

func (g groupedHooks) remove(doc *object) (bool, error) {
	v, ok := doc.get("hooks")
	hooks, isObj := v.(*object)
	if !ok || !isObj {
		return false, nil
	}
	changed := false
	for _, ev := range g.events {
		v, _ := hooks.get(ev)
		groups, ok := v.([]any)
		if !ok {
			continue
		}
		var keptGroups []any
		for _, gv := range groups {
			group, ok := gv.(*object)
			if !ok {
				keptGroups = append(keptGroups, gv)
				continue
			}
			inner, _ := group.get("hooks")
			list, ok := inner.([]any)
			if !ok {
				keptGroups = append(keptGroups, gv)
				continue
			}
			var kept []any
			for _, hv := range list {
				if h, ok := hv.(*object); ok {
					if cmd, ok := h.vals["command"].(string); ok && isTalkHook(cmd, g.host) {
						changed = true
						continue
					}
				}
				kept = append(kept, hv)
			}
			if len(kept) == 0 && len(list) > 0 {
				continue // the group held only talkd's hook
			}
			if len(kept) != len(list) {
				group.set("hooks", kept)
			}
			keptGroups = append(keptGroups, group)
		}
		if len(keptGroups) == 0 {
			hooks.del(ev)
		} else {
			hooks.set(ev, keptGroups)
		}
	}
	if changed && len(hooks.keys) == 0 {
		doc.del("hooks")
	}
	return changed, nil
}

// flatHooks are Cursor's hooks: per event a list of {"command"}.
type flatHooks struct {
	host   string
	events []string
	cmd    string
}

func (f flatHooks) add(doc *object) (bool, []string, error) {
	changed := false
	if _, ok := doc.get("version"); !ok {
		doc.set("version", 1)
		changed = true
	}
	hooks, err := doc.child("hooks", "")
	if err != nil {
		return false, nil, err
	}
	for _, ev := range f.events {
		v, _ := hooks.get(ev)
		list, ok := v.([]any)
		if v != nil && !ok {
			return false, nil, fmt.Errorf(`"hooks".%q is not a list`, ev)
		}
		found := false
		for _, hv := range list {
			h, ok := hv.(*object)
			if !ok {
				continue
			}
			if cmd, ok := h.vals["command"].(string); ok && isTalkHook(cmd, f.host) {
				found = true
				if cmd != f.cmd {
					h.set("command", f.cmd)
					changed = true
				}
			}
		}
		if !found {
			h := newObject()
			h.set("command", f.cmd)
			hooks.set(ev, append(list, h))
			changed = true
		}
	}
	return changed, nil, nil
}

func (f flatHooks) remove(doc *object) (bool, error) {
	v, _ := doc.get("hooks")
	hooks, ok := v.(*object)
	if !ok {
		return false, nil
	}
	changed := false
	for _, ev := range f.events {
		list, ok := hooks.vals[ev].([]any)
		if !ok {
			continue
		}
		var kept []any
		for _, hv := range list {
			if h, ok := hv.(*object); ok {
				if cmd, ok := h.vals["command"].(string); ok && isTalkHook(cmd, f.host) {
					changed = true
					continue
				}
			}
			kept = append(kept, hv)
		}
		if len(kept) == 0 {
			hooks.del(ev)
		} else {
			hooks.set(ev, kept)
		}
	}
	if changed && len(hooks.keys) == 0 {
		doc.del("hooks")
	}
	return changed, nil
}

// mcpServer is talkd's entry under "mcpServers": the stdio bridge talk mcp, which finds
// the daemon and passes TALK_TOKEN itself. An entry called talk that is not a talk mcp
// (an HTTP entry the user wrote) is the user's and stays.
type mcpServer struct {
	talk  string
	typed bool // Claude Code's files name the transport
}

func (m mcpServer) want() *object {
	e := newObject()
	if m.typed {
		e.set("type", "stdio")
	}
	e.set("command", m.talk)
	e.set("args", []any{"mcp"})
	return e
}

func (m mcpServer) ours(v any) bool {
	e, ok := v.(*object)
	if !ok {
		return false
	}
	cmd, _ := e.vals["command"].(string)
	args, _ := e.vals["args"].([]any)
	return isTalkProgram(cmd) && len(args) == 1 && args[0] == "mcp"
}

func (m mcpServer) add(doc *object) (bool, []string, error) {
	servers, err := doc.child("mcpServers", "")
	if err != nil {
		return false, nil, err
	}
	cur, exists := servers.get(MCPName)
	switch {
	case exists && !m.ours(cur):
		return false, []string{fmt.Sprintf("kept your own MCP entry %q (it does not run talk mcp)", MCPName)}, nil
	case exists:
		e := cur.(*object)
		want := m.want()
		changed := false
		for _, k := range want.keys {
			if !equal(e.vals[k], want.vals[k]) {
				e.set(k, want.vals[k])
				changed = true
			}
		}
		return changed, nil, nil
	}
	servers.set(MCPName, m.want())
	return true, nil, nil
}

func (m mcpServer) remove(doc *object) (bool, error) {
	servers, ok := doc.vals["mcpServers"].(*object)
	if !ok {
		return false, nil
	}
	if cur, ok := servers.get(MCPName); !ok || !m.ours(cur) {
		return false, nil
	}
	servers.del(MCPName)
	if len(servers.keys) == 0 {
		doc.del("mcpServers")
	}
	return true, nil
}
