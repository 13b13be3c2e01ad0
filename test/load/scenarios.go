package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The request bodies are the same for talkd and the peers: a 2025-era JSON-RPC message
// with the headers a Streamable HTTP client sends.
const (
	bodyToolsList  = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	bodyCallSpeak  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"speak","arguments":{"text":"Tests are green on main","priority":"high"}}}`
	bodyInspect    = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"werkbaum_inspect","arguments":{"plan":"werkbaum","detail":"full"}}}`
	bodySpeakHTTP  = `{"text":"Tests are green on main","priority":"high"}`
	protocolHeader = "2025-11-25"
)

var mcpHeaders = map[string]string{
	"MCP-Protocol-Version": protocolHeader,
	"Accept":               "application/json, text/event-stream",
}

// scenarios returns every scenario by name.
func scenarios() map[string]scenario {
	return map[string]scenario{
		"speak":      {Name: "speak", NewWorker: speakWorker},
		"tools/list": {Name: "tools/list", NewWorker: fixedMCP(bodyToolsList, classifyList), Method: "tools/list", Body: bodyToolsList},
		"tools/call": {Name: "tools/call speak", NewWorker: fixedMCP(bodyCallSpeak, classifyCallFast), Method: "tools/call", Body: bodyCallSpeak},
		"inspect":    {Name: "tools/call werkbaum_inspect", NewWorker: fixedMCP(bodyInspect, classifyCallFast), Method: "tools/call", Body: bodyInspect},
		"write":      {Name: "werkbaum_apply_ops", NewWorker: writeWorker},
	}
}

// speakWorker posts one announcement to /speak. Each has its own text (worker and
// sequence number): talkd speaks the same text of one caller once (a repeat is merged
// into the waiting one without taking queue room), and the scenario measures the
// admission of announcements that each take their place.
func speakWorker(t target, id int) worker {
	var buf bytes.Buffer
	prefix := []byte(strings.TrimSuffix(bodySpeakHTTP, `","priority":"high"}`) + ", run " + strconv.Itoa(id) + "-")
	seq := 0
	return func(ctx context.Context, p poster) outcome {
		seq++
		// A new slice per request: the raw client reuses its request bytes when it is
		// given the same body slice again.
		body := append(strconv.AppendInt(append(make([]byte, 0, len(bodySpeakHTTP)+32), prefix...), int64(seq), 10), `","priority":"high"}`...)
		status, err := p.post(ctx, "/speak", body, nil, &buf)
		if err != nil {
			return outcome{Kind: "transport", Failed: true}
		}
		var a struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
			Error  *struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(buf.Bytes(), &a) != nil {
			return outcome{Kind: fmt.Sprintf("%d bad body", status), Failed: true}
		}
		switch {
		case status == http.StatusAccepted && a.Status == "queued":
			return outcome{Kind: "202 queued", OK: true}
		case status == http.StatusOK && (a.Status == "muted" || a.Status == "discarded"):
			return outcome{Kind: "200 " + a.Status, OK: true}
		case status == http.StatusServiceUnavailable && a.Error != nil:
			return outcome{Kind: "503 " + a.Error.Code}
		}
		return outcome{Kind: "HTTP " + strconv.Itoa(status), Failed: true}
	}
}

// fixedMCP posts the same JSON-RPC body to /mcp on every request.
func fixedMCP(body string, classify func(status int, b []byte) outcome) func(target, int) worker {
	return func(t target, _ int) worker {
		var buf bytes.Buffer
		payload := []byte(body)
		return func(ctx context.Context, p poster) outcome {
			status, err := p.post(ctx, "/mcp", payload, mcpHeaders, &buf)
			if err != nil {
				return outcome{Kind: "transport", Failed: true}
			}
			return classify(status, buf.Bytes())
		}
	}
}

func classifyList(status int, b []byte) outcome {
	if status != http.StatusOK {
		return outcome{Kind: "HTTP " + strconv.Itoa(status), Failed: true}
	}
	if !bytes.Contains(b, []byte(`"name":"speak"`)) {
		return outcome{Kind: "no speak tool", Failed: true}
	}
	return outcome{Kind: "ok", OK: true}
}

