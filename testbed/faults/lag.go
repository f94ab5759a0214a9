package faults

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// replicas emulates Session consistency across the instances of an app
// (ProxyConfig.Lag): Cosmos DB applies a write on a quorum of a partition's
// replicas and serves a read from any one, and only a client presenting a
// session token at least as recent as the write (x-ms-session-token) is
// sure to read it; others may be served by a replica a write behind. Here
// each write an instance made through its listener (Listen) is visible at
// once to that instance, to a read carrying the session token the proxy
// gave its answer, and to the others once its lag (drawn from the seed, up
// to Lag) has passed; before that a point read answers from the version
// before it: 404 for a document not created yet, else the older document
// with its ETag. A client never reads a version older than one it read
// before (a session is monotonic). Queries are answered as they are.
type replicas struct {
	lag  time.Duration
	seed uint64
	now  func() time.Time

	mu   sync.Mutex
	docs map[string][]version   // document path -> its versions, oldest first
	seen map[int]map[string]int // instance -> document path -> newest version read
	lsn  int64                  // session tokens given out
}

func newReplicas(lag time.Duration, seed uint64) *replicas {
	if lag <= 0 {
		return nil
	}
	return &replicas{lag: lag, seed: seed, now: time.Now, docs: map[string][]version{}, seen: map[int]map[string]int{}}
}

// version is one write of a document.
type version struct {
	instance int
	at       time.Time
	lag      time.Duration
	lsn      int64
	body     []byte // the document as stored, when known; nil for a delete
	known    bool   // body says what the version is (its answer echoed it)
}

// SessionHeader is Cosmos DB's session token header.
const SessionHeader = "x-ms-session-token"

// docPath is a point read's or point write's document path, "" for other
// requests: /dbs/{db}/colls/{coll}/docs/{id}, or for a create the
// collection's path with the id of the body.
func docPath(r *http.Request, body []byte) string {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(segs) == 6 && segs[4] == "docs":
		return "/" + strings.Join(segs, "/")
	case len(segs) == 5 && segs[4] == "docs" && r.Method == http.MethodPost && isPlainWrite(r):
		var doc struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(body, &doc) == nil && doc.ID != "" {
			return "/" + strings.Join(segs, "/") + "/" + doc.ID
		}
	}
	return ""
}

func isPlainWrite(r *http.Request) bool {
	return !strings.EqualFold(r.Header.Get("x-ms-documentdb-isquery"), "true") &&
		!strings.EqualFold(r.Header.Get("x-ms-cosmos-is-batch-request"), "true")
}

// wrote books a write Cosmos answered with status and answer (a batch's
// creates each), and returns the session token its answer carries.
func (rs *replicas) wrote(instance int, r *http.Request, body []byte, status int, answer []byte) string {
	if status/100 != 2 || r.Method == http.MethodGet {
		return ""
	}
	var written []version // body and known; the rest is filled below
	var paths []string
	if path := docPath(r, body); path != "" {
		v := version{}
		switch {
		case r.Method == http.MethodDelete:
			v.known = true
		case json.Valid(answer) && len(answer) > 2:
			v.body, v.known = answer, true
		}
		written, paths = append(written, v), append(paths, path)
	} else if strings.EqualFold(r.Header.Get("x-ms-cosmos-is-batch-request"), "true") {
		for _, doc := range BatchCreates(body, answer) {
			written, paths = append(written, version{}), append(paths, r.URL.Path+"/"+idOf(doc))
		}
	}
	if len(written) == 0 {
		return ""
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.lsn++
	for i, v := range written {
		v.instance, v.at, v.lsn, v.lag = instance, rs.now(), rs.lsn, rs.draw(paths[i], len(rs.docs[paths[i]]))
		rs.docs[paths[i]] = append(rs.docs[paths[i]], v)
	}
	return "0:" + strconv.FormatInt(rs.lsn, 10)
}

// BatchCreates are the documents a transactional batch (its request body
// and Cosmos DB's answer) created.
func BatchCreates(body, answer []byte) [][]byte {
	var ops []struct {
		OperationType string          `json:"operationType"`
		ResourceBody  json.RawMessage `json:"resourceBody"`
	}
	var results []struct {
		StatusCode int `json:"statusCode"`
	}
	if json.Unmarshal(body, &ops) != nil || json.Unmarshal(answer, &results) != nil {
		return nil
	}
	var docs [][]byte
	for i := range min(len(ops), len(results)) {
		if strings.EqualFold(ops[i].OperationType, "Create") && results[i].StatusCode == http.StatusCreated {
			docs = append(docs, ops[i].ResourceBody)
		}
	}
	return docs
}

func idOf(doc []byte) string {
	var d struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(doc, &d)
	return d.ID
}

// draw is the lag of the n-th write of a document: a function of the seed
// and of the write, so that a run reruns from its seed.
func (rs *replicas) draw(path string, n int) time.Duration {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rs.seed^uint64(n)*0x9e3779b97f4a7c15)
	sum := sha256.Sum256(append(b[:], path...))
	return time.Duration(unit(sum[:8]) * float64(rs.lag))
}

// read answers a point read from an older version when the instance may
// not see the newest yet, and reports whether it did.
func (rs *replicas) read(w http.ResponseWriter, instance int, r *http.Request) bool {
	path := docPath(r, nil)
	if path == "" || r.Method != http.MethodGet {
		return false
	}
	token, _ := strconv.ParseInt(strings.TrimPrefix(r.Header.Get(SessionHeader), "0:"), 10, 64)
	rs.mu.Lock()
	vs := rs.docs[path]
	if rs.seen[instance] == nil {
		rs.seen[instance] = map[string]int{}
	}
	last, ok := rs.seen[instance][path]
	if !ok {
		last = -1
	}
	now, shown := rs.now(), -1
	for i := len(vs) - 1; i >= 0 && shown < 0; i-- {
		v := vs[i]
		if v.instance == instance || !now.Before(v.at.Add(v.lag)) || i <= last || token >= v.lsn {
			shown = i
		}
	}
	rs.seen[instance][path] = max(last, shown)
	rs.mu.Unlock()
	switch {
	case shown == len(vs)-1:
		return false // the newest: Cosmos answers
	case shown < 0 || vs[shown].known && vs[shown].body == nil:
		writeCosmosError(w, http.StatusNotFound, "0", "NotFound",
			"Entity with the specified id does not exist in the system. (a lagging replica, emulated by the fault proxy)")
		return true
	case !vs[shown].known:
		return false // the older document is not known: Cosmos answers
	}
	var doc struct {
		ETag string `json:"_etag"`
	}
	_ = json.Unmarshal(vs[shown].body, &doc)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("etag", doc.ETag)
	h.Set("x-ms-request-charge", "1")
	h.Set(SessionHeader, "0:"+strconv.FormatInt(vs[shown].lsn, 10))
	h.Set("Content-Length", strconv.Itoa(len(vs[shown].body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(vs[shown].body)
	return true
}
