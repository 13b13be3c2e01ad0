package queue

import "fmt"

// Priority orders speaking: High before Normal before Low.
type Priority int

// The three priorities; the zero value is Low so that an unset priority never jumps ahead.
const (
	Low Priority = iota
	Normal
	High
)

// ParsePriority reads "low", "normal" or "high"; "" means Normal.
func ParsePriority(s string) (Priority, error) {
	switch s {
	case "low":
		return Low, nil
	case "", "normal":
		return Normal, nil
	case "high":
		return High, nil
	}
	return Normal, fmt.Errorf("priority must be low, normal or high, not %q", s)
}

func (p Priority) String() string {
	switch p {
	case Low:
		return "low"
	case High:
		return "high"
	}
	return "normal"
}
