package werkbaum

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// Edited is what Edit made of a write: the new text and the guards' verdict on it.
type Edited struct {
	// Text is the new plan text (the old one, the same string, when the verb changed
	// nothing).
	Text string
	// Same is set when the verb left the text as it was.
	Same  bool
	Guard *GuardResult
}

// Edit is Apply and then Guard of the old text against the new one, in one call of the
// script: the write path's (plans.Service.runVerb). The answer is the one the two calls
// give (TestEditEqualsApplyThenGuard holds it to them on many generated edits); what it
// saves on a large plan is the new text's round trip: Apply copies it out of the script
// (converting goja's UTF-16 to Go's UTF-8, about 7 ms and 10 MB on a 10,000-node plan) and
// Guard hands it back in (scanned and converted again). Here it stays in the script, and
// a verb that replaced one line (set_status, set_size) tells which and with what, so the
// new text is built from the old one in Go (spliceRow). A verb the text does not allow
// fails with an *InputError, as in Apply.
func (e *Engine) Edit(ctx context.Context, text string, v Verb, opts GuardOptions) (*Edited, error) {
	call, err := e.verbArgs(text, v)
	if err != nil {
		return nil, err
	}
	args := struct {
		verbCall
		GuardOptions
	}{call, opts}
	texts := []textArg{{"text", text}}
	var out Edited
	// Two calls' work (the verb, then the analyses of the guard), so two calls' time.
	_, err = e.runWithin(ctx, 2*e.timeoutFor(texts), "edit", args, texts, func(rt *jsRuntime, callArgs []goja.Value) ([]byte, error) {
		res, err := rt.callValue(goja.Undefined(), callArgs...)
		if err != nil {
			return nil, err
		}
		obj, ok := res.(*goja.Object)
		if !ok { // a failure: the JSON error answer
			return []byte(res.String()), nil
		}
		if err := readEdit(rt, text, obj, &out); err != nil {
			return nil, fmt.Errorf("%w: edit: %v", ErrEngine, err)
		}
		return []byte("{}"), nil // run reads only failures from the JSON; the answer went above
	})
	if err != nil {
		return nil, err
	}
	if err := e.checkSize("new text", len(out.Text)); err != nil {
		return nil, err
	}
	return &out, nil
}

// readEdit reads the script's edit answer {text, row, content, same, guard} into out.
func readEdit(rt *jsRuntime, old string, obj *goja.Object, out *Edited) error {
	out.Same = obj.Get("same").ToBoolean()
	row := obj.Get("row").ToInteger()
	switch {
	case out.Same:
		out.Text = old
	case row >= 0:
		content := obj.Get("content")
		if content == nil || !goja.IsString(content) {
			return fmt.Errorf("row %d without its content", row)
		}
		t, err := spliceRow(old, int(row), content.String())
		if err != nil {
			return err
		}
		out.Text = t
	default:
		t := obj.Get("text")
		if t == nil || !goja.IsString(t) {
			return fmt.Errorf("the answer has no text")
		}
		out.Text = t.String()
	}
	pieces, ok := goja.AssertFunction(rt.vm.Get("Werkbaum").ToObject(rt.vm).Get("_pieces"))
	if !ok {
		return fmt.Errorf("Werkbaum._pieces is not a function")
	}
	list, err := pieces(goja.Undefined(), obj.Get("guard"))
	if err != nil {
		return err
	}
	raw, err := rt.joinPieces(list)
	if err != nil {
		return err
	}
	var g GuardResult
	if err := json.Unmarshal(raw, &g); err != nil {
		return fmt.Errorf("decode the guard's verdict: %v", err)
	}
	out.Guard = &g
	return nil
}

// spliceRow is text with the content of row i (0-based) replaced: the rows of the script's
// parser (js/60_edit.js replaceRow, which answers a row only for a text without CR), i.e.
// the text split at LF after one leading byte-order mark, which is not part of row 0.
// Everything outside the row keeps its bytes.
func spliceRow(text string, i int, content string) (string, error) {
	start := 0
	if strings.HasPrefix(text, "\ufeff") {
		start = len("\ufeff")
	}
	for k := 0; k < i; k++ {
		nl := strings.IndexByte(text[start:], '\n')
		if nl < 0 {
			return "", fmt.Errorf("row %d is past the text's last row %d", i, k)
		}
		start += nl + 1
	}
	end := len(text)
	if nl := strings.IndexByte(text[start:], '\n'); nl >= 0 {
		end = start + nl
	}
	return text[:start] + content + text[end:], nil
}
