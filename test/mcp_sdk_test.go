package test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official Go SDK as a real peer (a test-only dependency): its Streamable HTTP client
// against /mcp, and its command transport against `talk mcp`, each in both protocol eras
// (the SDK speaks 2026-07-28 by default and 2025-11-25 when asked).

var sdkEras = []struct {
	name    string
	version string // "" = the SDK's default (2026-07-28, server/discover)
}{
	{"2026", ""},
	{"2025", "2025-11-25"},
}

// sdkSpeak connects over transport, lists tools, calls speak and checks the answer.
func sdkSpeak(t *testing.T, transport mcp.Transport, version, agent, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: agent, Version: "1.0"}, nil)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	session, err := client.Connect(ctx, transport, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer session.Close()
	init := session.InitializeResult()
	if init.ServerInfo == nil || init.ServerInfo.Name != "talkd" {
		t.Errorf("server info: %+v", init.ServerInfo)
	}
	if version != "" && init.ProtocolVersion != version {
		t.Errorf("negotiated %q, want %q", init.ProtocolVersion, version)
	}
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var speak *mcp.Tool
	for _, tool := range tools.Tools {
		if tool.Name == "speak" {
			speak = tool
		}
	}
	if speak == nil || speak.OutputSchema == nil || speak.Annotations == nil || speak.Annotations.OpenWorldHint == nil || *speak.Annotations.OpenWorldHint {
		t.Fatalf("speak tool as the SDK sees it: %+v", speak)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "speak", Arguments: map[string]any{"text": text, "priority": "high"}})
	if err != nil {
		t.Fatalf("tools/call speak: %v", err)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if res.IsError || !ok || !strings.HasPrefix(tc.Text, "queued: ") {
		t.Fatalf("speak result: %+v", res)
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok || sc["status"] != "queued" || "queued: "+sc["id"].(string) != tc.Text {
		t.Errorf("structuredContent: %#v", res.StructuredContent)
	}
	bad, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "speak", Arguments: map[string]any{"text": "x", "priority": "urgent"}})
	if err != nil || !bad.IsError || !strings.Contains(bad.Content[0].(*mcp.TextContent).Text, `"priority"`) {
		t.Errorf("bad priority: %+v %v", bad, err)
	}
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown tool must be a protocol error")
	}
	if _, err := session.ListResources(ctx, nil); err != nil {
		t.Errorf("resources/list: %v", err)
	}
	if _, err := session.ListPrompts(ctx, nil); err != nil {
		t.Errorf("prompts/list: %v", err)
	}
}

func TestMCPGoSDKOverHTTP(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{})
	for i, era := range sdkEras {
		t.Run(era.name, func(t *testing.T) {
			text := "sdk over http " + era.name
			sdkSpeak(t, &mcp.StreamableClientTransport{Endpoint: d.URL + "/mcp", MaxRetries: -1}, era.version, "sdk-http-"+era.name, text)
			// The agent label comes from the 2026 _meta clientInfo; a 2025-era HTTP client
			// names itself only in initialize, and without sessions that name cannot follow
			// to later requests (hosts can send X-Talk-Agent; `talk mcp` does).
			wantAgent := "sdk-http-" + era.name
			if era.version != "" {
				wantAgent = ""
			}
			rec := d.waitSpoken(t, i+1)[i]
			if rec.Text != text || rec.Agent != wantAgent || rec.Priority != "high" {
				t.Errorf("spoken: %+v, want agent %q", rec, wantAgent)
			}
		})
	}
}

func TestMCPGoSDKOverStdio(t *testing.T) {
	t.Parallel()
	_, talk := binaries(t)
	d := startDaemon(t, daemonOptions{})
	for i, era := range sdkEras {
		t.Run(era.name, func(t *testing.T) {
			cmd := exec.Command(talk, "mcp", "--url", d.URL)
			cmd.Env = d.Env
			var stderr syncBuffer
			cmd.Stderr = &stderr
			text := "sdk over stdio " + era.name
			agent := "sdk-stdio-Zoë-" + era.name // a non-ASCII host name reaches the daemon intact
			sdkSpeak(t, &mcp.CommandTransport{Command: cmd}, era.version, agent, text)
			rec := d.waitSpoken(t, i+1)[i]
			if rec.Text != text || rec.Agent != agent {
				t.Errorf("spoken: %+v\nbridge stderr:\n%s", rec, stderr.String())
			}
		})
	}
}

func TestMCPBridgeWithoutDaemon(t *testing.T) {
	t.Parallel()
	_, talk := binaries(t)
	cmd := exec.Command(talk, "mcp", "--url", "http://127.0.0.1:1")
	cmd.Env = daemonEnv(t.TempDir(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "lonely-host", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("the bridge must answer initialize while the daemon is down: %v", err)
	}
	defer session.Close()
	_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "speak", Arguments: map[string]any{"text": "anyone?"}})
	if err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("a call while the daemon is down: %v", err)
	}
}
