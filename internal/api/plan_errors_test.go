package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// TestPlanErrorsOneVocabulary: every plan store refusal that MCP answers with a code is
// answered by the document doors with the same code and the same reason, as a 4xx (a
// timeout as 503 with Retry-After, a document server as 502); only a fault of the store
// is a 500, "failed" on MCP and "internal" on the document doors.
func TestPlanErrorsOneVocabulary(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	cases := []struct {
		err    error
		code   string
		status int
	}{
		{fmt.Errorf("read: %w", plans.ErrPlanMissing), "deleted", http.StatusNotFound},
		{fmt.Errorf("plan %q: %w", "p", plans.ErrUnknownPlan), "not_found", http.StatusNotFound},
		{plans.ErrUnknownDocument, "not_found", http.StatusNotFound},
		{&plans.AddressError{Key: "r:x", Reason: "no such file", Missing: true}, "deleted", http.StatusNotFound},
		{&plans.AddressError{Key: "r:../x", Reason: "leads outside the root"}, "not_found", http.StatusNotFound},
		{fmt.Errorf("the file of plan %q is a FIFO: %w", "p", plans.ErrFileRefused), "file_refused", http.StatusUnprocessableEntity},
		{fmt.Errorf("%w: 3000000 bytes", werkbaum.ErrTooLarge), "too_large", http.StatusRequestEntityTooLarge},
		{fmt.Errorf("%w: inspect", werkbaum.ErrTimeout), "timeout", http.StatusServiceUnavailable},
		{context.DeadlineExceeded, "timeout", http.StatusServiceUnavailable},
		{fmt.Errorf("%w: checksum mismatch", plans.ErrPatchUnapplicable), "unapplicable", http.StatusUnprocessableEntity},
		{fmt.Errorf("%w: expectedVersion 2", plans.ErrStaleVersion), "stale_version", http.StatusConflict},
		{&plans.RemoteError{Plan: "p", Server: "127.0.0.1:1", Request: "GET x", Status: 401}, "remote_failed", http.StatusBadGateway},
		{&plans.RemotePlanError{Key: "p", URL: "http://127.0.0.1:1/api/v1/documents/x"}, "remote_document", http.StatusNotFound},
	}
	for _, tc := range cases {
		tool := planFailure(tc.err)
		door := s.documentError(context.Background(), "p", tc.err)
		if tool.Error != tc.code || door.Code != tc.code || door.Status != tc.status {
			t.Errorf("%v: MCP %q, document door %q %d; want %q %d", tc.err, tool.Error, door.Code, door.Status, tc.code, tc.status)
		}
		if tool.Message != door.Message {
			t.Errorf("%v: the reasons differ:\nMCP:  %s\ndoor: %s", tc.err, tool.Message, door.Message)
		}
		if tc.code == "timeout" && door.RetryAfter == 0 {
			t.Errorf("%v: a timeout without Retry-After", tc.err)
		}
	}
	// A fault of the store: the same reason, coded as each door codes a 500.
	tool, door := planFailure(io.ErrUnexpectedEOF), s.documentError(context.Background(), "p", io.ErrUnexpectedEOF)
	if tool.Error != "failed" || door.Code != CodeInternal || door.Status != http.StatusInternalServerError || tool.Message != door.Message {
		t.Errorf("store fault: MCP %+v, door %+v", tool, door)
	}
	if !errors.Is(fmt.Errorf("x: %w", plans.ErrFileRefused), plans.ErrFileRefused) {
		t.Fatal("ErrFileRefused does not wrap")
	}
}
