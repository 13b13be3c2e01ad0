package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// maxConflictRetries bounds how often set-status re-applies its verb on a fresh base when
// another writer got in between (the verb names a node by id, so it stays meaningful).
const maxConflictRetries = 3

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "talk-" + hex.EncodeToString(b[:])
}

// planWriteGuards are the guard switches every plan write takes.
type planWriteGuards struct{ allowWarnings, allowProd bool }

// planWrite applies one node verb (tool with its verb arguments) to plan key: it reads the
// base, writes with a fresh request id, and when another writer got in between re-applies
// the verb on the new base (the verb names nodes by id, so it stays meaningful) up to
// maxConflictRetries times. done says what happened, for the human output.
func (a *app) planWrite(ctx context.Context, key, tool string, verb map[string]any, g planWriteGuards, done func(writeResult) string) int {
	_, snap, err := a.readPlan(ctx, key)
	if err != nil {
		return a.failPlan(err)
	}
	cur := snap.Base
	for attempt := 1; ; attempt++ {
		reqID := newRequestID()
		args := map[string]any{"plan": key, "base": cur, "request_id": reqID}
		for k, v := range verb {
			args[k] = v
		}
		if g.allowWarnings {
			args["allowWarnings"] = true
		}
		if g.allowProd {
			args["allowProd"] = true
		}
		res, err := a.callTool(ctx, tool, args)
		var te *toolError
		if errors.As(err, &te) && attempt <= maxConflictRetries {
			var c struct {
				Conflict bool  `json:"conflict"`
				Base     *base `json:"base"`
			}
			if json.Unmarshal(te.res.StructuredContent, &c) == nil && c.Conflict && c.Base != nil {
				a.warnf("plan %s changed meanwhile (now revision %d); applying the change again on the new text", key, c.Base.Revision)
				cur = *c.Base
				continue
			}
		}
		var ue *unreachableError
		if errors.As(err, &ue) {
			// The write may or may not have happened; its request id tells.
			a.warnf("the answer to request %s was lost; ask the daemon with operation_get (plan %q, request_id %q)", reqID, key, reqID)
		}
		if err != nil {
			return a.failPlan(err)
		}
		if a.opts.json {
			a.printResult(res)
			return exitOK
		}
		var wr writeResult
		if err := json.Unmarshal(res.StructuredContent, &wr); err != nil {
			return a.fail(fmt.Errorf("%s answered unexpected JSON: %w", tool, err))
		}
		if wr.Changed {
			fmt.Fprintf(a.stdout, "%s: %s, now revision %d\n", key, done(wr), wr.Revision)
		} else {
			fmt.Fprintf(a.stdout, "%s: %s (revision %d)\n", key, done(wr), wr.Revision)
		}
		for _, w := range wr.Added {
			fmt.Fprintf(a.stdout, "  new warning     %s\n", w)
		}
		for _, w := range wr.Removed {
			fmt.Fprintf(a.stdout, "  warning gone    %s\n", w)
		}
		fmt.Fprintf(a.stdout, "  %s in the plan (talk plan inspect %s)\n", count(wr.WarningCount, "warning"), key)
		return exitOK
	}
}
