package faults

import (
	"crypto/sha256"
	"encoding/binary"
	"net/http"
)

// schedule draws each document request's fault from the run's seed and
// from what the request is, never from when it comes: the n-th request of
// one kind (method, path, partition key, query or batch) to one document or
// partition gets the same draw in every run with that seed, whatever the
// other requests and the machine's load do meanwhile. So a run reruns from
// its seed (issue 30): the same faults hit the same orders' requests.
type schedule struct {
	seed uint64
	seen map[[sha256.Size]byte]uint64 // requests of each kind so far
}

// draw is the request's two uniform numbers in [0,1): its fault roll and,
// for a slow answer, where in the slow range its delay falls. The caller
// holds the proxy's lock.
func (s *schedule) draw(r *http.Request) (roll, delay float64) {
	h := sha256.New()
	for _, part := range []string{r.Method, r.URL.Path, r.Header.Get("x-ms-documentdb-partitionkey"),
		r.Header.Get("x-ms-documentdb-isquery"), r.Header.Get("x-ms-cosmos-is-batch-request")} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	var kind [sha256.Size]byte
	h.Sum(kind[:0])
	n := s.seen[kind]
	s.seen[kind] = n + 1
	var in [sha256.Size + 16]byte
	copy(in[:], kind[:])
	binary.LittleEndian.PutUint64(in[sha256.Size:], s.seed)
	binary.LittleEndian.PutUint64(in[sha256.Size+8:], n)
	sum := sha256.Sum256(in[:])
	return unit(sum[0:8]), unit(sum[8:16])
}

// unit maps 8 random bytes to [0,1) with 53 bits, as math/rand does.
func unit(b []byte) float64 {
	return float64(binary.LittleEndian.Uint64(b)>>11) / (1 << 53)
}
