// Command floor is a test-only peer for talkd's load comparison: the physical floor of the
// MCP door on this machine. It is a plain net/http handler that reads a POST /mcp request
// and writes a fixed answer, chosen by the request's method, with no other work — no
// admission, no JSON decoding, no dispatch, no log line. talkd's requests per second
// divided by the floor's, in the same run, is the share of the machine's HTTP round trip
// that talkd's own work leaves (issue 33: at least 0.9).
//
// The comparison is fair only if the floor does what talkd must do and nothing less.
// It sends the same answer bytes: test/load asks the running talkd each scenario's answer
// once and hands the bytes to the floor (-answer METHOD=FILE), so both send the same
// status, Content-Type, Content-Length and body. It runs with the same server settings as
// talkd's http.Server (cmd/talkd/daemon.go: header, read and idle timeouts, header size
// limit), so the per-request deadline timers and keep-alive handling cost both the same.
// It reads the whole request body, as talkd does (one buffer of the declared length). And
// it runs with talkd's collector percentage (internal/werkbaum/gctune/gctune.go, GOGC=400), so it does not
// pay for more collections than talkd does.
//
//	go run ./test/peers/floor -addr 127.0.0.1:0 -answer tools/call=call.json -answer tools/list=list.json
//
// With FLOOR_DECODE=1 in its environment it is the JSON-RPC floor instead: it also decodes
// each request with encoding/json (the envelope, and a tools/call's tool name and
// arguments) and refuses what does not decode, the least any JSON-RPC server must do
// before its own work. The load tool's peers inherit its environment, so
//
//	FLOOR_DECODE=1 load -mode peers -peers floor …
//
// measures talkd against that floor (docs/bench-load.md, "The JSON-RPC floor").
//
// It prints "listening addr=HOST:PORT" on stdout once it accepts connections, serves
// POST /mcp, and stops on SIGINT or SIGTERM.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"talkd/test/peers/peer"
)

// maxBody bounds what the floor reads of a request (talkd's /mcp limit is larger; the
// load scenarios send a few hundred bytes).
const maxBody = 1 << 20

// answer is one fixed answer with its header values built once.
type answer struct {
	body   []byte
	length []string // Content-Length, when net/http does not count the answer itself
}

// netHTTPCounts is the answer size below which net/http sets Content-Length itself (the
// answer still fits its response buffer when the handler returns). Larger answers declare
// it, as talkd's do (internal/api writeRPCParts), so they are not sent chunked.
const netHTTPCounts = 2048

// floor answers POST /mcp with the fixed answer of the request's method.
type floor struct {
	answers map[string]answer
	unknown answer // a JSON-RPC "method not found" for any other method
	// decode makes it the JSON-RPC floor: each request is decoded (decodeRequest).
	decode bool
}

var jsonContentType = []string{"application/json"}

func newFloor(answers map[string][]byte) *floor {
	f := &floor{answers: map[string]answer{}}
	for method, b := range answers {
		f.answers[method] = newAnswer(b)
	}
	f.unknown = newAnswer([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"method not found"}}` + "\n"))
	return f
}

func newAnswer(b []byte) answer {
	a := answer{body: b}
	if len(b) >= netHTTPCounts {
		a.length = []string{strconv.Itoa(len(b))}
	}
	return a
}

func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" || r.Method != http.MethodPost {
		http.Error(w, "the floor answers POST /mcp only", http.StatusNotFound)
		return
	}
	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var method string
	if f.decode {
		if method, err = decodeRequest(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	} else {
		method = string(methodOf(body))
	}
	a, ok := f.answers[method]
	if !ok {
		a = f.unknown
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	if a.length != nil {
		h["Content-Length"] = a.length
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.body)
}

// readBody reads the whole body: into one buffer of the declared length, as talkd does.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > maxBody {
		return nil, errors.New("body too large")
	}
	if r.ContentLength > 0 {
		b := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, fmt.Errorf("read body: %w", err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return b, nil
}

// methodOf finds the value of the first "method":"…" in a compact JSON-RPC body: the
// least a server must look at to tell the scenarios apart (nil when there is none).
func methodOf(body []byte) []byte {
	const key = `"method":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return nil
	}
	rest := body[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return nil
	}
	return rest[:j]
}

// rpcRequest is a JSON-RPC request as a server decodes it before dispatching it.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// toolCall is what a server needs of a tools/call's params to find and run the tool.
type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// decodeRequest decodes body as a JSON-RPC 2.0 request with encoding/json, and a
// tools/call's tool name and arguments, and returns its method.
func decodeRequest(body []byte) (string, error) {
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return "", fmt.Errorf("not a JSON-RPC request: %w", err)
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		return "", errors.New(`not a JSON-RPC 2.0 request: "jsonrpc" must be "2.0" and "method" set`)
	}
	if req.Method == "tools/call" {
		var call toolCall
		if err := json.Unmarshal(req.Params, &call); err != nil || call.Name == "" {
			return "", errors.New("tools/call needs params with a tool name")
		}
	}
	return req.Method, nil
}

// answerFlags collects -answer METHOD=FILE.
type answerFlags map[string][]byte

func (a answerFlags) String() string { return fmt.Sprint(len(a), " answers") }

func (a answerFlags) Set(v string) error {
	method, file, ok := strings.Cut(v, "=")
	if !ok || method == "" || file == "" {
		return fmt.Errorf("want METHOD=FILE, got %q", v)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("answer of %s: %w", method, err)
	}
	if len(b) == 0 {
		return fmt.Errorf("answer of %s: %s is empty", method, file)
	}
	a[method] = b
	return nil
}

// server is talkd's http.Server settings (cmd/talkd/daemon.go) around h.
func server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	answers := answerFlags{}
	flag.Var(answers, "answer", "METHOD=FILE: answer requests of METHOD with the bytes of FILE (repeatable)")
	flag.Parse()
	if len(answers) == 0 {
		fmt.Fprintln(os.Stderr, "floor: give at least one -answer METHOD=FILE")
		os.Exit(2)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	f := newFloor(answers)
	f.decode = os.Getenv("FLOOR_DECODE") == "1"
	if err := peer.ServeServer(*addr, server(f)); err != nil {
		slog.Error("floor peer", "err", err)
		os.Exit(1)
	}
}
