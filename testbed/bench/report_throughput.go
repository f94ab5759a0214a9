package bench

import (
	"fmt"
	"sort"
)

// variantStats summarises one variant over the rounds at one latency.
type variantStats struct {
	name          string
	rates         []float64
	p50, p99      []float64 // ms
	requests      float64   // per message, all rounds
	charge        float64   // request charge (RU) per message, all rounds
	errors        int
	outcomes      Outcomes
	messages      int
	firstErr      error
	requestDetail string
	peaks         []float64
	selfCPU       []float64 // µs per message
	emuCPU        []float64
	busy          []float64 // cores kept busy by the Go process and the emulator together
}

func (lr LatencyRun) stats(v int) variantStats {
	st := variantStats{outcomes: Outcomes{}}
	var reqs, msgs int
	total := Counts{}
	for _, round := range lr.Rounds {
		ph := round[v]
		st.name = ph.Variant
		st.rates = append(st.rates, ph.Rate())
		st.p50 = append(st.p50, ms(ph.Percentile(0.5)))
		st.p99 = append(st.p99, ms(ph.Percentile(0.99)))
		st.peaks = append(st.peaks, float64(ph.Requests.Peak()))
		st.selfCPU = append(st.selfCPU, us(ph.CPUPerMessage(ph.SelfCPU)))
		if ph.EmulatorCPU > 0 {
			st.emuCPU = append(st.emuCPU, us(ph.CPUPerMessage(ph.EmulatorCPU)))
			st.busy = append(st.busy, (ph.SelfCPU+ph.EmulatorCPU).Seconds()/ph.Elapsed.Seconds())
		}
		reqs += ph.Requests.Item()
		msgs += ph.Messages
		st.errors += ph.Errors
		if st.firstErr == nil {
			st.firstErr = ph.FirstErr
		}
		for k, n := range ph.Outcomes {
			st.outcomes[k] += n
		}
		for k, n := range ph.Requests {
			total[k] += n
		}
	}
	st.messages = msgs
	if msgs > 0 {
		st.requests = float64(reqs) / float64(msgs)
		st.charge = total.Charge() / float64(msgs)
		st.requestDetail = total.Detail(msgs)
	}
	return st
}

// ratios returns num/den within each round.
func (lr LatencyRun) ratios(num, den int) []float64 {
	var out []float64
	for _, round := range lr.Rounds {
		out = append(out, round[num].Rate()/round[den].Rate())
	}
	return out
}

// ratio is one row of the ratio table: a question and the figure that
// answers it.
type ratio struct {
	num, den int
	name     string
	question string
	target   string
}

func (r *Report) ratioRows() []ratio {
	s := r.Settings
	return []ratio{
		{VarHandlerBatch, VarHandlerSingle,
			fmt.Sprintf("`ProcessOrderBatch` (batches of %d, one at a time) ÷ `ProcessOrder` (%d at once)", s.BatchSize, s.Concurrency),
			"Does batch mode pay for itself?", "≥ 1 at 20 ms"},
		{VarHandlerSingle, VarPlainBatch, "`ProcessOrder` ÷ plain transactional batch loop (the same two documents)",
			"What does the handler add to the Cosmos call it makes?", "≥ 0.9"},
		{VarHandlerSingle, VarPlainCreate, "`ProcessOrder` ÷ plain create loop (one document, no outbox)",
			"What does the consumer cost against the simplest writer of orders?", "≥ 0.9"},
		{VarHandlerDirect, VarPlainBatch, "handler in process, no HTTP hop ÷ plain transactional batch loop",
			"How much of that is the loopback HTTP hop?", ""},
		{VarPlainBatch, VarPlainCreate, "plain transactional batch loop ÷ plain create loop",
			"What does writing the outbox event in the same batch cost?", ""},
		{VarHandlerBatch, VarPlainBatchWide, fmt.Sprintf("`ProcessOrderBatch` ÷ plain transactional batch loop at its width (%d at once)", r.batchWidth()),
			"How close does batch mode come to the SDK at the same width?", ""},
	}
}

func (r *Report) batchWidth() int {
	s := r.Settings
	return s.BatchConcurrency * min(s.BatchSize, s.BatchParallelism)
}

