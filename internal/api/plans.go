package api

import "context"

// visiblePlans lists the plans the caller may read, for /status.
func (s *Server) visiblePlans(ctx context.Context, caller Caller) []any {
	out := []any{}
	if s.plans == nil {
		return out
	}
	for _, pl := range s.planSummaries(ctx, caller, s.plans) {
		out = append(out, pl)
	}
	return out
}
