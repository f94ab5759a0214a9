package main

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// filter selects parked messages.
type filter struct {
	queue     string          // one of queueKinds; "": any queue
	reasons   map[string]bool // nil: any reason
	order     string
	olderThan time.Duration
	// refs are orderIds, messageIds or sequence numbers; a message matching
	// any of them is selected (none: every message).
	refs []string
}

// register adds the filter's flags; queueHelp names --from's default.
func (f *filter) register(fs *flag.FlagSet, reasonHelp, queueHelp string) {
	fs.Func("from", "only the queue "+strings.Join(queueKinds, ", ")+" ("+queueHelp+")", func(v string) error {
		if !slices.Contains(queueKinds, v) {
			return fmt.Errorf("want one of %s", strings.Join(queueKinds, ", "))
		}
		f.queue = v
		return nil
	})
	fs.Func("reason", reasonHelp, func(v string) error {
		if f.reasons == nil {
			f.reasons = map[string]bool{}
		}
		f.reasons[v] = true
		return nil
	})
	fs.StringVar(&f.order, "order", "", "only this orderId")
	fs.DurationVar(&f.olderThan, "older-than", 0, "only messages parked longer ago than this, e.g. 2h (local dead letters carry no time and never match)")
}

func (f *filter) match(p Parked, now time.Time) bool {
	if f.queue != "" && p.Queue != f.queue || f.reasons != nil && !f.reasons[p.Reason] || f.order != "" && p.OrderID != f.order {
		return false
	}
	if f.olderThan > 0 {
		at, err := time.Parse(time.RFC3339Nano, p.ParkedAt)
		if err != nil || now.Sub(at) < f.olderThan {
			return false
		}
	}
	if len(f.refs) == 0 {
		return true
	}
	for _, r := range f.refs {
		if r == p.OrderID || r == p.MessageID || r == strconv.FormatInt(p.SequenceNumber, 10) {
			return true
		}
	}
	return false
}

// String says what f selects, for "nothing matched".
func (f *filter) String() string {
	var parts []string
	if len(f.refs) > 0 {
		parts = append(parts, strings.Join(f.refs, ", "))
	}
	if f.reasons != nil {
		parts = append(parts, "reason "+strings.Join(slices.Sorted(maps.Keys(f.reasons)), "|"))
	}
	if f.order != "" {
		parts = append(parts, "order "+f.order)
	}
	if f.olderThan > 0 {
		parts = append(parts, "older than "+f.olderThan.String())
	}
	if len(parts) == 0 {
		parts = append(parts, "any message")
	}
	where := "any queue"
	if f.queue != "" {
		where = "the " + f.queue + " queue"
	}
	return strings.Join(parts, ", ") + " in " + where
}

func (f *filter) selectFrom(all []Parked) []Parked {
	var out []Parked
	now := time.Now()
	for _, p := range all {
		if f.match(p, now) {
			out = append(out, p)
		}
	}
	return out
}
