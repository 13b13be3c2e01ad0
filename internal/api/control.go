package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"talkd/internal/queue"
)

type muteRequest struct {
	For   string `json:"for,omitempty"`
	Until string `json:"until,omitempty"`
}

type muteResponse struct {
	Muted   bool       `json:"muted"`
	Until   *time.Time `json:"until,omitempty"`
	Message string     `json:"message"`
}

func muteAnswer(m queue.MuteState) muteResponse {
	r := muteResponse{Muted: m.Muted, Until: m.Until}
	switch {
	case !m.Muted:
		r.Message = "not muted"
	case m.Until == nil:
		r.Message = "muted until unmuted"
	default:
		r.Message = "muted until " + m.Until.Local().Format("2006-01-02 15:04:05")
	}
	return r
}

func (s *Server) handleMute(w http.ResponseWriter, r *http.Request, a admitted) {
	var req muteRequest
	if len(strings.TrimSpace(string(a.body))) > 0 {
		if err := decodeStrict(a.body, &req); err != nil {
			s.refuseHTTP(w, r, err)
			return
		}
	}
	until, err := s.muteEnd(req)
	if err != nil {
		s.refuseHTTP(w, r, err)
		return
	}
	state, merr := s.voice.Mute(r.Context(), until)
	if merr != nil {
		s.refuseHTTP(w, r, &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: merr.Error()})
		return
	}
	s.log.Info("muted", "caller", a.caller.ID, "until", until)
	writeJSON(w, http.StatusOK, muteAnswer(state))
}

// muteEnd turns {"for":"30m"} or {"until":"14:00"} into an end time; nil = until unmuted.
// A clock time that has passed today means tomorrow.
func (s *Server) muteEnd(req muteRequest) (*time.Time, *Error) {
	now := s.now()
	switch {
	case req.For != "" && req.Until != "":
		return nil, fieldError("for", `give either "for" or "until", not both`)
	case req.For != "":
		d, err := time.ParseDuration(req.For)
		if err != nil || d <= 0 {
			return nil, fieldError("for", fmt.Sprintf("field \"for\" must be a positive duration like 30m or 2h, not %q", req.For))
		}
		t := now.Add(d)
		return &t, nil
	case req.Until != "":
		if t, err := time.Parse(time.RFC3339, req.Until); err == nil {
			if !t.After(now) {
				return nil, fieldError("until", "field \"until\" lies in the past")
			}
			return &t, nil
		}
		hm, err := time.Parse("15:04", req.Until)
		if err != nil {
			return nil, fieldError("until", fmt.Sprintf("field \"until\" must be a clock time like 14:00 or an RFC 3339 time, not %q", req.Until))
		}
		t := time.Date(now.Year(), now.Month(), now.Day(), hm.Hour(), hm.Minute(), 0, 0, now.Location())
		if !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
		return &t, nil
	}
	return nil, nil
}

func (s *Server) handleUnmute(w http.ResponseWriter, r *http.Request, a admitted) {
	state, err := s.voice.Unmute(r.Context())
	if err != nil {
		s.refuseHTTP(w, r, &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: err.Error()})
		return
	}
	s.log.Info("unmuted", "caller", a.caller.ID)
	writeJSON(w, http.StatusOK, muteAnswer(state))
}

func (s *Server) handleStop(w http.ResponseWriter, r *http.Request, _ admitted) {
	id, err := s.voice.Stop(r.Context())
	if err != nil {
		s.refuseHTTP(w, r, &Error{Status: http.StatusServiceUnavailable, Code: CodeInternal, Message: "stop: " + err.Error()})
		return
	}
	resp := map[string]any{"stopped": id != ""}
	if id != "" {
		resp["id"] = id
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request, _ admitted) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			s.refuse(w, r, &door{path: "/history"}, fieldError("limit", "query parameter limit must be a positive number"))
			return
		}
		limit = n
	}
	entries := s.voice.History(limit)
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ admitted) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

type statusResponse struct {
	Version string       `json:"version"`
	Mode    string       `json:"mode"`
	Config  string       `json:"config"`
	Mute    muteResponse `json:"mute"`
	Quiet   quietStatus  `json:"quiet_hours"`
	Queue   queueStatus  `json:"queue"`
	Rules   rulesStatus  `json:"rules"`
	Voice   any          `json:"voice"`
	CORS    []string     `json:"cors"`
	MCP     bool         `json:"mcp"`
	Plans   []any        `json:"plans"`
	Caller  string       `json:"caller"`
	// AnalysisCache is the plans' analysis cache on disk (werkbaum.PersistStats),
	// absent without plans or with the cache off.
	AnalysisCache any `json:"analysis_cache,omitempty"`
}

type quietStatus struct {
	Active  bool     `json:"active"`
	Window  string   `json:"window,omitempty"`
	Windows []string `json:"windows"`
}

type queueStatus struct {
	Waiting  int          `json:"waiting"`
	Capacity int          `json:"capacity"`
	Speaking *queue.Entry `json:"speaking"`
}

type rulesStatus struct {
	RateLimit map[string]string `json:"rate_limit"`
	MaxWait   string            `json:"max_wait"`
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request, a admitted) {
	caller := a.caller
	st := s.voice.Status()
	set := s.live.Load()
	resp := statusResponse{
		Version: s.version, Mode: "local", Config: set.cfg.Source,
		Mute:  muteAnswer(st.Mute),
		Quiet: quietStatus{Active: st.Quiet, Window: st.QuietNow, Windows: orEmpty(st.QuietHours)},
		Queue: queueStatus{Waiting: st.Waiting, Capacity: st.Capacity, Speaking: st.Speaking},
		Rules: rulesStatus{RateLimit: map[string]string{
			"low": st.Intervals[queue.Low].String(), "normal": st.Intervals[queue.Normal].String(), "high": st.Intervals[queue.High].String(),
		}, MaxWait: set.cfg.Rules.MaxWait.Duration.String()},
		CORS:   orEmpty(set.cfg.Server.AllowedOrigins),
		MCP:    true,
		Plans:  s.visiblePlans(r.Context(), caller),
		Caller: caller.ID,
	}
	if set.auth.shared {
		resp.Mode = "shared"
	}
	if s.engines != nil {
		resp.Voice = s.engines.Describe()
	}
	if s.analysisCache != nil {
		resp.AnalysisCache = s.analysisCache()
	}
	writeJSON(w, http.StatusOK, resp)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// handleVoices is GET /voices: the provider and sink as in /status, plus the voices the
// engine can list (an engine that cannot tell answers with an error field, not a failure).
func (s *Server) handleVoices(w http.ResponseWriter, r *http.Request, _ admitted) {
	resp := map[string]any{"voices": []any{}}
	if s.engines == nil {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	if raw, err := json.Marshal(s.engines.Describe()); err == nil {
		_ = json.Unmarshal(raw, &resp)
	}
	voices, err := s.engines.Voices(r.Context())
	if err != nil {
		resp["error"] = err.Error()
	} else if voices != nil {
		resp["voices"] = voices
	}
	writeJSON(w, http.StatusOK, resp)
}