func (r *Report) throughput(p func(string, ...any)) {
	if len(r.Throughput) == 0 {
		return
	}
	s := r.Settings
	p("## Throughput: single, batch, and a plain azcosmos loop, at 0, 5 and 20 ms from Cosmos")
	p("")
	p("Each round writes %d new orders with each variant at each latency, after an untimed warm-up", s.Messages)
	p("that opens the connections. The latency is the distance to Cosmos: at 0 ms the clients talk to")
	p("the emulator directly; otherwise to a delay proxy in this process (`chaos.ProxyConfig.Latency`)")
	p("that holds every answer back that long, so a request holds its connection for the whole round")
	p("trip as it would against an account in the same region (a few ms) or farther (20 ms). Variants:")
	p("")
	p("- **plain loops** call azcosmos directly (`testbed/bench/throughput.go`, measurement only; it and")
	p("  `testbed/hostemu` alone import azcosmos outside package cosmos, `TestProductionImportsOfAzcosmos`), with a")
	p("  client from the store's own constructor `cosmos.NewClient`. They write the bytes the handler")
	p("  writes: the order document as `orders.Order.AcceptanceDocuments` builds it, and in the")
	p("  transactional batch loop its outbox event too;")
	p("- **`ProcessOrder`**: host-format one-message invocations over loopback HTTP to `handler.NewServer`,")
	p("  %d at once (host.json `maxConcurrentCalls`); **in process**: the same handed to `ServeHTTP`;", s.Concurrency)
	p("- **`ProcessOrderBatch`**: invocations of %d messages, %d at a time, as the host's Service Bus", s.BatchSize, s.BatchConcurrency)
	p("  listener sends them (it waits for one batch to settle before it receives the next), with")
	p("  `BATCH_PARALLELISM` %d: %d messages of a batch written at once.", s.BatchParallelism, min(s.BatchSize, s.BatchParallelism))
	p("")
	p("The handler logs one JSON line per message as in production (into `io.Discard`). Requests are")
	p("prepared before the clock starts. Latency is per operation (one invocation or one SDK call).")
	p("CPU per message is the user + system time of the measuring Go process (load generator, handler,")
	p("SDK and delay proxy together) and of the emulator's process over the timed phase")
	p("(`/proc/<pid>/stat`, 10 ms ticks), divided by the messages.")
	p("")
	r.throughputSummary(p)
	r.boundNote(p)
	r.ratioTable(p)
	r.batchNote(p)
	for _, lr := range r.Throughput {
		r.latencyTable(p, lr)
	}
	r.cpuNote(p)
}

// cpuNote explains the 0 ms figures by what bound them in this run: the two
// cores when the Go process and the emulator kept them busy, other work on
// the machine when they did not.
func (r *Report) cpuNote(p func(string, ...any)) {
	lr := r.Throughput[0]
	if lr.Latency > 0 {
		return
	}
	busy := lr.stats(VarHandlerSingle).busy
	if len(busy) == 0 {
		return
	}
	b := medianOf(busy)
	if b < 0.8*float64(r.Machine.Cores) {
		p("At 0 ms the Go process and the emulator kept only %.2f of %d cores busy (median, `ProcessOrder`):", b, r.Machine.Cores)
		p("other work on the shared machine took the rest (see the load average above), so the 0 ms figures")
		p("say little in this run; the 5 and 20 ms ones, bound by the simulated latency, say more.")
		p("")
		return
	}
	p("Why the handler stays below the plain loops at 0 ms: the load generator, the handler, the SDK")
	p("and the emulator share %d cores and kept %.2f of them busy (median, `ProcessOrder`). Throughput", r.Machine.Cores, b)
	p("is then the cores divided by the CPU one message costs on both sides, so every microsecond the")
	p("handler spends (decoding the host's envelope, validating and fingerprinting the order, building")
	p("two documents, one log line and the answer: the in-process figures below; plus an HTTP server")
	p("and client on the same cores) is taken from the emulator. With Cosmos a few milliseconds away")
	p("the same CPU is spent while requests wait, and the ratios move towards 1: the 5 and 20 ms")
	p("columns are the ones that predict a deployment, where Cosmos runs on its own machines.")
	p("")
}

// throughputSummary is every variant's median messages/s at every latency.
func (r *Report) throughputSummary(p func(string, ...any)) {
	r.latencyColumns(p, "| variant, messages/s (median of the rounds) |", "|---|", "")
	for v := range numVariants {
		row := "| " + r.Throughput[0].stats(v).name + " |"
		for _, lr := range r.Throughput {
			row += fmt.Sprintf(" %.0f |", medianOf(lr.stats(v).rates))
		}
		p("%s", row)
	}
	p("")
}

// boundNote says how close ProcessOrder came, at each latency, to what its
// requests in flight allow there: near it, the figures are bound by the
// latency as in a deployment; far below it, by the CPU of the shared machine.
func (r *Report) boundNote(p func(string, ...any)) {
	s := r.Settings
	for _, lr := range r.Throughput {
		if lr.Latency <= 0 {
			continue
		}
		bound := float64(s.Concurrency) / lr.Latency.Seconds()
		got := medianOf(lr.stats(VarHandlerSingle).rates)
		what := "bound by the latency, as in a deployment"
		if got < 0.7*bound {
			what = "held down by the CPU of the shared machine as well as by the latency"
		}
		p("- At %s, %d requests in flight allow at most %.0f messages/s; `ProcessOrder` reached %.0f (%.0f %%): %s.",
			latencyName(lr.Latency), s.Concurrency, bound, got, 100*got/bound, what)
	}
	p("")
}