// rpcAnswer is the part of a tools/call answer the classifier needs.
type rpcAnswer struct {
	Error  json.RawMessage `json:"error"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	} `json:"result"`
}

// classifyCall accepts a tool result that is not an error; its kind is the first word of
// the text (queued:, muted:, discarded: … for speak).
func classifyCall(status int, b []byte) outcome {
	if status != http.StatusOK {
		return outcome{Kind: "HTTP " + strconv.Itoa(status), Failed: true}
	}
	var a rpcAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return outcome{Kind: "bad body", Failed: true}
	}
	if len(a.Error) > 0 || a.Result == nil {
		return outcome{Kind: "rpc error", Failed: true}
	}
	if a.Result.IsError {
		return outcome{Kind: "tool error", Failed: true}
	}
	kind := "result"
	if len(a.Result.Content) > 0 {
		if w, _, ok := strings.Cut(a.Result.Content[0].Text, ":"); ok && isWord(w) {
			kind = w
		}
	}
	return outcome{Kind: kind, OK: true}
}

// classifyCallFast classifies a tools/call answer like classifyCall but without decoding
// it (the generator must cost little next to the server it measures; an inspect answer
// is 267 KB): the answer is compact JSON from a Go encoder, so a result is `"result":`
// without `"isError":true` (inside strings the quotes are escaped, so text cannot fake
// either), and its kind is the first word of the first `"text":"…"`.
func classifyCallFast(status int, b []byte) outcome {
	if status != http.StatusOK {
		return outcome{Kind: "HTTP " + strconv.Itoa(status), Failed: true}
	}
	if !bytes.Contains(b, []byte(`"result":`)) {
		if bytes.Contains(b, []byte(`"error":`)) {
			return outcome{Kind: "rpc error", Failed: true}
		}
		return outcome{Kind: "bad body", Failed: true}
	}
	if bytes.Contains(b, []byte(`"isError":true`)) {
		return outcome{Kind: "tool error", Failed: true}
	}
	kind := "result"
	if _, text, ok := bytes.Cut(b, []byte(`"text":"`)); ok {
		if w, _, ok := bytes.Cut(text, []byte(":")); ok && len(w) <= 16 && isWord(string(w)) {
			kind = wordKind(w)
		}
	}
	return outcome{Kind: kind, OK: true}
}

// wordKind returns the kind for a first word without allocating for the usual ones.
func wordKind(w []byte) string {
	for _, k := range []string{"queued", "muted", "discarded"} {
		if string(w) == k {
			return k
		}
	}
	return string(w)
}

// writeWorker changes the plan's first line (a %% comment) with werkbaum_apply_ops: each
// request uses the base of the worker's last answer and a new request id; a conflict
// answer carries the current base, which the next request uses (retry on conflict).
func writeWorker(t target, id int) worker {
	var (
		buf  bytes.Buffer
		base json.RawMessage
		seq  int
	)
	read := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"werkbaum_read","arguments":{"plan":"werkbaum"}}}`)
	return func(ctx context.Context, p poster) outcome {
		var body []byte
		if base == nil {
			body = read
		} else {
			seq++
			rid := fmt.Sprintf("load-%d-%d-%d", t.PID, id, seq)
			args := map[string]any{
				"plan": "werkbaum", "base": base, "request_id": rid,
				"ops": []map[string]any{{"op": "replace", "index": 0, "count": 1,
					"lines": []string{fmt.Sprintf("%%%% load writer %d, change %d", id, seq)}}},
			}
			b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": seq, "method": "tools/call",
				"params": map[string]any{"name": "werkbaum_apply_ops", "arguments": args}})
			if err != nil {
				return outcome{Kind: "marshal", Failed: true}
			}
			body = b
		}
		status, err := p.post(ctx, "/mcp", body, mcpHeaders, &buf)
		if err != nil {
			return outcome{Kind: "transport", Failed: true}
		}
		if status != http.StatusOK {
			return outcome{Kind: "HTTP " + strconv.Itoa(status), Failed: true}
		}
		var a rpcAnswer
		if err := json.Unmarshal(buf.Bytes(), &a); err != nil || a.Result == nil {
			return outcome{Kind: "bad body", Failed: true}
		}
		var sc struct {
			Conflict bool            `json:"conflict"`
			Base     json.RawMessage `json:"base"`
		}
		details := a.Result.StructuredContent
		if a.Result.IsError && len(a.Result.Content) == 1 {
			// A failure carries its details as a JSON object in its one text block.
			details = json.RawMessage(a.Result.Content[0].Text)
		}
		if len(details) > 0 {
			if err := json.Unmarshal(details, &sc); err != nil && !a.Result.IsError {
				return outcome{Kind: "bad structuredContent", Failed: true}
			}
		}
		switch {
		case base == nil: // the answer to werkbaum_read
			if a.Result.IsError || len(sc.Base) == 0 {
				return outcome{Kind: "read failed", Failed: true}
			}
			base = sc.Base
			return outcome{Kind: "read"}
		case a.Result.IsError && sc.Conflict && len(sc.Base) > 0:
			base = sc.Base
			return outcome{Kind: "conflict"}
		case a.Result.IsError:
			text := ""
			if len(a.Result.Content) > 0 {
				text = a.Result.Content[0].Text
			}
			if len(text) > 40 {
				text = text[:40]
			}
			return outcome{Kind: "refused: " + text, Failed: true}
		case len(sc.Base) == 0:
			return outcome{Kind: "no base", Failed: true}
		}
		base = sc.Base
		return outcome{Kind: "applied", OK: true}
	}
}

// isWord reports whether s is a short lower-case word such as "queued" or "muted".
func isWord(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}
