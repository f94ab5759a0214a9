package faults

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// An outage takes every request, the account read included, and nothing
// reaches Cosmos until it ends.
func TestProxyOutage(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, ProxyConfig{Upstream: up.URL})
	for _, path := range []string{"", docsPath} {
		p.SetOutage(Forbidden)
		resp, body, err := send(t, http.MethodPost, p.URL()+path, anOrder)
		if err != nil || resp.StatusCode != http.StatusForbidden || resp.Header.Get("x-ms-substatus") != "5301" {
			t.Errorf("forbidden, /%s: %v %v %s; want 403 sub-status 5301", path, resp, err, body)
		}
		p.SetOutage(Unreachable)
		if _, _, err := send(t, http.MethodPost, p.URL()+path, anOrder); err == nil {
			t.Errorf("unreachable, /%s: an answer; want the connection reset", path)
		}
	}
	if n := up.hits.Load(); n != 0 {
		t.Errorf("Cosmos saw %d requests during the outages, want 0", n)
	}
	p.SetOutage(0)
	if resp, _, err := send(t, http.MethodPost, p.URL()+docsPath, anOrder); err != nil || resp.StatusCode != http.StatusCreated {
		t.Errorf("after the outage: %v %v, want the request forwarded", resp, err)
	}
	if c := p.Counts(); c.OutageAnswers != 4 || c.Forwarded != 1 {
		t.Errorf("counts %+v, want 4 outage answers and 1 forwarded", c)
	}
}

// The schedule starts each phase when enough messages are settled and ends
// it on time, or at once when the run ends. On virtual time (the proxy,
// which listens on loopback, is started outside the bubble; the schedule
// only switches it): the first phase lasts its 100 ms exactly.
func TestOutageSchedule(t *testing.T) {
	p := startProxy(t, ProxyConfig{Upstream: newUpstream(t).URL})
	synctest.Test(t, func(t *testing.T) {
		var settled atomic.Int64 // in percent
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		phases := []Outage{{Kind: Forbidden, After: 0.2, For: 100 * time.Millisecond}, {Kind: Unreachable, After: 0.5, For: time.Hour}}
		s := StartOutages(ctx, phases, p, func() float64 { return float64(settled.Load()) / 100 }, func(string, ...any) {})
		time.Sleep(time.Minute)
		if k := OutageKind(p.outage.Load()); k != 0 {
			t.Fatalf("outage %s before any message settled", k)
		}
		settled.Store(30)
		if !WaitFor(ctxTimeout(t, 5*time.Second), func() bool { return OutageKind(p.outage.Load()) == Forbidden }) {
			t.Fatal("the first outage did not start")
		}
		settled.Store(60)
		if !WaitFor(ctxTimeout(t, 5*time.Second), func() bool { return OutageKind(p.outage.Load()) == Unreachable }) {
			t.Fatal("the second outage did not start")
		}
		time.Sleep(time.Minute)
		cancel()
		recs := s.Wait()
		if len(recs) != 2 || recs[0].End.Sub(recs[0].Start) != 100*time.Millisecond || recs[1].End.Sub(recs[1].Start) >= time.Hour {
			t.Errorf("records %+v; want the first to last its 100 ms, the second cut short of its hour by the end of the run", recs)
		}
		if k := OutageKind(p.outage.Load()); k != 0 {
			t.Errorf("outage %s after the run", k)
		}
	})
}

// A phase with Until lasts until it is closed, however long that takes,
// and a phase without a length or Until is refused. On virtual time.
func TestOutageUntilAnEvent(t *testing.T) {
	if err := (Outage{Kind: Unreachable}).Validate(); err == nil {
		t.Error("an outage without a length or an event to end it: accepted")
	}
	p := startProxy(t, ProxyConfig{Upstream: newUpstream(t).URL})
	synctest.Test(t, func(t *testing.T) {
		until := make(chan struct{})
		o := Outage{Kind: Forbidden, Until: until}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		s := StartOutages(context.Background(), []Outage{o}, p, func() float64 { return 0 }, func(string, ...any) {})
		time.Sleep(24 * time.Hour)
		if k := OutageKind(p.outage.Load()); k != Forbidden {
			t.Fatalf("outage %s after a day, want %s until the event", k, Forbidden)
		}
		close(until)
		if recs := s.Wait(); len(recs) != 1 || recs[0].End.Sub(recs[0].Start) != 24*time.Hour {
			t.Errorf("records %+v, want one of a day", recs)
		}
	})
}

// A phase due at once is on when StartOutages returns: the run's first
// delivery, which starts right after, meets it.
func TestOutageDueAtOnceStartsBeforeDelivery(t *testing.T) {
	p := startProxy(t, ProxyConfig{Upstream: newUpstream(t).URL})
	ctx, cancel := context.WithCancel(context.Background())
	s := StartOutages(ctx, []Outage{{Kind: Unreachable, After: 0, For: time.Hour}}, p, func() float64 { return 0 }, func(string, ...any) {})
	if k := OutageKind(p.outage.Load()); k != Unreachable {
		t.Errorf("outage %v when StartOutages returned, want %s", k, Unreachable)
	}
	cancel()
	if recs := s.Wait(); len(recs) != 1 || OutageKind(p.outage.Load()) != 0 {
		t.Errorf("records %+v; want the one outage, ended with the run", recs)
	}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestParseOutages(t *testing.T) {
	got, err := ParseOutages(FormatOutages(DefaultOutages))
	if err != nil || !slices.Equal(got, DefaultOutages) {
		t.Errorf("round trip of the defaults: %v, %v", got, err)
	}
	if got, err := ParseOutages("none"); err != nil || got != nil {
		t.Errorf("none: %v, %v", got, err)
	}
	for _, bad := range []string{"down@0.1:1m", "unreachable@1.5:1m", "unreachable@0.1", "403-forbidden@0.1:-1s", "unreachable:1m"} {
		if _, err := ParseOutages(bad); err == nil {
			t.Errorf("ParseOutages(%q) accepted", bad)
		}
	}
}
