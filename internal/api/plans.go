package api

import "context"

// visiblePlans lists the plans the caller may read, for /status.
func (s *Server) visiblePlans(ctx context.Context, caller Caller) []any {
	return []any{}
}
