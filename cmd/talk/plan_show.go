package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
)

func (a *app) readPlan(ctx context.Context, key string) (*toolResult, *snapshot, error) {
	// to: the whole text, whatever its size (without it the daemon answers a page).
	res, err := a.callTool(ctx, "werkbaum_read", map[string]any{"plan": key, "to": math.MaxInt32})
	if err != nil {
		return nil, nil, err
	}
	var snap snapshot
	if err := json.Unmarshal(res.StructuredContent, &snap); err != nil {
		return nil, nil, fmt.Errorf("werkbaum_read answered unexpected JSON: %w", err)
	}
	return res, &snap, nil
}

func (a *app) planShow(ctx context.Context, key string) int {
	res, snap, err := a.readPlan(ctx, key)
	if err != nil {
		return a.failPlan(err)
	}
	if a.opts.json {
		a.printResult(res)
		return exitOK
	}
	io.WriteString(a.stdout, snap.Text)
	return exitOK
}
