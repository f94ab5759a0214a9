package cosmos_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordersink/orders-consumer/cosmos"
)

// The key container cosmos-setup creates indexes nothing, as Bicep's: a key
// record is only ever read by its id, and every indexed path would cost
// request units on each of its writes.
func TestKeyContainerIndexesNothing(t *testing.T) {
	e := testEnv(t)
	c, err := cosmos.NewClient(e.Options())
	if err != nil {
		t.Fatal(err)
	}
	cc, err := c.NewContainer(e.Database, cosmos.KeyContainer)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cc.Read(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := r.ContainerProperties.IndexingPolicy
	if p == nil || len(p.IncludedPaths) != 0 || len(p.ExcludedPaths) != 1 || p.ExcludedPaths[0].Path != "/*" {
		t.Errorf("indexing policy %+v, want nothing included and /* excluded", p)
	}
}

// TestKeyContainerIsRepeatableWithTTLOnAndNoDefault: creating the key
// container again is no error, and it has TTL on with no default (-1): each
// record lives for the ttl it carries (IDEMPOTENCY_KEY_TTL), which Cosmos DB
// ignores in a container whose TTL is off. Its partition key is /id.
func TestKeyContainerIsRepeatableWithTTLOnAndNoDefault(t *testing.T) {
	e := testEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Keys.CreateContainer(ctx); err != nil {
		t.Fatalf("second CreateContainer: %v", err)
	}
	p, err := e.Keys.Properties(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ttl := p.DefaultTimeToLive; ttl == nil || *ttl != -1 {
		t.Errorf("default TTL %s, want -1 (on, no default)", describeTTL(ttl))
	}
	if got := strings.Join(p.PartitionKeyDefinition.Paths, ","); got != "/id" {
		t.Errorf("partition key %s, want /id", got)
	}
}

// describeTTL is a container's default TTL as Cosmos DB shows it: "off"
// when unset.
func describeTTL(ttl *int32) string {
	if ttl == nil {
		return "off"
	}
	return strconv.Itoa(int(*ttl))
}
