package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// speakResult is the daemon's answer to POST /speak (api.SpeakResult).
type speakResult struct {
	Status        string     `json:"status"`
	ID            string     `json:"id"`
	Position      int        `json:"position"`
	Reason        string     `json:"reason"`
	Until         *time.Time `json:"until"`
	RetryAfterMs  int64      `json:"retry_after_ms"`
	Window        string     `json:"window"`
	ShortenedFrom int        `json:"shortened_from"`
	LeftOut       string     `json:"left_out"`
	Warning       string     `json:"warning"`
	Message       string     `json:"message"`
}

// muteState is the daemon's answer to /mute and /unmute, and the mute part of /status.
type muteState struct {
	Muted   bool       `json:"muted"`
	Until   *time.Time `json:"until"`
	Message string     `json:"message"`
}

// entry is one announcement in /history and /status (queue.Entry).
type entry struct {
	ID       string     `json:"id"`
	Text     string     `json:"text"`
	Lang     string     `json:"lang"`
	Priority string     `json:"priority"`
	Provider string     `json:"provider"`
	Caller   string     `json:"caller"`
	Agent    string     `json:"agent"`
	Origin   string     `json:"origin"`
	Outcome  string     `json:"outcome"`
	Reason   string     `json:"reason"`
	Received time.Time  `json:"received"`
	Started  *time.Time `json:"started"`
	Ended    *time.Time `json:"ended"`
}

// voiceInfo is what /status says about the speech engine (voice.Info).
type voiceInfo struct {
	Provider       string   `json:"provider"`
	ProviderReason string   `json:"provider_reason"`
	Sink           string   `json:"sink"`
	SinkReason     string   `json:"sink_reason"`
	Providers      []string `json:"providers"`
	Audible        *bool    `json:"audible"`
	Silent         string   `json:"silent"`
}

// statusDoc is the daemon's GET /status answer, as far as talk shows it.
type statusDoc struct {
	Version string    `json:"version"`
	Mode    string    `json:"mode"`
	Config  string    `json:"config"`
	Mute    muteState `json:"mute"`
	Quiet   struct {
		Active  bool     `json:"active"`
		Window  string   `json:"window"`
		Windows []string `json:"windows"`
	} `json:"quiet_hours"`
	Queue struct {
		Waiting  int    `json:"waiting"`
		Capacity int    `json:"capacity"`
		Speaking *entry `json:"speaking"`
	} `json:"queue"`
	Rules struct {
		RateLimit map[string]string `json:"rate_limit"`
		MaxWait   string            `json:"max_wait"`
	} `json:"rules"`
	Voice  json.RawMessage   `json:"voice"`
	CORS   []string          `json:"cors"`
	MCP    bool              `json:"mcp"`
	Plans  []json.RawMessage `json:"plans"`
	Caller string            `json:"caller"`
}

// toolResult is the result of an MCP tools/call.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r *toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolError is a tool result with isError: the daemon refused the operation (unknown
// plan, conflict, guard). Exit code 4, like any refusal.
type toolError struct {
	tool string
	res  *toolResult
}

func (e *toolError) Error() string {
	var detail struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.res.StructuredContent, &detail) == nil && detail.Message != "" {
		return fmt.Sprintf("%s refused: %s", e.tool, detail.Message)
	}
	return fmt.Sprintf("%s refused: %s", e.tool, strings.TrimSpace(e.res.text()))
}

// rpcError is a JSON-RPC error answer of /mcp (unknown tool, bad params). Exit code 4.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("refused by talkd's MCP door (JSON-RPC %d): %s", e.Code, e.Message)
}

// planInfo is one entry of plans_list.
type planInfo struct {
	Key      string `json:"key"`
	Access   string `json:"access"`
	Revision uint64 `json:"revision"`
	Lines    int    `json:"lines"`
	Nodes    int    `json:"nodes"`
	Warnings int    `json:"warnings"`
	Error    string `json:"error"`
	// Analysis is "pending" while the daemon still counts the plan's nodes and warnings
	// (they read 0 then and mean nothing), "failed" when it could not (Error says why).
	Analysis string `json:"analysis"`
	// Document is the plan's live-document URL (the Werkbaum editor opens it).
	Document string `json:"document"`
}

// base is a plan's {revision, checksum}: what a write must name.
type base struct {
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
}

type snapshot struct {
	Text  string `json:"text"`
	Base  base   `json:"base"`
	Lines int    `json:"lines"`
}

// node is one node of werkbaum_inspect (field names of NOTATION.md §28).
type node struct {
	Line            int      `json:"line"`
	ParentLine      int      `json:"parentLine"`
	Depth           int      `json:"depth"`
	ID              string   `json:"id"`
	Label           string   `json:"label"`
	Gate            string   `json:"gate"`
	Optional        bool     `json:"optional"`
	Status          *string  `json:"status"`
	EffectiveStatus *string  `json:"effectiveStatus"`
	Size            *string  `json:"size"`
	AssumedSize     *string  `json:"assumedSize"`
	People          []string `json:"people"`
	Deps            []string `json:"deps"`
	Focus           bool     `json:"focus"`
	InView          *bool    `json:"inView"`
	Station         bool     `json:"station"`
}

type warning struct {
	Type string `json:"type"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

func (w warning) String() string {
	text := w.Text
	if text == "" {
		text = w.Type
	} else {
		text = w.Type + ": " + text
	}
	if w.Line > 0 {
		return fmt.Sprintf("line %-4d %s", w.Line, text)
	}
	return fmt.Sprintf("%-9s %s", "", text)
}

type inspectDoc struct {
	Base     base      `json:"base"`
	Nodes    []node    `json:"nodes"`
	Warnings []warning `json:"warnings"`
	Path     *struct {
		Exact              bool               `json:"exact"`
		Needed             []int              `json:"needed"`
		Stations           []int              `json:"stations"`
		Cost               float64            `json:"cost"`
		AssigneeLoads      map[string]float64 `json:"assigneeLoads"`
		UnassignedLoad     float64            `json:"unassignedLoad"`
		OverloadedAssignee *struct {
			Tag           string `json:"tag"`
			Share         int    `json:"share"`
			Stations      int    `json:"stations"`
			TotalStations int    `json:"totalStations"`
		} `json:"overloadedAssignee"`
	} `json:"path"`
}

// writeResult is the answer of every plan write tool.
type writeResult struct {
	Base         base      `json:"base"`
	Revision     uint64    `json:"revision"`
	Changed      bool      `json:"changed"`
	WarningCount int       `json:"warningCount"`
	Added        []warning `json:"added"`
	Removed      []warning `json:"removed"`
	Replayed     bool      `json:"replayed"`
}
