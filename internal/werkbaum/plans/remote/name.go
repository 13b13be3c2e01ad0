package remote

import (
	"strings"
	"unicode/utf8"

	"talkd/internal/werkbaum/plans/docs"
)

// fallbackName is the display name of an agent write when neither the plan's
// display_name nor the MCP host's clientInfo.name gives one (DOCUMENTS.md).
const fallbackName = "Agent"

// DisplayName is the name the document server shows for a write: the plan's
// display_name, else the agent's name (the MCP host's clientInfo.name), else "Agent";
// at most the protocol's 64 characters.
func DisplayName(planName, agent string) string {
	name := planName
	if name == "" {
		name = strings.TrimSpace(agent)
	}
	if name == "" {
		return fallbackName
	}
	if utf8.RuneCountInString(name) > docs.MaxDisplayName {
		name = string([]rune(name)[:docs.MaxDisplayName])
	}
	return name
}
