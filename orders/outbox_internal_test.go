package orders

import (
	"fmt"
	"testing"
)

// The stored outbox document is spliced from the published event, which
// must be an object with at least one member.
func TestStoredEventNeedsAnObjectWithMembers(t *testing.T) {
	for _, published := range []string{"", "{", "{}", "[]", `"x"`} {
		if doc, err := storedEvent("E-1", []byte(published)); err == nil {
			t.Errorf("storedEvent(%q) = %s, want an error", published, doc)
		}
	}
	doc, err := storedEvent("E-1", []byte(`{"a":1}`))
	want := fmt.Sprintf(`{"id":"E-1","type":%q,"ttl":%d,"a":1}`, TypeOutboxEvent, OutboxEventTTL)
	if err != nil || string(doc) != want {
		t.Errorf("storedEvent = %s, %v; want %s", doc, err, want)
	}
}