// latencyColumns writes a table's header: the leading columns, one column
// per latency, then the trailing one if any.
func (r *Report) latencyColumns(p func(string, ...any), head, rule, last string) {
	for _, lr := range r.Throughput {
		head += " " + latencyName(lr.Latency) + " |"
		rule += "---:|"
	}
	if last != "" {
		head += " " + last + " |"
		rule += "---|"
	}
	p("%s", head)
	p("%s", rule)
}

func medianOf(s []float64) float64 {
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	return median(c)
}

func (r *Report) ratioTable(p func(string, ...any)) {
	r.latencyColumns(p, "| question | ratio (within each round, then the median; range) |", "|---|---|", "target")
	for _, q := range r.ratioRows() {
		row := "| " + q.question + " | " + q.name + " |"
		for _, lr := range r.Throughput {
			row += " " + spread(lr.ratios(q.num, q.den), "%.2f") + " |"
		}
		p("%s %s |", row, q.target)
	}
	p("")
	far := r.Throughput[len(r.Throughput)-1]
	m := medianOf(far.ratios(VarHandlerBatch, VarHandlerSingle))
	verdict := "at least as fast as"
	if m < 1 {
		verdict = "slower than"
	}
	p("At %s, batch mode was %s single messages in this run (median ratio %.2f).", latencyName(far.Latency), verdict, m)
	p("")
	p("Which figure answers which question: **batch ÷ single** tells whether to enable `ProcessOrderBatch`")
	p("(docs/batch-mode.md weighs it against the batch's failure blast radius and lock limit);")
	p("**`ProcessOrder` ÷ plain transactional batch** is what the handler itself costs, since both write")
	p("the same two documents per order; **÷ plain create** compares with the simplest writer one could")
	p("build, without the outbox; the in-process row separates the loopback HTTP hop. Read the 0 ms")
	p("column for CPU cost on a saturated machine and the 5 and 20 ms columns for what a deployment")
	p("sees, where every write waits on the network.")
	p("")
}

func (r *Report) batchNote(p func(string, ...any)) {
	s := r.Settings
	p("Both `ProcessOrder` and `ProcessOrderBatch` make one Cosmos request per new order (every message")
	p("is its own partition, so each gets its own transactional batch). What decides their throughput is")
	p("how many requests are in flight: %d invocations for `ProcessOrder`, %d messages of the one batch", s.Concurrency, min(s.BatchSize, s.BatchParallelism))
	p("for `ProcessOrderBatch` (the peak column below), which waits for its slowest message before the")
	p("host sends the next batch. What a batch saves is the per-invocation work: one HTTP request and")
	single, batch := r.microPerMessage("BenchmarkProcessOrderInProcess/new"), r.microPerMessage("BenchmarkProcessOrderBatchInProcess")
	if single > 0 && batch > 0 {
		p("one envelope per %d messages, %s against %s of handler time per message in process (below).", s.BatchSize, dur(single), dur(batch))
	} else {
		p("one envelope per %d messages.", s.BatchSize)
	}
	p("")
}

func (r *Report) latencyTable(p func(string, ...any), lr LatencyRun) {
	where := "the emulator directly"
	if lr.Latency > 0 {
		where = fmt.Sprintf("every answer held back %s by the delay proxy", latencyName(lr.Latency))
	}
	p("### At %s (%s)", latencyName(lr.Latency), where)
	p("")
	p("| variant | messages/s, median (range) | p50 latency ms | p99 latency ms | CPU µs per message: Go process | CPU µs per message: emulator | cores busy (both) | Cosmos requests per message | Cosmos requests in flight, peak | errors | outcomes |")
	p("|---|---|---|---|---|---|---|---:|---|---:|---|")
	for v := range numVariants {
		st := lr.stats(v)
		out := st.outcomes.String()
		if out == "" {
			out = "–"
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %d | %s |", st.name, spread(st.rates, "%.0f"), spread(st.p50, "%.1f"), spread(st.p99, "%.1f"),
			spread(st.selfCPU, "%.0f"), spread(st.emuCPU, "%.0f"), spread(st.busy, "%.2f"), st.requests, spread(st.peaks, "%.0f"), st.errors, out)
		if st.firstErr != nil {
			p("")
			p("First error of %s: `%v`", st.name, st.firstErr)
			p("")
		}
	}
	p("")
	if lr.Latency > 0 {
		p("The Go process's CPU includes the delay proxy's (one more HTTP server and client per request).")
		p("")
	}
}
