package hostsetup

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex keeps its settings in a TOML file people edit by hand, with comments. Decoding
// and encoding it again would drop every comment and reorder the keys, so talk setup
// edits its lines: it inserts its own lines (each block under a marker comment) and then
// decodes the old and the new text to prove that every other setting is unchanged.

// codexMarker starts each block talk setup writes into config.toml.
const codexMarker = "# talkd (talk setup codex; talk setup --remove codex takes it out)"

func codex() Host {
	return Host{Name: "codex", Title: "Codex CLI", targets: func(o Options) []target {
		dir := o.CodexHome
		if dir == "" {
			dir = filepath.Join(o.Home, ".codex")
		}
		return []target{{path: filepath.Join(dir, "config.toml"), what: "notify and MCP server " + MCPName, ed: codexEditor{talk: o.Talk}}}
	}}
}

type codexEditor struct{ talk string }

func (c codexEditor) notify() []any { return []any{c.talk, "hook", "codex"} }

var reTableHeader = regexp.MustCompile(`^\s*\[\[?[^\[\]=]+\]\]?\s*(#.*)?$`)

func decodeTOML(raw []byte) (map[string]any, error) {
	m := map[string]any{}
	if _, err := toml.Decode(string(raw), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (c codexEditor) notifyLine() string {
	return "notify = [" + tomlString(c.talk) + `, "hook", "codex"]`
}

func (c codexEditor) mcpBlock() string {
	return "[mcp_servers." + MCPName + "]\ncommand = " + tomlString(c.talk) + "\nargs = [\"mcp\"]\n"
}

// isTalkNotify reports whether a notify value is a talk hook for codex.
func isTalkNotify(v any) bool {
	argv, ok := v.([]any)
	if !ok || len(argv) != 3 {
		return false
	}
	p, _ := argv[0].(string)
	return isTalkProgram(p) && argv[1] == "hook" && argv[2] == "codex"
}

func isTalkMCP(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	cmd, _ := m["command"].(string)
	args, _ := m["args"].([]any)
	return isTalkProgram(cmd) && len(args) == 1 && args[0] == "mcp"
}

func (c codexEditor) add(raw []byte) ([]byte, bool, []string, error) {
	before, err := decodeTOML(raw)
	if err != nil {
		return nil, false, nil, fmt.Errorf("not valid TOML (%v)", err)
	}
	text := string(raw)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	var notes []string
	changed := false
	switch cur, ok := before["notify"]; {
	case ok && reflect.DeepEqual(cur, c.notify()):
	case ok && isTalkNotify(cur):
		// An older talk path: replace that one line.
		lines := strings.Split(text, "\n")
		replaced := false
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "notify") && strings.Contains(l, "codex") {
				lines[i], replaced = c.notifyLine(), true
				break
			}
		}
		if !replaced {
			return nil, false, nil, errors.New("its notify runs another talk, on lines talk setup cannot find; edit it by hand")
		}
		text, changed = strings.Join(lines, "\n"), true
	case ok:
		return nil, false, nil, fmt.Errorf("it already has notify = %v, and Codex runs only one notify program; take that out (or add talk hook codex to that program) and run talk setup again", cur)
	default:
		block := codexMarker + "\n" + c.notifyLine() + "\n"
		lines := strings.SplitAfter(text, "\n")
		at := len(lines)
		for i, l := range lines {
			if reTableHeader.MatchString(strings.TrimRight(l, "\r\n")) {
				at = i
				break
			}
		}
		// The block goes above the comments and blank lines that lead into the first
		// table (they belong to it), after the last top-level setting.
		for at > 0 && strings.HasPrefix(strings.TrimSpace(lines[at-1]), "#") {
			at--
		}
		for at > 0 && strings.TrimSpace(lines[at-1]) == "" {
			at--
		}
		if at < len(lines) && strings.TrimSpace(lines[at]) != "" {
			block += "\n"
		}
		text, changed = strings.Join(lines[:at], "")+block+strings.Join(lines[at:], ""), true
	}
	servers, _ := before["mcp_servers"].(map[string]any)
	switch cur, ok := servers[MCPName]; {
	case ok && isTalkMCP(cur):
		if cmd, _ := cur.(map[string]any)["command"].(string); cmd != c.talk {
			notes = append(notes, fmt.Sprintf("[mcp_servers.%s] runs %s; kept as it is", MCPName, cmd))
		}
	case ok:
		notes = append(notes, fmt.Sprintf("kept your own [mcp_servers.%s] (it does not run talk mcp)", MCPName))
	default:
		if text != "" {
			text += "\n"
		}
		text += codexMarker + "\n" + c.mcpBlock()
		changed = true
	}
	if !changed {
		return raw, false, notes, nil
	}
	if err := c.verify(before, []byte(text), true); err != nil {
		return nil, false, nil, err
	}
	return []byte(text), true, notes, nil
}

