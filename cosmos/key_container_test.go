package cosmos_test

import (
	"context"
	"testing"

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
