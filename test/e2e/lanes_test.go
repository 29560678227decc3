//go:build e2e

package e2e

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Lanes run the suite's tests two at a time on the 2-core host: each TCG
// guest keeps one core busy, and the tests that touch no host service
// (their storage stack is inside their own guest) overlap with those that
// share the one Cinder, tgtd, Keystone, Ironic and Barbican. Within a lane
// tests run one at a time, in a fixed order, so runs are reproducible.
// BRICK_E2E_LANES=1 runs every test one after the other, in source order
// (docs/testing.md).

// laneID names a lane.
type laneID int

const (
	// laneServices: every test that uses a host service, the shared
	// guest of runSharedGuest, or host state, and the fast host-only ones.
	laneServices laneID = iota
	// laneGuestOnly: tests whose whole world is their own guest.
	laneGuestOnly
)

// lanes are the suite's two lanes; guest-only runs its longest tests
// first, so a short one, not a long one, ends the run.
var lanes = [...]*testLane{
	laneServices:  {name: "services"},
	laneGuestOnly: {name: "guest-only", first: []string{"TestRBD", "TestISCSI", "TestFC", "TestGuestStorageStack", "TestNFS"}},
}

// lanesDefault is BRICK_E2E_LANES when unset: one lane until a whole run
// in two has passed.
const lanesDefault = "1"

// lanesOn: the switch of docs/testing.md: BRICK_E2E_LANES=2 runs two
// lanes, 1 one.
func lanesOn() bool {
	v := os.Getenv("BRICK_E2E_LANES")
	if v == "" {
		v = lanesDefault
	}
	return v != "1"
}

// lane is the first line of every top-level test: it queues the test in
// lane id, marks it parallel, and returns once the lane is the test's; the
// lane passes on when the test and all its cleanups have ended.
func lane(t *testing.T, id laneID) {
	if !lanesOn() {
		return
	}
	l := lanes[id]
	// Top-level tests start one at a time until they call Parallel, so
	// tickets follow the source order.
	ticket := l.register(t.Name())
	t.Parallel()
	waited := l.acquire(ticket)
	start := time.Now()
	t.Cleanup(func() {
		// go test's "--- PASS (Ns)" overstates the test's time by its wait
		// for the lane; test/e2e.sh's times table reads this line instead.
		fmt.Printf("=== LANE %s %s ran %.2fs (waited %.2fs)\n", l.name, t.Name(), time.Since(start).Seconds(), waited.Seconds())
		l.release(ticket)
	})
}

// testLane runs its tests one at a time: the lowest-ranked waiting ticket
// goes next (tests named in first by their place there, then the rest in
// registration order).
type testLane struct {
	name  string
	first []string

	mu      sync.Mutex
	cond    *sync.Cond
	tickets []laneTicket // every test registered, in registration order
	busy    bool
}

type laneTicket struct {
	name string
	done bool
}

func (l *testLane) register(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cond == nil {
		l.cond = sync.NewCond(&l.mu)
	}
	l.tickets = append(l.tickets, laneTicket{name: name})
	return len(l.tickets) - 1
}

// rank orders ticket i within the lane.
func (l *testLane) rank(i int) int {
	if k := slices.Index(l.first, l.tickets[i].name); k >= 0 {
		return k
	}
	return len(l.first) + i
}

// next is the ticket to run next: the lowest-ranked one not done. All
// tickets are registered before any test resumes from Parallel.
func (l *testLane) next() int {
	best := -1
	for i, tk := range l.tickets {
		if !tk.done && (best < 0 || l.rank(i) < l.rank(best)) {
			best = i
		}
	}
	return best
}

// acquire waits until ticket is next and the lane free, and returns how
// long it waited.
func (l *testLane) acquire(ticket int) time.Duration {
	start := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.busy || l.next() != ticket {
		l.cond.Wait()
	}
	l.busy = true
	return time.Since(start)
}

// release passes the lane on.
func (l *testLane) release(ticket int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tickets[ticket].done = true
	l.busy = false
	l.cond.Broadcast()
}

// TestLanesCoverEveryTest: every top-level test starts with lane(t, ...);
// one that does not would run before all the others instead of in a lane.
func TestLanesCoverEveryTest(t *testing.T) {
	lane(t, laneServices)
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			if !startsWithLane(fn) {
				t.Errorf("%s: %s does not start with lane(t, ...)", f, fn.Name.Name)
			}
		}
	}
}

func startsWithLane(fn *ast.FuncDecl) bool {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return false
	}
	st, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := st.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := call.Fun.(*ast.Ident)
	return ok && id.Name == "lane"
}

// TestLaneOrder: a lane runs its tests one at a time, those named in first
// by their place there, then the rest in registration order, however the
// waiting goroutines are scheduled.
func TestLaneOrder(t *testing.T) {
	lane(t, laneServices)
	l := &testLane{name: "check", first: []string{"TestLong", "TestMid"}}
	names := []string{"TestA", "TestMid", "TestB", "TestLong", "TestC"}
	tickets := make([]int, len(names))
	for i, n := range names {
		tickets[i] = l.register(n)
	}
	var (
		mu      sync.Mutex
		order   []string
		running int
		wg      sync.WaitGroup
	)
	for i := len(names) - 1; i >= 0; i-- { // started in reverse, to be sure
		wg.Go(func() {
			l.acquire(tickets[i])
			mu.Lock()
			running++
			if running > 1 {
				t.Errorf("%s runs beside another test of its lane", names[i])
			}
			order = append(order, names[i])
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			l.release(tickets[i])
		})
	}
	wg.Wait()
	want := []string{"TestLong", "TestMid", "TestA", "TestB", "TestC"}
	if !slices.Equal(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
}
