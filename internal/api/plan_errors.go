package api

import (
	"fmt"
	"net/http"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// planRendering is how the doors answer one kind of plan store error: the HTTP status of
// the document doors' problem and the reason. The code is the kind itself, on both doors.
type planRendering struct {
	status int
	reason func(err error) string
}

func asIs(err error) string { return err.Error() }

// planRenderings is the one table of plan store refusals (plans.Kind, plans/errors.go):
// an MCP tool error (planFailure) and a problem on /api/v1/documents (documentError) give
// the same code and the same reason for the same error.
var planRenderings = map[plans.Kind]planRendering{
	plans.KindUnknownPlan: {http.StatusNotFound, asIs},
	plans.KindDeleted: {http.StatusNotFound, func(err error) string {
		return "the document is deleted: " + err.Error() + "; its feed and history still answer, and it is back when the file is"
	}},
	plans.KindFileRefused: {http.StatusUnprocessableEntity, asIs},
	plans.KindReadOnly:    {http.StatusForbidden, asIs},
	plans.KindTooLarge: {http.StatusRequestEntityTooLarge, func(err error) string {
		return fmt.Sprintf("the plan or the new text is larger than the notation engine's input limit of %d bytes; nothing was changed: %v", werkbaum.DefaultMaxInputBytes, err)
	}},
	plans.KindTimeout: {http.StatusServiceUnavailable, func(err error) string {
		return "the notation engine ran out of time on this plan (the plan store did not answer in time); nothing was changed: " + err.Error()
	}},
	plans.KindConflict:       {http.StatusConflict, asIs},
	plans.KindRefused:        {http.StatusUnprocessableEntity, asIs},
	plans.KindRejected:       {http.StatusUnprocessableEntity, func(err error) string { return "rejected earlier, not done again: " + err.Error() }},
	plans.KindRequestReused:  {http.StatusConflict, asIs},
	plans.KindStaleVersion:   {http.StatusConflict, asIs},
	plans.KindUnapplicable:   {http.StatusUnprocessableEntity, asIs},
	plans.KindRemoteFailed:   {http.StatusBadGateway, asIs},
	plans.KindRemoteDocument: {http.StatusNotFound, asIs},
	plans.KindNoSuchVersion:  {http.StatusNotFound, asIs},
	plans.KindVersionGone:    {http.StatusUnprocessableEntity, asIs},
	plans.KindInternal:       {http.StatusInternalServerError, func(err error) string { return "the plan store failed: " + err.Error() }},
}

// planError renders a plan store error once for both doors. A timeout says when to try
// again; a fault of the store (KindInternal, 500) keeps its kind's code "failed" here,
// which the HTTP doors answer as CodeInternal.
func planError(err error) *Error {
	kind := plans.KindOf(err)
	r, ok := planRenderings[kind]
	if !ok {
		kind, r = plans.KindInternal, planRenderings[plans.KindInternal]
	}
	e := &Error{Status: r.status, Code: string(kind), Message: r.reason(err)}
	if kind == plans.KindTimeout {
		e.RetryAfter = time.Second
	}
	return e
}
