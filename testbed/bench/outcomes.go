package bench

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// OutcomeLog is a slog.Handler that formats every record as the handler's
// JSON log would (into io.Discard, so the formatting cost stays in the
// measurement) and counts the "outcome" attribute of invocation records.
type OutcomeLog struct {
	slog.Handler // the JSON handler (Enabled: Info and above)
	table        *outcomeTable
}

type outcomeTable struct {
	mu sync.Mutex
	n  map[string]int
}

// NewOutcomeLog returns an empty OutcomeLog.
func NewOutcomeLog() *OutcomeLog {
	return &OutcomeLog{Handler: slog.NewJSONHandler(io.Discard, nil), table: &outcomeTable{n: map[string]int{}}}
}

// Handle counts the record's outcome and formats it.
func (l *OutcomeLog) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "outcome" {
			l.table.mu.Lock()
			l.table.n[a.Value.String()]++
			l.table.mu.Unlock()
			return false
		}
		return true
	})
	return l.Handler.Handle(ctx, r)
}

// WithAttrs keeps counting into the same table.
func (l *OutcomeLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &OutcomeLog{Handler: l.Handler.WithAttrs(attrs), table: l.table}
}

// WithGroup keeps counting into the same table.
func (l *OutcomeLog) WithGroup(name string) slog.Handler {
	return &OutcomeLog{Handler: l.Handler.WithGroup(name), table: l.table}
}

// Take returns the counts so far and resets them.
func (l *OutcomeLog) Take() Outcomes {
	l.table.mu.Lock()
	defer l.table.mu.Unlock()
	out := l.table.n
	l.table.n = map[string]int{}
	return out
}

// Outcomes counts invocations by outcome.
type Outcomes map[string]int

// String writes the counts as "created 20, duplicate 3".
func (o Outcomes) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o)) {
		parts = append(parts, k+" "+strconv.Itoa(o[k]))
	}
	return strings.Join(parts, ", ")
}

// Only reports whether every counted outcome is want, and there are n.
func (o Outcomes) Only(want string, n int) bool {
	return len(o) == 1 && o[want] == n
}
