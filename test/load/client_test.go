package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The raw client must read every framing a Go server uses (Content-Length, chunked, a
// connection closed by the server) and send what it was given, reusing a connection as
// long as the server allows.
func TestRawPosterFramingAndReuse(t *testing.T) {
	var conns atomic.Int32
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		echo := fmt.Sprintf("%s %s %s %s|%s", r.Method, r.URL.Path, r.Header.Get("MCP-Protocol-Version"), r.Header.Get("Content-Type"), body)
		switch r.URL.Path {
		case "/chunked": // larger than net/http's buffer and no length: chunked
			w.Write([]byte(echo))
			w.(http.Flusher).Flush()
			w.Write([]byte(strings.Repeat("x", 5000)))
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte(echo))
		case "/accepted":
			w.WriteHeader(http.StatusAccepted)
		default:
			w.Header().Set("Content-Length", fmt.Sprint(len(echo)))
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(echo))
		}
	}))
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	defer hs.Close()
	p, err := newPoster(clientRaw, hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	ctx := context.Background()
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	var buf bytes.Buffer
	body := []byte(`{"a":1}`)
	for i := range 3 { // the same request three times: one connection, the same bytes
		st, err := p.post(ctx, "/len", body, h, &buf)
		if err != nil || st != http.StatusCreated || buf.String() != `POST /len 2025-11-25 application/json|{"a":1}` {
			t.Fatalf("round %d: %d %v %q", i, st, err, buf.String())
		}
	}
	other := []byte(`{"b":2}`)
	if st, err := p.post(ctx, "/chunked", other, h, &buf); err != nil || st != 200 ||
		!strings.HasPrefix(buf.String(), `POST /chunked 2025-11-25 application/json|{"b":2}`) || buf.Len() < 5000 {
		t.Fatalf("chunked: %d %v %q", st, err, buf.String()[:min(buf.Len(), 80)])
	}
	if st, err := p.post(ctx, "/accepted", other, nil, &buf); err != nil || st != http.StatusAccepted || buf.Len() != 0 {
		t.Fatalf("accepted: %d %v %q", st, err, buf.String())
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("%d connections for keep-alive requests, want 1", got)
	}
	if st, err := p.post(ctx, "/close", other, nil, &buf); err != nil || st != 200 {
		t.Fatalf("close: %d %v", st, err)
	}
	if st, err := p.post(ctx, "/len", body, h, &buf); err != nil || st != http.StatusCreated {
		t.Fatalf("after close: %d %v", st, err)
	}
	if got := conns.Load(); got != 2 {
		t.Errorf("%d connections after the server closed one, want 2", got)
	}
}

// A server that is gone is a transport error, not a hang or a panic.
func TestRawPosterDeadServer(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	p, err := newPoster(clientRaw, url)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := p.post(context.Background(), "/mcp", []byte("{}"), nil, &buf); err == nil {
		t.Fatal("post to a closed server succeeded")
	}
}

// BenchmarkGeneratorRoundTrip compares the generator's clients against one in-process
// server answering a fixed body: the difference is the client's own cost per request.
//
//	go test ./test/load -run '^$' -bench GeneratorRoundTrip -benchmem
func BenchmarkGeneratorRoundTrip(b *testing.B) {
	answer := []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"queued: a1"}]}}`)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer hs.Close()
	for _, kind := range []string{clientRaw, clientNetHTTP} {
		b.Run(kind, func(b *testing.B) {
			p, err := newPoster(kind, hs.URL)
			if err != nil {
				b.Fatal(err)
			}
			defer p.close()
			body := []byte(bodyCallSpeak)
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				st, err := p.post(context.Background(), "/mcp", body, mcpHeaders, &buf)
				if err != nil || classifyCallFast(st, buf.Bytes()).Kind != "queued" {
					b.Fatalf("%d %v %s", st, err, buf.Bytes())
				}
			}
		})
	}
}
