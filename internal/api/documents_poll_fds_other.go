//go:build !unix

package api

// pollDescriptorBudget: no descriptor limit is known here; only server.max_parked_polls
// bounds the parked polls.
func pollDescriptorBudget() int { return 0 }
