package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"talkd/internal/werkbaum/plans"
)

// POST /api/v1/documents {title, content}: the editor's Share button makes a new shared
// document of what it holds. talkd's documents are plan files, so it creates one only
// where the user allowed it: directly in the folder of the first [[roots]] entry with
// create = true (local mode only, as roots are). The file name is the title made safe;
// the file is created whole and never over an existing one (plans.CreateInRoot), and the
// answer is the new Document with its URL. Without such a root the answer is a problem
// saying how to allow it, which the editor shows.

// documentCreator is what creation needs of the plan store.
type documentCreator interface {
	CreateInRoot(ctx context.Context, root, name string, text []byte) (key string, err error)
}

var _ documentCreator = (*plans.Service)(nil)

// createWire is the body of POST /documents.
type createWire struct {
	Title   *string `json:"title"`
	Content *string `json:"content"`
}

// createdWire is the 201 answer: the Document, and where it lives.
type createdWire struct {
	documentWire
	// URL is the document's address (what ?live= takes); Key the plan key agents use.
	URL string `json:"url"`
	Key string `json:"key"`
}

// maxCreateTries bounds the search for a free file name ("Title.werkbaum", "Title
// 2.werkbaum", …).
const maxCreateTries = 100

// createNotAllowed is the refusal when no root takes new documents: the editor shows it.
const createNotAllowed = "this talkd does not create documents here: its documents are plan files, and no folder " +
	"is open for new ones. To let the editor's Share button create plans, add create = true to a [[roots]] " +
	"entry of the talkd config (local mode), e.g.\n[[roots]]\nname = \"notes\"\npath = \"~/notes\"\ncreate = true\n" +
	"and run talk reload; or add the plan as a file and a [[plans]] entry and open its link (talk plan open KEY)"

// createNotShared is the refusal in shared mode, where plans are granted by key.
const createNotShared = "this talkd runs in shared mode ([[clients]] in its config), where every plan is granted " +
	"to clients by key, so it does not create documents: add the plan file and a [[plans]] entry with the clients' " +
	"read and write grants to the talkd config and run talk reload"

func (s *Server) createDocument(w http.ResponseWriter, r *http.Request, a admitted) {
	d := a.door
	ctx := r.Context()
	cfg := s.config()
	root := s.createRoot(cfg)
	creator, _ := s.documents.store.(documentCreator)
	switch {
	case cfg.Shared():
		s.refuse(w, r, d, &Error{Status: http.StatusForbidden, Code: CodeForbidden, Message: createNotShared})
		return
	case root == "" || creator == nil:
		s.refuse(w, r, d, &Error{Status: http.StatusForbidden, Code: CodeForbidden, Message: createNotAllowed})
		return
	}
	var in createWire
	if e := decodeBody(a.body, "{title, content}", &in); e != nil {
		s.refuse(w, r, d, e)
		return
	}
	if in.Title == nil {
		s.refuse(w, r, d, missing("title", "the new document's title, 1 to 255 characters"))
		return
	}
	if e := label("title", *in.Title, 1, maxTitle); e != nil {
		s.refuse(w, r, d, e)
		return
	}
	if in.Content == nil {
		s.refuse(w, r, d, missing("content", "the new document's text (may be empty)"))
		return
	}
	title := *in.Title
	text := []byte(strings.ReplaceAll(strings.ReplaceAll(*in.Content, "\r\n", "\n"), "\r", "\n"))
	var key string
	var err error
	for n := 1; n <= maxCreateTries; n++ {
		key, err = creator.CreateInRoot(ctx, root, planFileName(title, n), text)
		if !errors.Is(err, plans.ErrPlanExists) {
			break
		}
	}
	switch {
	case errors.Is(err, plans.ErrPlanExists):
		s.refuse(w, r, d, &Error{Status: http.StatusConflict, Code: "exists",
			Message: fmt.Sprintf("root %q already has %d plans named after %q; choose another title", root, maxCreateTries, truncate(title, 80))})
		return
	case err != nil:
		s.refuse(w, r, d, s.documentError(ctx, key, err))
		return
	}
	doc, err := s.createdDocument(ctx, key, title, a.caller)
	if err != nil {
		s.refuse(w, r, d, s.documentError(ctx, key, err))
		return
	}
	url := "http://" + s.listenAddr + documentsPrefix + "/documents/" + doc.ID
	w.Header().Set("Location", url)
	writeDocJSON(w, r, http.StatusCreated, createdWire{documentWire: documentOf(doc), URL: url, Key: key})
}

// createdDocument is the new plan's Document. Its title is the file name's (the store's
// rule); when making the name safe changed the title, the title is set as asked.
func (s *Server) createdDocument(ctx context.Context, key, title string, c Caller) (*plans.Document, error) {
	st := s.documents.store
	id, err := st.DocumentID(ctx, key)
	if err != nil {
		return nil, err
	}
	doc, err := st.Document(ctx, id)
	if err != nil || doc.Title == title {
		return doc, err
	}
	return st.SetTitle(ctx, id, title, doc.Version, plans.DocAuthor{Client: c.ID, Agent: c.Agent})
}

// planFileName is the file name of the n-th try to create a plan titled title: the title
// with what is unsafe in a file name on any system (/ \ : * ? " < > |, control
// characters and the like) replaced by "-", runs of spaces as one, no leading dot or
// dash, at most 100 characters; "plan" when nothing is left; " n" added from the second
// try on.
func planFileName(title string, n int) string {
	var b strings.Builder
	count := 0
	for _, r := range strings.Join(strings.Fields(title), " ") {
		if count == 100 {
			break
		}
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r), strings.ContainsRune(" -_.,()+", r):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		count++
	}
	name := strings.TrimRight(strings.TrimLeft(b.String(), ".- "), ". ")
	if name == "" {
		name = "plan"
	}
	if n > 1 {
		name += fmt.Sprintf(" %d", n)
	}
	return name + ".werkbaum"
}
