package remote

import (
	"fmt"
	"net/http"
	"strings"
)

// Error is a document server that could not be used: unreachable, too slow, or an answer
// other than the protocol's success and conflict answers. It names the plan, the server,
// the request and the status, so the agent (and the log) can tell what to fix.
type Error struct {
	Plan    string
	Server  string // host[:port]
	Request string // e.g. "PATCH …/content"
	Status  int    // 0 when no answer came
	Detail  string // the server's problem detail, or the transport error
	Timeout bool
	// MaybeApplied is set for a write whose answer was lost: the server may have applied
	// it, and the same request_id (or operation_get) settles it safely.
	MaybeApplied bool
	// Hint says what to do about it.
	Hint string
	// Location is where a redirect answer pointed; talkd follows none but a same-origin
	// 307/308, so the request was not sent there.
	Location string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan %q: the document server %s ", e.Plan, e.Server)
	switch {
	case e.Timeout:
		fmt.Fprintf(&b, "did not answer %s in time", e.Request)
	case e.Status == 0:
		fmt.Fprintf(&b, "is unreachable (%s): %s", e.Request, e.Detail)
	default:
		fmt.Fprintf(&b, "answered %d %s to %s", e.Status, http.StatusText(e.Status), e.Request)
		if IsRedirect(e.Status) {
			fmt.Fprintf(&b, " (a redirect to %q, which talkd does not follow: only a 307 or 308 to the same origin is; set the plan's url to the document's own address)", e.Location)
		} else if e.Detail != "" {
			fmt.Fprintf(&b, ": %s", e.Detail)
		}
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	if e.MaybeApplied {
		b.WriteString("; the write may or may not have been applied: send the same request again with the same request_id, or ask operation_get, to settle it (it is never applied twice)")
	} else {
		b.WriteString("; nothing was changed")
	}
	return b.String()
}
