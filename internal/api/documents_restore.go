package api

import (
	"net/http"

	"talkd/internal/werkbaum/plans"
)

// POST /api/v1/documents/{id}/restore {version}: the editor's history menu brings a kept
// version back. The store makes it a new version of type RESTORED through the one commit
// of every write (plans.Service.Restore); this door decodes the body and renders the
// store's refusals like every other document error (plan_errors.go).

// restoreWire is the body of POST …/restore. DOCUMENTS.md has only {version?}; clientId
// and displayName are taken when an editor sends them, for the RESTORED version's
// attribution (without a name, the client id's last one).
type restoreWire struct {
	Version     *int64  `json:"version"`
	ClientID    *string `json:"clientId"`
	DisplayName *string `json:"displayName"`
}

type restoreRequest struct {
	Version     uint64
	ClientID    string
	DisplayName string
}

// decodeRestore decodes a restore's body. The protocol's answer to a restore that names
// no version of a document that still exists is 409 (the Werkbaum server undeletes with
// it; talkd's documents come back with their file).
func decodeRestore(raw []byte) (restoreRequest, *Error) {
	var in restoreWire
	var out restoreRequest
	if e := decodeBody(raw, "{version}", &in); e != nil {
		return out, e
	}
	if in.Version == nil {
		return out, &Error{Status: http.StatusConflict, Code: "conflict", Field: "version",
			Message: `the document exists: name the version to restore, {"version": N} (GET …/history lists the versions kept)`}
	}
	v, e := wholeNumber("version", in.Version, true, maxVersion)
	if e != nil {
		return out, e
	}
	out.Version = uint64(v)
	out.ClientID, out.DisplayName, e = decodeWho(in.ClientID, in.DisplayName)
	return out, e
}

func (s *Server) restoreDocument(w http.ResponseWriter, r *http.Request, a admitted) {
	d, id, key := a.door, a.id, a.key
	req, e := decodeRestore(a.body)
	if e != nil {
		s.refuse(w, r, d, e)
		return
	}
	who := plans.DocAuthor{ClientID: req.ClientID, DisplayName: req.DisplayName, Client: a.caller.ID, Agent: a.caller.Agent}
	doc, err := s.documents.store.Restore(r.Context(), id, req.Version, who)
	if err != nil {
		s.refuse(w, r, d, s.documentError(r.Context(), key, err))
		return
	}
	writeDocJSON(w, r, http.StatusOK, documentOf(doc))
}
