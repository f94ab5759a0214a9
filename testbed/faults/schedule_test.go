package faults

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// A request's fault depends on the seed and on which request it is (its
// kind, its partition, how many of them came before), never on what other
// partitions do meanwhile: two runs with one seed and the requests of two
// orders interleaved differently get the same faults, order by order.
func TestFaultsRerunFromTheSeed(t *testing.T) {
	up := newUpstream(t)
	rates := Rates{Throttle: 0.3, Unavailable: 0.2}
	statuses := func(seed uint64, sequence string) map[string][]int {
		p := startProxy(t, ProxyConfig{Upstream: up.URL, Rates: rates, Seed: seed})
		got := map[string][]int{}
		for _, order := range strings.Split(sequence, "") {
			resp, _, err := send(t, http.MethodPost, p.URL()+docsPath, `{}`, "x-ms-documentdb-partitionkey", `["`+order+`"]`)
			if err != nil {
				t.Fatal(err)
			}
			got[order] = append(got[order], resp.StatusCode)
		}
		return got
	}
	first, rerun, other := statuses(7, "ABABABABABABABAB"), statuses(7, "BBBBBBBBAAAAAAAA"), statuses(8, "ABABABABABABABAB")
	for _, order := range []string{"A", "B"} {
		if !slices.Equal(first[order], rerun[order]) {
			t.Errorf("order %s: %v in one run, %v in the rerun", order, first[order], rerun[order])
		}
	}
	if slices.Equal(first["A"], other["A"]) && slices.Equal(first["B"], other["B"]) {
		t.Errorf("seeds 7 and 8 drew the same faults: %v", first)
	}
}
