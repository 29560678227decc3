package testbed

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// volumeLog is the volumes one Cinder value created, so the isolation check
// looks at this process's volumes only (another suite may share Cinder).
type volumeLog struct {
	mu  sync.Mutex
	ids []string
}

func (l *volumeLog) add(id string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.ids, id) {
		l.ids = append(l.ids, id)
	}
}

func (l *volumeLog) list() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ids)
}

func (l *volumeLog) forget(id string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ids = slices.DeleteFunc(l.ids, func(s string) bool { return s == id })
}

// heldStatuses are volume states that a finished test must not hand on: the
// volume is (being) attached somewhere, or its export could not be removed.
var heldStatuses = []string{"attaching", "in-use", "detaching", "reserved", "error_deleting", "maintenance"}

// isolationSettle is how long Leftovers lets things settle (a session of a
// guest that just powered off, a delete in progress) before reporting.
const isolationSettle = 15 * time.Second

// Leftovers reports what the volumes this value created still hold on the
// shared services: a volume attached or half-detached, a tgtd target with an
// initiator session (I_T nexus). A test that shares Cinder and tgtd with the
// next one must leave none; e2e's needCinder checks after each test's own
// cleanups. Volumes Cinder no longer knows are forgotten.
func (c *Cinder) Leftovers(ctx context.Context) ([]string, error) {
	deadline := time.Now().Add(isolationSettle)
	for {
		left, err := c.leftoversOnce(ctx)
		if err != nil || len(left) == 0 || time.Now().After(deadline) {
			return left, err
		}
		select {
		case <-ctx.Done():
			return left, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (c *Cinder) leftoversOnce(ctx context.Context) ([]string, error) {
	nexus, err := tgtNexus(ctx)
	if err != nil {
		return nil, err
	}
	var left []string
	for _, id := range c.volumes.list() {
		if n := nexus[c.TargetIQN(id)]; n > 0 {
			left = append(left, fmt.Sprintf("tgtd target of volume %s has %d initiator session(s)", id, n))
		}
		v, err := c.GetVolume(ctx, id)
		switch {
		case StatusOf(err) == 404:
			c.volumes.forget(id)
		case err != nil:
			return nil, err
		case slices.Contains(heldStatuses, v.Status):
			left = append(left, fmt.Sprintf("volume %s (%s) is %s, attach_status %s", id, v.Name, v.Status, v.AttachStatus))
		}
	}
	return left, nil
}

// tgtNexus asks the host's tgtd for its targets' initiator sessions. No
// tgtd (the test stopped it, or Cinder runs without one) means none.
func tgtNexus(ctx context.Context) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tgtadm", "--lld", "iscsi", "--op", "show", "--mode", "target").Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("testbed: tgtadm show targets: %w", ctx.Err())
		}
		return map[string]int{}, nil
	}
	return parseTgtNexus(string(out)), nil
}

// parseTgtNexus counts the "I_T nexus: N" entries under each "Target N: IQN"
// of tgtadm's target listing.
func parseTgtNexus(out string) map[string]int {
	m := map[string]int{}
	target := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Target ") {
			if _, iqn, ok := strings.Cut(line, ": "); ok {
				target = strings.TrimSpace(iqn)
				m[target] += 0
			}
			continue
		}
		if target != "" && strings.HasPrefix(strings.TrimSpace(line), "I_T nexus: ") {
			m[target]++
		}
	}
	return m
}
