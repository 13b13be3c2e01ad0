package journal

import (
	"encoding/json"
	"testing"
)

// TestEntryKeepsTheFormat: an entry as talkd wrote it before Entry moved here (a pending
// write to a document server, with its result and PATCH, non-ASCII and HTML characters
// escaped as encoding/json does) decodes and encodes to the same bytes: the state file
// of before reads and is rewritten unchanged.
func TestEntryKeepsTheFormat(t *testing.T) {
	const written = `{"requestId":"r","argsHash":"h","tool":"t","state":"pending","author":{"client":"@jörg","agent":"A"},"at":"2026-12-06T08:00:00.000000005Z","result":{"x":"\u003c"},"seq":2,"remote":{"baseVersion":3,"checksum":"sha256:ab\u003c\u003e\u0026","clientId":"mcp-1","seq":7,"displayName":"Jörg \u003c\u0026\u003e","milestone":true,"ops":[{"op":"replace","index":1,"count":2,"lines":["a\u003cb\u003e","ü"]}]}}`
	var e Entry
	if err := json.Unmarshal([]byte(written), &e); err != nil {
		t.Fatal(err)
	}
	if e.Author.Client != "@jörg" || e.State != StatePending || e.Seq != 2 || len(e.Remote) == 0 {
		t.Fatalf("decoded %+v", e)
	}
	again, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != written {
		t.Fatalf("re-encoded\n%s\nwritten\n%s", again, written)
	}
}
