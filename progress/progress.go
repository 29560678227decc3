package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/brick-storage/brick/ident"
)

// redrawEvery is how often the elapsed time on the status line moves.
const redrawEvery = 250 * time.Millisecond

// Status is one command's live status line: "brick: OP VOLUME: STEP
// (DETAIL) 12s". Live draws it in place on a terminal; Steps prints one
// line per step (brick -v). With neither it does nothing, so callers need
// not check. Safe for concurrent use.
type Status struct {
	mu      sync.Mutex
	w       io.Writer
	live    bool
	steps   bool
	width   int
	op      string
	volume  string
	step    string
	detail  string
	start   time.Time
	stepAt  time.Time
	drawn   bool
	stop    chan struct{}
	stopped chan struct{}
}

// Options say what a Status shows.
type Options struct {
	// Live draws the status line in place; set it only when w is a
	// terminal and nothing reads stderr as data.
	Live bool
	// Steps prints a line when each step starts.
	Steps bool
}

// New returns a Status writing to w (stderr).
func New(w io.Writer, o Options) *Status {
	return &Status{w: w, live: o.Live, steps: o.Steps, width: Width(w)}
}

// Begin starts reporting operation op on volume; End stops it.
func (s *Status) Begin(op, volume string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.op, s.volume, s.start, s.stepAt = op, volume, time.Now(), time.Now()
	if !s.live || s.stop != nil {
		return
	}
	s.stop, s.stopped = make(chan struct{}), make(chan struct{})
	go s.loop(s.stop, s.stopped)
}

func (s *Status) loop(stop, stopped chan struct{}) {
	defer close(stopped)
	t := time.NewTicker(redrawEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.mu.Lock()
			s.draw()
			s.mu.Unlock()
		}
	}
}

// Step says a new step started.
func (s *Status) Step(name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == s.step {
		return
	}
	s.step, s.detail, s.stepAt = name, "", time.Now()
	if s.steps {
		s.clear()
		fmt.Fprintf(s.w, "brick: %s: %s (at %s)\n", s.subject(), name, elapsed(s.start))
	}
	s.draw()
}

// EndStep says the current step finished before the next began: what
// comes between (a wait for a lock) shows as the operation's own detail.
func (s *Status) EndStep() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step, s.detail = "", ""
	s.draw()
}

// Detail says what the current step is doing now (an iSCSI login, a wait
// for a device).
func (s *Status) Detail(text string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.detail = text
	s.draw()
}

// End erases the status line and stops redrawing it.
func (s *Status) End() {
	if s == nil {
		return
	}
	s.mu.Lock()
	stop, stopped := s.stop, s.stopped
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	s.op = ""
}

// Write writes p (whole lines: a log line, a note) to the stream without
// mixing it into the status line: the line is erased, p written, and the
// line drawn again.
func (s *Status) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	n, err := s.w.Write(p)
	s.draw()
	return n, err
}

func (s *Status) subject() string {
	if s.volume == "" {
		return s.op
	}
	return s.op + " " + s.volume
}

// draw redraws the line; the caller holds mu.
func (s *Status) draw() {
	if !s.live || s.op == "" || s.step == "" && s.detail == "" {
		return
	}
	line := "brick: " + s.subject() + ":"
	if s.step != "" {
		line += " " + s.step
	}
	if s.detail != "" {
		line += " (" + s.detail + ")"
	}
	line = strings.Map(printable, line) + " " + elapsed(s.start)
	if s.width > 1 {
		line = Truncate(line, s.width-1, "…")
	}
	fmt.Fprint(s.w, "\r\x1b[K"+line)
	s.drawn = true
}

// clear erases a drawn line; the caller holds mu.
func (s *Status) clear() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
}

func elapsed(since time.Time) string {
	return time.Since(since).Truncate(time.Second).String()
}

// printable keeps a volume name or server text from driving the terminal.
func printable(r rune) rune {
	if ident.IsControl(r) {
		return '?'
	}
	return r
}
