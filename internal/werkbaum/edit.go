package werkbaum

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Edited is what Edit made of a write: the new text and the guards' verdict on it.
type Edited struct {
	// Text is the new plan text (equal to the old one when the verb changed nothing).
	Text  string
	Guard *GuardResult
	// OldKnown says the runtime's memo held the old text's analysis, so the write did not
	// make it again (that is most of a write's engine time on a large plan).
	OldKnown bool
}

// Edit is Apply and then Guard of the old text against the new one, in one call of the
// script: the write path's (plans.Service.runVerb). The answer is the one the two calls
// give (TestEditEqualsApplyThenGuard holds it to them on many generated edits). What it
// saves is the new text's crossings: Apply copied it out of the script (goja's UTF-16 to
// Go's UTF-8, 7-12 ms and 10 MB on a 10,000-node plan) and Guard handed it back in to be
// scanned again. And a verb that replaces one row of a text without CR (set_status,
// set_size) has the host build the new text (the script's host.splice, spliceRow): a Go
// string reaches the script as itself, while a text the script built is UTF-16 that goja
// converted in full for the split of the edit's parse (10 MB and a third of the engine's
// time of a write on the example plan), and that the memo compared with every text handed
// in. A verb the text does not allow fails with an *InputError, as in Apply.
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
	start := time.Now()
	// Two calls' work (the verb, then the analyses of the guard), so two calls' time.
	_, err = e.runWithin(ctx, 2*e.timeoutFor(texts), "edit", args, texts, func(rt *jsRuntime, callArgs []goja.Value) ([]byte, error) {
		callArgs = append(callArgs, rt.vm.ToValue("host"), spliceHost(rt.vm, callArgs[3], text))
		obj, failure, err := rt.callObject(callArgs)
		if obj == nil {
			return failure, err
		}
		if err := readEdit(rt, obj, &out); err != nil {
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
	e.log.Debug("werkbaum: edit", "verb", call.Verb, "old_text_known", out.OldKnown,
		"took", time.Since(start).Round(time.Microsecond))
	return &out, nil
}

// spliceHost is the script's host for one edit of text, whose value in the script is val
// (js/60_edit.js replaceRow): owns(t) is true for that very value when text has no CR,
// splice(i, content) is text with row i replaced, made in Go.
func spliceHost(vm *goja.Runtime, val goja.Value, text string) goja.Value {
	noCR := strings.IndexByte(text, '\r') < 0
	host := vm.NewObject()
	_ = host.Set("owns", func(c goja.FunctionCall) goja.Value {
		// val is what ToValue made of a Go string (a pointer, or a short ASCII string), so
		// the comparison is one of identity and never compares an uncomparable value.
		return vm.ToValue(noCR && c.Argument(0) == val)
	})
	_ = host.Set("splice", func(c goja.FunctionCall) goja.Value {
		t, err := spliceRow(text, int(c.Argument(0).ToInteger()), c.Argument(1).String())
		if err != nil {
			panic(vm.NewGoError(err))
		}
		return vm.ToValue(t)
	})
	return host
}

// readEdit reads the script's edit answer {text, guard} into out.
func readEdit(rt *jsRuntime, obj *goja.Object, out *Edited) error {
	t := obj.Get("text")
	if t == nil || !goja.IsString(t) {
		return fmt.Errorf("the answer has no text")
	}
	// A text the host made (or was handed) comes back as the Go string it was: no copy.
	out.Text = t.String()
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
	if known := obj.Get("oldKnown"); known != nil {
		out.OldKnown = known.ToBoolean()
	}
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