// verify decodes the edited text and compares it with the settings before: talkd's two
// entries present (or absent after a removal), everything else equal.
func (c codexEditor) verify(before map[string]any, text []byte, present bool) error {
	after, err := decodeTOML(text)
	if err != nil {
		return fmt.Errorf("the edited file would not be valid TOML (%v)", err)
	}
	strip := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		if isTalkNotify(out["notify"]) {
			delete(out, "notify")
		}
		if s, ok := out["mcp_servers"].(map[string]any); ok && isTalkMCP(s[MCPName]) {
			cp := map[string]any{}
			for k, v := range s {
				if k != MCPName {
					cp[k] = v
				}
			}
			if len(cp) == 0 {
				delete(out, "mcp_servers")
			} else {
				out["mcp_servers"] = cp
			}
		}
		return out
	}
	if !reflect.DeepEqual(strip(before), strip(after)) {
		return errors.New("talk setup could not place its lines without changing other settings (an unusual layout)")
	}
	if present && !reflect.DeepEqual(after["notify"], c.notify()) {
		return errors.New("talk setup could not place notify at the top level of the file")
	}
	if servers, _ := after["mcp_servers"].(map[string]any); !present && (isTalkNotify(after["notify"]) || isTalkMCP(servers[MCPName])) {
		return errors.New("talk setup could not find all of its lines to take out (were they edited?); edit the file by hand")
	}
	return nil
}

func (c codexEditor) remove(raw []byte) ([]byte, bool, error) {
	before, err := decodeTOML(raw)
	if err != nil {
		return nil, false, fmt.Errorf("not valid TOML (%v)", err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	var out []string
	changed := false
	for i := 0; i < len(lines); i++ {
		if strings.TrimRight(lines[i], "\r\n") != codexMarker {
			out = append(out, lines[i])
			continue
		}
		changed = true
		// The marker's block: a notify line, or a table up to the next header or blank line.
		j := i + 1
		if j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "notify") {
			j++
		} else if j < len(lines) && reTableHeader.MatchString(strings.TrimRight(lines[j], "\r\n")) {
			j++
			for j < len(lines) && strings.TrimSpace(lines[j]) != "" && !reTableHeader.MatchString(strings.TrimRight(lines[j], "\r\n")) {
				j++
			}
		}
		// A blank line setup put beside the block goes with it: when blank lines (or the
		// start or end of the file) would meet, one of them is dropped.
		prevBlank := len(out) == 0 || strings.TrimSpace(out[len(out)-1]) == ""
		nextBlank := j >= len(lines) || strings.TrimSpace(lines[j]) == ""
		if prevBlank && nextBlank {
			if n := len(out); n > 0 {
				out = out[:n-1]
			} else if j < len(lines) {
				j++
			}
		}
		i = j - 1
	}
	if !changed {
		return raw, false, nil
	}
	text := []byte(strings.Join(out, ""))
	if err := c.verify(before, text, false); err != nil {
		return nil, false, err
	}
	return text, true, nil
}

func (codexEditor) empty(raw []byte) bool { return len(bytes.TrimSpace(raw)) == 0 }
