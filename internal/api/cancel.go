package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"talkd/internal/queue"
)

// cancelRequest is the body of POST /cancel: one announcement by id, or (empty) every
// waiting announcement of the caller; all widens that to every caller and needs the
// control grant.
type cancelRequest struct {
	ID  string `json:"id,omitempty"`
	All bool   `json:"all,omitempty"`
}

type cancelResponse struct {
	Cancelled []string `json:"cancelled"`
	Message   string   `json:"message"`
}

// handleCancel is POST /cancel: it drops waiting announcements without muting. Dropping
// one's own needs the speak grant (what one may say, one may take back); others' needs
// the control grant, like stop and mute.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request, a admitted) {
	caller := a.caller
	var req cancelRequest
	if len(strings.TrimSpace(string(a.body))) > 0 {
		if err := decodeStrict(a.body, &req); err != nil {
			s.refuseHTTP(w, r, err)
			return
		}
	}
	switch {
	case req.All && !caller.CanControl():
		s.refuseHTTP(w, r, &Error{Status: http.StatusForbidden, Code: CodeForbidden,
			Message: fmt.Sprintf("client %q has no control grant: it may cancel only its own announcements (leave out \"all\")", caller.ID)})
		return
	case !req.All && !caller.CanSpeak():
		s.refuseHTTP(w, r, &Error{Status: http.StatusForbidden, Code: CodeForbidden, Message: fmt.Sprintf("client %q has no speak grant", caller.ID)})
		return
	}
	ids, err := s.voice.Cancel(r.Context(), queue.CancelRequest{ID: req.ID, Caller: caller.ID, All: req.All})
	switch {
	case errors.Is(err, queue.ErrNotWaiting):
		s.refuseHTTP(w, r, &Error{Status: http.StatusConflict, Code: CodeNotWaiting, Field: "id",
			Message: err.Error() + "; only waiting announcements can be cancelled (talk stop ends the one speaking)"})
		return
	case err != nil:
		s.refuseHTTP(w, r, &Error{Status: http.StatusServiceUnavailable, Code: CodeInternal, Message: "cancel: " + err.Error()})
		return
	}
	resp := cancelResponse{Cancelled: ids}
	switch len(ids) {
	case 0:
		resp.Cancelled, resp.Message = []string{}, "nothing was waiting"
	case 1:
		resp.Message = "cancelled " + ids[0]
	default:
		resp.Message = fmt.Sprintf("cancelled %d announcements: %s", len(ids), strings.Join(ids, ", "))
	}
	s.log.Info("cancelled", "caller", caller.ID, "all", req.All, "ids", strings.Join(ids, ","))
	writeJSON(w, http.StatusOK, resp)
}

// maxWaitPoll bounds one GET /wait; clients ask again (talk say --wait does), so no
// proxy or client time limit ends a long wait with an error.
const maxWaitPoll = 60 * time.Second

type waitResponse struct {
	Done  bool        `json:"done"`
	Entry queue.Entry `json:"entry"`
}

// handleWait is GET /wait?id=ID[&timeout=D]: it answers when the announcement has reached
// its final outcome (done: true), or after timeout (default 20s, at most 60s) with its
// state then (done: false).
func (s *Server) handleWait(w http.ResponseWriter, r *http.Request, _ admitted) {
	q := r.URL.Query()
	id := q.Get("id")
	if id == "" {
		s.refuseHTTP(w, r, fieldError("id", "query parameter id is required (the id a speak answer gave)"))
		return
	}
	timeout := 20 * time.Second
	if v := q.Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > maxWaitPoll {
			s.refuseHTTP(w, r, fieldError("timeout", fmt.Sprintf("query parameter timeout must be a duration between 1ms and %s, not %s", maxWaitPoll, strconv.Quote(v))))
			return
		}
		timeout = d
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	e, err := s.voice.Wait(ctx, id)
	switch {
	case errors.Is(err, queue.ErrUnknownAnnouncement):
		s.refuseHTTP(w, r, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Field: "id", Message: err.Error()})
		return
	case err != nil && r.Context().Err() != nil:
		return // the client went away
	}
	writeJSON(w, http.StatusOK, waitResponse{Done: err == nil, Entry: e})
}
